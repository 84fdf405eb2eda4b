#!/bin/sh
# The official postgres image's entrypoint contract, as far as deploy/compose.yaml uses it:
# on an empty PGDATA, initdb with superuser POSTGRES_USER (password POSTGRES_PASSWORD, scram
# for connections over TCP, trust over the local socket) and a database POSTGRES_DB (default:
# the user's name); then run `postgres` with the given args, listening on every address
# unless an arg says otherwise.
set -eu
if [ "${1#-}" != "$1" ]; then
    set -- postgres "$@"
fi
if [ "$1" = postgres ] && [ ! -s "$PGDATA/PG_VERSION" ]; then
    : "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD must be set}"
    user="${POSTGRES_USER:-postgres}"
    db="${POSTGRES_DB:-$user}"
    pwfile="$(mktemp)"
    printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
    initdb --username="$user" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 \
        --encoding=UTF8 >/dev/null
    rm -f "$pwfile"
    echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
    if [ "$db" != postgres ]; then
        pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
        createdb --username="$user" "$db"
        pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
    fi
    echo "stand-in postgres: initialized $PGDATA (user $user, database $db)"
fi
if [ "$1" = postgres ]; then
    shift
    exec postgres -c listen_addresses='*' "$@"
fi
exec "$@"
