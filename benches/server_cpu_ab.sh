#!/usr/bin/env bash
# Two server builds compared in one interleaved run, by the server's own CPU per call:
# each round starts each build on a fresh data directory, runs chess-load's RPC at 64
# callers, and reads the server's user+system ticks from /proc before and after. Prints
# one line per cell (CPU µs per call, throughput, p99, resident memory at the end) and
# the means per build.
#
# Usage: benches/server_cpu_ab.sh BEFORE_SERVER AFTER_SERVER [rpc] [seconds] [rounds]
# The load generator is this tree's target/release/chess-load (build it first:
# `cargo build --release --bins`).
set -euo pipefail

before=$1
after=$2
rpc=${3:-play}
seconds=${4:-6}
rounds=${5:-3}
cd "$(dirname "$0")/.."
load_bin=$PWD/target/release/chess-load
work=$(mktemp -d)
pid=
cleanup() {
    if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
ticks_per_s=$(getconf CLK_TCK)

# ticks PID: the process's user+system CPU, in clock ticks.
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# measure BIN LABEL: one cell; prints "LABEL us_per_call line".
measure() {
    local bin=$1 label=$2 port t0 t1 out ok rss
    port=$((50900 + RANDOM % 500))
    rm -rf "$work/data"
    "$bin" --listen "127.0.0.1:$port" --data-dir "$work/data" >"$work/$label.log" 2>&1 &
    pid=$!
    sleep 1.5
    t0=$(ticks "$pid")
    out=$("$load_bin" --target "http://127.0.0.1:$port" --rpc "$rpc" --concurrency 64 \
        --duration "$seconds" --warmup 1 2>&1 | tail -1)
    t1=$(ticks "$pid")
    rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
    kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
    ok=$(grep -oE 'ok=[0-9]+' <<<"$out" | cut -d= -f2)
    awk -v t="$((t1 - t0))" -v hz="$ticks_per_s" -v ok="$ok" -v label="$label" -v rss="$rss" \
        -v rest="$(grep -oE 'throughput=[^ ]+ p50=[^ ]+ p99=[^ ]+' <<<"$out")" \
        'BEGIN { printf "%s %.1f us/call %s rss=%d MB\n", label, t / hz * 1e6 / ok, rest, rss / 1024 }'
}

results=$work/results
for round in $(seq "$rounds"); do
    if [ $((round % 2)) -eq 1 ]; then order="before after"; else order="after before"; fi
    for which in $order; do
        if [ "$which" = before ]; then bin=$before; else bin=$after; fi
        measure "$bin" "$which" | tee -a "$results"
    done
done
awk '{ sum[$1] += $2; n[$1]++ } END {
    printf "mean CPU per call: before %.1f us, after %.1f us, after/before %.3f\n",
        sum["before"] / n["before"], sum["after"] / n["after"],
        (sum["after"] / n["after"]) / (sum["before"] / n["before"]) }' "$results"
