#!/usr/bin/env bash
# Durable Plays/s on PostgreSQL (one and two replicas) beside the sled store, in one run:
# the PostgreSQL section of BENCHMARKS.md. Everything shares this machine's cores: the
# database (fsync and synchronous_commit on), the replicas and the load generator.
#
# Usage: benches/postgres.sh [seconds per cell, default 15] [rounds, default 2]
# Needs PostgreSQL's server binaries (/usr/lib/postgresql/*/bin; apt-get install
# postgresql) and builds the release binaries. Run as root (the cluster then runs as the
# postgres user, since PostgreSQL refuses root) or as an ordinary user.
#
# Cells, interleaved round by round: Play at 64 callers on sled (--durability fsync), on
# one PostgreSQL replica and on two (the callers' connections alternate between them);
# LegalMoves by game on sled and on one replica; Play watched by a spectator on the other
# replica (latency from sending the Play until the spectator has the move).
#
# Knobs for experiments (environment): POOL (each replica's --database-pool-size, default
# the server's 16), PG_OPTS (more `-c name=value` for the database), ONLY (run only the
# cells whose label contains this text), SERVER_BIN (a chess-server binary to measure
# instead of this tree's, e.g. one built from an older commit for a before/after run).
set -euo pipefail

seconds=${1:-15}
rounds=${2:-2}
callers=64
cd "$(dirname "$0")/.."
cargo build --release --bins --quiet
server_bin=${SERVER_BIN:-$PWD/target/release/chess-server}
load_bin=$PWD/target/release/chess-load

pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
if [ -z "$pg_bin" ] || [ ! -x "$pg_bin/initdb" ]; then
    echo "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb)" >&2
    exit 1
fi
work=$(mktemp -d /tmp/chess-pg-bench.XXXXXX)
chmod 755 "$work"
as_pg=()
if [ "$(id -u)" = 0 ]; then
    as_pg=(runuser -u postgres --)
    mkdir "$work/pg"
    chown postgres:postgres "$work/pg"
fi
pg_port=$((20000 + RANDOM % 20000))
cleanup() {
    # The servers' pids are in files: start() runs in a command substitution's subshell.
    for f in "$work"/*.pid; do [ -e "$f" ] && kill "$(cat "$f")" 2>/dev/null || true; done
    sleep 0.5
    "${as_pg[@]}" "$pg_bin/pg_ctl" -D "$work/pg/data" -m immediate -w stop >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

"${as_pg[@]}" "$pg_bin/initdb" -D "$work/pg/data" -U postgres --auth=trust -E UTF8 >/dev/null
"${as_pg[@]}" "$pg_bin/pg_ctl" -D "$work/pg/data" -l "$work/pg/server.log" -w -o \
    "-p $pg_port -c listen_addresses=127.0.0.1 -c unix_socket_directories=$work/pg -c fsync=on -c synchronous_commit=on -c max_connections=200 ${PG_OPTS:-}" \
    start >/dev/null
"${as_pg[@]}" "$pg_bin/createdb" -h 127.0.0.1 -p "$pg_port" -U postgres chess
url="postgres://postgres@127.0.0.1:$pg_port/chess"

# start NAME ARGS...: a server on a free port; prints its URL.
start() {
    local name=$1 port
    shift
    port=$((20000 + RANDOM % 20000))
    "$server_bin" --listen "127.0.0.1:$port" "$@" >"$work/$name.log" 2>&1 &
    echo $! >"$work/$name.pid"
    for _ in $(seq 150); do
        if "$load_bin" --target "http://127.0.0.1:$port" --rpc health --concurrency 1 \
            --duration 0.01 --warmup 0 >/dev/null 2>&1; then
            echo "http://127.0.0.1:$port"
            return 0
        fi
        sleep 0.2
    done
    echo "$name did not start: $(cat "$work/$name.log")" >&2
    exit 1
}

sled=$(start sled --data-dir "$work/sled" --durability fsync)
pool=(--database-pool-size "${POOL:-16}")
pg_a=$(start pg-a --data-dir "$work/unused-a" --database-url "$url" "${pool[@]}")
pg_b=$(start pg-b --data-dir "$work/unused-b" --database-url "$url" "${pool[@]}")

echo "# $(date -u +%FT%TZ) $(nproc) cores, PostgreSQL $("$pg_bin/postgres" --version | awk '{print $3}'), $callers callers, ${seconds}s per cell, $rounds rounds, pool ${POOL:-16}, PG_OPTS '${PG_OPTS:-}'"
# CPU seconds (user + system) used so far by the processes whose command name is $1.
cpu_of() {
    local hz ticks=0 stat
    hz=$(getconf CLK_TCK)
    for stat in /proc/[0-9]*/stat; do
        read -r -a f <"$stat" 2>/dev/null || continue
        [ "${f[1]}" = "($1)" ] && ticks=$((ticks + f[13] + f[14]))
    done
    echo "scale=2; $ticks / $hz" | bc
}
# cell LABEL RPC TARGETS: one chess-load run, with the CPU each party used meanwhile
# (cores: CPU seconds per measured second, warm-up included in both).
cell() {
    local label=$1 rpc=$2 targets=$3 s0 p0 t0 line s1 p1 t1 load
    case "$label" in *"${ONLY:-}"*) ;; *) return 0 ;; esac
    s0=$(cpu_of chess-server); p0=$(cpu_of postgres); t0=$(date +%s.%N)
    line=$(/usr/bin/time -f 'load_cpu=%U+%S' "$load_bin" --target "$targets" --rpc "$rpc" \
        --concurrency $callers --connections 2 --duration "$seconds" --warmup 2 2>&1 | tail -2 | tr '\n' ' ')
    s1=$(cpu_of chess-server); p1=$(cpu_of postgres); t1=$(date +%s.%N)
    load=$(echo "$line" | grep -o 'load_cpu=[0-9.+]*' | cut -d= -f2)
    echo "$label | $line| cores: servers $(echo "scale=2; ($s1 - $s0) / ($t1 - $t0)" | bc)," \
        "postgres $(echo "scale=2; ($p1 - $p0) / ($t1 - $t0)" | bc)," \
        "load generator $(echo "scale=2; ($load) / ($t1 - $t0)" | bc)"
}
for round in $(seq "$rounds"); do
    echo "## round $round"
    cell "Play, sled fsync, 1 server" play "$sled"
    cell "Play, PostgreSQL, 1 replica" play "$pg_a"
    cell "Play, PostgreSQL, 2 replicas" play "$pg_a,$pg_b"
    cell "LegalMoves by game, sled" legal-moves-game "$sled"
    cell "LegalMoves by game, PostgreSQL, 1 replica" legal-moves-game "$pg_a"
    cell "Play watched on the other replica, PostgreSQL" watch-other "$pg_a,$pg_b"
    cell "Play watched on the same server, sled" watch-other "$sled"
done
echo "## PostgreSQL's own view"
"${as_pg[@]}" "$pg_bin/psql" -h 127.0.0.1 -p "$pg_port" -U postgres -d chess -Atc \
    "SELECT 'commits='||xact_commit||' rollbacks='||xact_rollback FROM pg_stat_database WHERE datname='chess'"
"${as_pg[@]}" "$pg_bin/psql" -h 127.0.0.1 -p "$pg_port" -U postgres -d chess -Atc \
    "SELECT 'wal_records='||wal_records||' wal_sync='||wal_sync||' wal_sync_time_ms='||round(wal_sync_time) FROM pg_stat_wal" 2>/dev/null || true
