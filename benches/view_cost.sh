#!/usr/bin/env bash
# What a change costs the server, and what its answer weighs, as a game grows: Play and Undo
# in turn (`chess-load --rpc play-undo`) at ply 1 and at ply 300, in the basic and the full
# view, one sled server (durability fsync), 8 callers, raw client (answers not decoded,
# their bytes counted). Server CPU per call is read from /proc (user + system), with a
# set-up-only run (games brought to the ply, no measured calls) taken off; Health/Check's
# cost per call is measured beside it as the yardstick.
#
# Usage: benches/view_cost.sh [seconds per cell, default 5] [rounds, default 2]
set -euo pipefail

seconds=${1:-5}
rounds=${2:-2}
callers=8
cd "$(dirname "$0")/.."
cargo build --release --bins --quiet
server_bin=$PWD/target/release/chess-server
load_bin=$PWD/target/release/chess-load
work=$(mktemp -d)
port=$((20000 + RANDOM % 20000))
target=http://127.0.0.1:$port
server_pid=
cleanup() {
    if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

"$server_bin" --listen "127.0.0.1:$port" --data-dir "$work/data" --durability fsync >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 150); do
    if "$load_bin" --target "$target" --rpc health --concurrency 1 --duration 0.01 --warmup 0 >/dev/null 2>&1; then
        break
    fi
    sleep 0.2
done

# The server's CPU seconds (user + system) so far.
server_cpu() {
    local f
    read -r -a f <"/proc/$server_pid/stat"
    echo "scale=4; (${f[13]} + ${f[14]}) / $(getconf CLK_TCK)" | bc
}
# load SECONDS ARGS...: one chess-load run; prints "CPU_SECONDS OK_CALLS BYTES_PER_ANSWER".
load() {
    local secs=$1 c0 line c1
    shift
    c0=$(server_cpu)
    line=$("$load_bin" --target "$target" --concurrency $callers --client raw --warmup 0 --duration "$secs" "$@")
    c1=$(server_cpu)
    echo "$(echo "$c1 - $c0" | bc) $(echo "$line" | grep -o ' ok=[0-9]*' | cut -d= -f2) $(echo "$line" | grep -o 'bytes/answer=[0-9]*' | cut -d= -f2)"
}
# cell LABEL ARGS...: server microseconds per call, set-up taken off.
cell() {
    local label=$1 setup run
    shift
    read -r -a setup <<<"$(load 0.01 "$@")"
    read -r -a run <<<"$(load "$seconds" "$@")"
    echo "$label | $(echo "scale=1; 1000000 * (${run[0]} - ${setup[0]}) / (${run[1]} - ${setup[1]})" | bc) us/call | ${run[2]} bytes/answer | $((run[1] - setup[1])) calls"
}

echo "# $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $callers callers, ${seconds}s per cell, $rounds rounds"
for round in $(seq "$rounds"); do
    echo "## round $round"
    cell "Health/Check" --rpc health
    for view in basic full; do
        for ply in 1 300; do
            cell "Play+Undo, $view view, ply $ply" --rpc play-undo --view "$view" --at-ply "$ply"
        done
    done
done
