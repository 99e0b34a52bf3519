#!/usr/bin/env bash
# Restores a folder written by backup.sh, with the apps stopped (scaled to zero), in the order
# of the recovery runbook (docs/operations.md, "Backup and recovery"): checks the folder, then
#   the catalog database into CATALOG_DATABASE_URL, which must be EMPTY (a new database);
#   storage into STORAGE_ROOT, which must be empty (a new volume);
#   the PostgreSQL queue into QUEUE_DATABASE_URL (empty), when the backup has one.
# A Redis snapshot (queue.rdb) is not loaded by this script: a Redis server reads it at start
# (copy it as its dump.rdb, with appendonly off for that start), or a managed Redis imports it
# by its own tool. Then start the apps: the migration Job applies what is newer than the dump;
# then `provisioner reregister` registers every stored dataset the catalog lacks (the runbook).
# Usage: CATALOG_DATABASE_URL=… [STORAGE_ROOT=…] [QUEUE_DATABASE_URL=…] deploy/backup/restore.sh <folder>
set -euo pipefail

from=${1:?usage: restore.sh <backup folder>}
: "${CATALOG_DATABASE_URL:?CATALOG_DATABASE_URL must name the new, empty catalog database}"
(cd "$from" && sha256sum --check --quiet SHA256SUMS)

tables=$(psql --no-psqlrc --tuples-only --no-align --dbname "$CATALOG_DATABASE_URL" \
  --command "SELECT count(*) FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')")
if [ "$tables" != 0 ]; then
  echo "restore.sh: the catalog database is not empty ($tables tables): restore into a new one" >&2
  exit 2
fi
pg_restore --no-owner --no-privileges --exit-on-error --single-transaction \
  --dbname "$CATALOG_DATABASE_URL" "$from/catalog.dump"

if [ -f "$from/queue.dump" ]; then
  : "${QUEUE_DATABASE_URL:?the backup holds the PostgreSQL queue: set QUEUE_DATABASE_URL (empty database)}"
  pg_restore --no-owner --no-privileges --exit-on-error --single-transaction \
    --dbname "$QUEUE_DATABASE_URL" "$from/queue.dump"
fi

if [ -f "$from/storage.tar" ]; then
  : "${STORAGE_ROOT:?the backup holds storage: set STORAGE_ROOT (an empty volume)}"
  mkdir -p "$STORAGE_ROOT"
  if [ -n "$(ls -A "$STORAGE_ROOT")" ]; then
    echo "restore.sh: $STORAGE_ROOT is not empty: restore onto a new volume" >&2
    exit 2
  fi
  tar --extract --file "$from/storage.tar" --directory "$STORAGE_ROOT" --same-permissions
fi
if [ -f "$from/queue.rdb" ]; then
  echo "restore.sh: load $from/queue.rdb into the queue's Redis before starting the apps (see the runbook)"
fi
echo "restore.sh: restored from $from"
