#!/usr/bin/env bash
# What a burst beyond --max-in-flight gets: 256 callers on one connection, each sending
# LegalMoves by FEN with a FEN no call used before (so every call is computed on the CPU
# pool, the server's bottleneck), against a server with --max-in-flight LIMIT and one with
# no bound (0), interleaved. Prints chess-load's line (served calls: throughput and
# latency; errors: the refused ones) and the server's own counts from /metrics.
#
# Usage: benches/overload.sh [limit, default 16] [seconds, default 5] [rounds, default 2]
# Needs the release binaries (cargo build --release --bins).
set -euo pipefail

limit=${1:-16}
seconds=${2:-5}
rounds=${3:-2}
callers=256
cd "$(dirname "$0")/.."
server_bin=target/release/chess-server
load_bin=target/release/chess-load
work=$(mktemp -d)
server_pid=
cleanup() {
    if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

run() { # max_in_flight round
    local port metrics target
    port=$(free_port)
    metrics=$(free_port)
    target=http://127.0.0.1:$port
    "$server_bin" --listen "127.0.0.1:$port" --data-dir "$work/data-$1-$2" \
        --max-in-flight "$1" --metrics-listen "127.0.0.1:$metrics" >"$work/server.log" 2>&1 &
    server_pid=$!
    for _ in $(seq 100); do
        "$load_bin" --target "$target" --rpc health --concurrency 1 --duration 0.01 --warmup 0 >/dev/null 2>&1 && break
        sleep 0.1
    done
    echo "== round $2, --max-in-flight $1"
    "$load_bin" --target "$target" --rpc legal-moves-fen-miss --concurrency $callers \
        --duration "$seconds" --warmup 1 2>&1 | grep 'ok=' || true
    curl -s "http://127.0.0.1:$metrics/metrics" 2>/dev/null |
        grep -E '^(chess_refusals_total|grpc_server_handled_total\{[^}]*LegalMoves)' || true
    kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=
}

for round in $(seq "$rounds"); do
    run "$limit" "$round"
    run 0 "$round"
done
