#!/bin/sh
# The official postgres image's start-up, reduced to what this project uses: on an empty PGDATA,
# initdb with POSTGRES_USER/POSTGRES_PASSWORD (scram-sha-256 over TCP) and create POSTGRES_DB.
set -eu
: "${POSTGRES_USER:=postgres}"
: "${POSTGRES_DB:=$POSTGRES_USER}"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  if [ -z "${POSTGRES_PASSWORD:-}" ]; then
    echo "POSTGRES_PASSWORD is required to initialise $PGDATA" >&2
    exit 1
  fi
  mkdir -p "$PGDATA"
  chmod 700 "$PGDATA"
  pwfile=$(mktemp)
  printf '%s' "$POSTGRES_PASSWORD" > "$pwfile"
  initdb --username="$POSTGRES_USER" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 \
    --encoding=UTF8 --locale=C.UTF-8 > /dev/null
  rm -f "$pwfile"
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  if [ "$POSTGRES_DB" != postgres ]; then
    echo "CREATE DATABASE \"$POSTGRES_DB\" OWNER \"$POSTGRES_USER\"" \
      | postgres --single -D "$PGDATA" -j postgres > /dev/null
  fi
  echo "initialised $PGDATA (user $POSTGRES_USER, database $POSTGRES_DB)"
fi
if [ "${1:-}" = postgres ]; then
  shift
  # A socket directory this user cannot write (an emptyDir where fsGroup is not applied, as
  # under podman kube play): TCP only; PGHOST makes the image's own tools (pg_isready) use it.
  if [ ! -w /var/run/postgresql ]; then
    set -- -c unix_socket_directories= "$@"
  fi
  exec postgres -c listen_addresses='*' "$@"
fi
exec "$@"
