#!/usr/bin/env bash
# Server instructions per call, two server builds compared in one interleaved run: for each
# round and each build, chess-server runs under callgrind, and the counters are zeroed before
# and dumped after each load (64 callers, one connection, decoding client) of Health/Check,
# LegalMoves by game_id and by FEN (a FEN no call used before, so computed), and Play; a
# set-up-only run (connecting, one game per caller) is taken off. Instruction counts repeat
# to within about 1% on a busy machine, where req/s do not.
#
# Then the spectator path: `watch` is one game with 16 WatchGame streams and 1000 changes
# played on it (examples/watch_load.rs), instructions per change (each sent to 16 spectators).
#
# Usage: benches/server_instructions_ab.sh BEFORE_SERVER AFTER_SERVER [seconds] [rounds]
# The load generators are this tree's target/release/chess-load and
# target/release/examples/watch_load (the same for both builds; build them first:
# `cargo build --release --bins --example watch_load`). Needs valgrind (callgrind_control).
set -euo pipefail

before=$1
after=$2
seconds=${3:-4}
rounds=${4:-2}
callers=64
cd "$(dirname "$0")/.."
load_bin=target/release/chess-load
work=$(mktemp -d)
server_pid=
cleanup() {
    if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

total_of() { awk '/^(summary|totals):/ {print $2; exit}' "$1"; }
ok_of() { grep -o 'ok=[0-9]*' | head -1 | cut -d= -f2; }

measure() { # server_bin label round
    local bin=$1 label=$2 round=$3 port target
    port=$((20000 + RANDOM % 20000))
    target=http://127.0.0.1:$port
    valgrind --tool=callgrind --callgrind-out-file="$work/server.%p" \
        "$bin" --listen "127.0.0.1:$port" --data-dir "$work/data-$label-$round" >"$work/$label.log" 2>&1 &
    server_pid=$!
    for _ in $(seq 300); do
        if "$load_bin" --target "$target" --rpc health --concurrency 1 --duration 0.01 --warmup 0 >/dev/null 2>&1; then
            break
        fi
        sleep 0.2
    done
    run() { # kind seconds -> "ok instructions"
        local out ok
        callgrind_control -z "$server_pid" >/dev/null
        out=$("$load_bin" --target "$target" --rpc "$1" --client decode --concurrency $callers \
            --duration "$2" --warmup 0 2>/dev/null)
        ok=$(echo "$out" | ok_of)
        callgrind_control -d "$server_pid" >/dev/null
        sleep 1
        echo "$ok $(total_of "$(ls -t "$work"/server."$server_pid".* | head -1)")"
    }
    watch_run() { # events -> "ok instructions"
        local out ok
        callgrind_control -z "$server_pid" >/dev/null
        out=$(target/release/examples/watch_load "$target" 16 "$1" 2>/dev/null)
        ok=$(echo "$out" | ok_of)
        callgrind_control -d "$server_pid" >/dev/null
        sleep 1
        echo "$ok $(total_of "$(ls -t "$work"/server."$server_pid".* | head -1)")"
    }
    local setup line=""
    for kind in health legal-moves-game legal-moves-fen-miss play; do
        read -r _ setup <<<"$(run "$kind" 0.01)"
        read -r ok total <<<"$(run "$kind" "$seconds")"
        line="$line $kind=$(((total - setup) / ok))"
    done
    read -r setup_ok setup <<<"$(watch_run 2)"
    read -r ok total <<<"$(watch_run 1002)"
    line="$line watch=$(((total - setup) / (ok - setup_ok)))"
    kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=
    echo "round=$round build=$label$line"
}

for round in $(seq "$rounds"); do
    measure "$before" before "$round"
    measure "$after" after "$round"
done
