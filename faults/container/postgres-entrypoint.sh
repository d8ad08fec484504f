#!/usr/bin/env bash
# The official postgres image's entry point, in short: on the first start, a cluster in
# $PGDATA whose superuser is $POSTGRES_USER (postgres) with $POSTGRES_PASSWORD, reached
# from any address with that password, and the database $POSTGRES_DB (the user's name);
# then postgres runs as the postgres user, as PID 1.
set -euo pipefail
if [ "${1:0:1}" = '-' ]; then set -- postgres "$@"; fi
if [ "$1" = 'postgres' ] && [ "$(id -u)" = '0' ]; then
  mkdir -p "$PGDATA" /var/run/postgresql
  chown -R postgres:postgres "$PGDATA" /var/run/postgresql
  chmod 700 "$PGDATA"
  exec setpriv --reuid=postgres --regid=postgres --init-groups "${BASH_SOURCE[0]}" "$@"
fi
if [ "$1" = 'postgres' ] && [ ! -s "$PGDATA/PG_VERSION" ]; then
  : "${POSTGRES_PASSWORD:?is not set: give the database superuser a password}"
  user="${POSTGRES_USER:-postgres}"
  db="${POSTGRES_DB:-$user}"
  initdb --username="$user" --pwfile=<(printf '%s\n' "$POSTGRES_PASSWORD") --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  echo "listen_addresses = '*'" >>"$PGDATA/postgresql.conf"
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  if [ "$db" != 'postgres' ]; then
    echo "CREATE DATABASE \"$db\";" | postgres --single -D "$PGDATA" postgres >/dev/null
  fi
fi
exec "$@"
