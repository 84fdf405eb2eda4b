#!/usr/bin/env bash
# Durable Play (sled, --durability fsync) through the real server, two server builds
# compared in one interleaved run (issue 29: the commit ledger's cost). Each round starts
# each build on a fresh data directory and runs chess-load's Play at 64 callers over 2
# connections; rounds alternate which build goes first. Medians and the after/before ratio
# at the end.
#
# Usage: benches/ledger_ab.sh BEFORE_SERVER AFTER_SERVER [seconds] [rounds]
# The load generator is this tree's target/release/chess-load (build it first:
# `cargo build --release --bins`).
set -euo pipefail

before=$1
after=$2
seconds=${3:-10}
rounds=${4:-5}
callers=64
cd "$(dirname "$0")/.."
load_bin=$PWD/target/release/chess-load
work=$(mktemp -d)
pid=
cleanup() {
    if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

# measure BIN LABEL: one cell on a fresh data directory; prints "LABEL plays_per_s line".
measure() {
    local bin=$1 label=$2 port url line rate
    port=$((20000 + RANDOM % 20000))
    url=http://127.0.0.1:$port
    rm -rf "$work/data"
    "$bin" --listen "127.0.0.1:$port" --data-dir "$work/data" --durability fsync >"$work/server.log" 2>&1 &
    pid=$!
    for _ in $(seq 150); do
        "$load_bin" --target "$url" --rpc health --concurrency 1 --duration 0.01 --warmup 0 \
            >/dev/null 2>&1 && break
        sleep 0.2
    done
    line=$("$load_bin" --target "$url" --rpc play --concurrency $callers --connections 2 \
        --duration "$seconds" --warmup 2 2>&1 | tail -2 | tr '\n' ' ')
    kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
    rate=$(echo "$line" | grep -o 'throughput=[0-9]*' | head -1 | cut -d= -f2)
    echo "$label $rate | $line"
}

echo "# $(date -u +%FT%TZ) $(nproc) cores, $callers callers, ${seconds}s per cell, $rounds rounds, load $(cut -d' ' -f1-3 /proc/loadavg)"
results=$work/results
: >"$results"
for round in $(seq "$rounds"); do
    if [ $((round % 2)) -eq 1 ]; then order="before after"; else order="after before"; fi
    for which in $order; do
        if [ "$which" = before ]; then bin=$before; else bin=$after; fi
        measure "$bin" "$which" | tee -a "$results"
    done
done
median() { grep "^$1 " "$results" | awk '{print $2}' | sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
b=$(median before)
a=$(median after)
echo "median Plays/s: before $b, after $a, after/before $(echo "scale=3; $a / $b" | bc)"
