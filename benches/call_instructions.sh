#!/usr/bin/env bash
# Instructions per call, counted by callgrind: the server's and the load generator's user-space
# work for Health/Check and LegalMoves, separately. Unlike req/s on a shared two-core machine
# (which swings +-20% from one minute to the next) these counts repeat to within 1%, so they
# show where a LegalMoves call's cost goes: the server, or the client decoding the answer.
#
# Usage: benches/call_instructions.sh [seconds per run, default 10]
# Needs valgrind (callgrind_control) and the release binaries (built here). Kernel time
# (syscalls, TCP, task switches) is not counted: it is the same kind of cost for every RPC.
set -euo pipefail

seconds=${1:-10}
callers=64
cd "$(dirname "$0")/.."
cargo build --release --bins --quiet
server_bin=target/release/chess-server
load_bin=target/release/chess-load
work=$(mktemp -d)
port=$((20000 + RANDOM % 20000))
target=http://127.0.0.1:$port
server_pid=
cleanup() {
    if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

# Waits until the server answers a health check (valgrind makes start-up slow).
wait_ready() {
    for _ in $(seq 300); do
        if "$load_bin" --target "$target" --rpc health --concurrency 1 --duration 0.01 --warmup 0 >/dev/null 2>&1; then
            return 0
        fi
        sleep 0.2
    done
    echo "the server did not start" >&2
    exit 1
}

# The instruction total callgrind wrote to a profile.
total_of() { awk '/^(summary|totals):/ {print $2; exit}' "$1"; }
# Successful calls of a chess-load run, from its output line.
ok_of() { grep -o 'ok=[0-9]*' | head -1 | cut -d= -f2; }

# Client side: chess-load under callgrind against a native server. A run of almost no measured
# time gives the set-up cost (connecting, one game per caller, six moves each), taken off.
"$server_bin" --listen "127.0.0.1:$port" --data-dir "$work/native" >"$work/native.log" 2>&1 &
server_pid=$!
wait_ready
client_run() { # kind client seconds -> "ok instructions"
    local out ok
    out=$(valgrind --tool=callgrind --callgrind-out-file="$work/client.out" \
        "$load_bin" --target "$target" --rpc "$1" --client "$2" --concurrency $callers \
        --duration "$3" --warmup 0 2>/dev/null)
    ok=$(echo "$out" | ok_of)
    echo "$ok $(total_of "$work/client.out")"
}
read -r _ client_setup <<<"$(client_run health decode 0.01)"
declare -A client
for kind in health legal-moves-game legal-moves-fen; do
    for mode in decode raw; do
        read -r ok total <<<"$(client_run $kind $mode "$seconds")"
        client[$kind.$mode]=$(((total - client_setup) / ok))
    done
done
kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=

# Server side: chess-server under callgrind, counters zeroed before each run and dumped after
# it; the same set-up-only run gives the set-up cost.
valgrind --tool=callgrind --callgrind-out-file="$work/server.%p" \
    "$server_bin" --listen "127.0.0.1:$port" --data-dir "$work/valgrind" >"$work/valgrind.log" 2>&1 &
server_pid=$!
wait_ready
server_run() { # kind seconds -> "ok instructions"
    local out ok
    callgrind_control -z "$server_pid" >/dev/null
    out=$("$load_bin" --target "$target" --rpc "$1" --client decode --concurrency $callers \
        --duration "$2" --warmup 0 2>/dev/null)
    ok=$(echo "$out" | ok_of)
    callgrind_control -d "$server_pid" >/dev/null
    sleep 1
    echo "$ok $(total_of "$(ls -t "$work"/server."$server_pid".* | head -1)")"
}
read -r _ server_setup <<<"$(server_run health 0.01)"
declare -A server
for kind in health legal-moves-game legal-moves-fen; do
    read -r ok total <<<"$(server_run $kind "$seconds")"
    server[$kind]=$(((total - server_setup) / ok))
done

echo "| $callers callers, one connection | server | client, decoding | client, raw |"
echo "| --- | ---: | ---: | ---: |"
for kind in health legal-moves-game legal-moves-fen; do
    echo "| $kind | ${server[$kind]} | ${client[$kind.decode]} | ${client[$kind.raw]} |"
done
