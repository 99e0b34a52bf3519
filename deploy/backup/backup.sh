#!/usr/bin/env bash
# Backs up what must survive, into one folder (docs/operations.md, "Backup and recovery"):
#   catalog.dump   the catalog database (pg_dump, custom format) through its DIRECT URL: never
#                  PgBouncer in transaction mode, whose pooled sessions pg_dump cannot use
#   storage.tar    filesystem storage (STORAGE_ROOT), published datasets with their provenance;
#                  .staging/ is left out (partial copies, made again by the imports that own them)
#   queue.rdb      the queue's Redis (pending imports and catalog registrations), when REDIS_URL
#                  is set (redis-cli --rdb: a consistent snapshot taken by the server)
#   queue.dump     the PostgreSQL queue's database instead, when QUEUE_DATABASE_URL is set
#   SHA256SUMS     of the above
# Order: the catalog first, storage last, so every dataset the catalog lists is in the storage
# backup (an import published meanwhile is re-registered after a restore: restore.sh's notes).
# Usage: CATALOG_DATABASE_URL=postgres://… [STORAGE_ROOT=/data/storage] [REDIS_URL=redis://…]
#        [QUEUE_DATABASE_URL=postgres://…] deploy/backup/backup.sh <new folder>
# The dump holds API-key hashes and personal data: store the folder encrypted.
set -euo pipefail

out=${1:?usage: backup.sh <new folder>}
: "${CATALOG_DATABASE_URL:?CATALOG_DATABASE_URL must name the catalog database directly (not PgBouncer)}"
if [ -e "$out" ] && [ -n "$(ls -A "$out")" ]; then
  echo "backup.sh: $out is not empty" >&2
  exit 2
fi
mkdir -p "$out"

pg_dump --format=custom --no-owner --no-privileges --file "$out/catalog.dump" "$CATALOG_DATABASE_URL"
if [ -n "${QUEUE_DATABASE_URL:-}" ]; then
  pg_dump --format=custom --no-owner --no-privileges --file "$out/queue.dump" "$QUEUE_DATABASE_URL"
fi
if [ -n "${REDIS_URL:-}" ]; then
  redis-cli -u "$REDIS_URL" --rdb "$out/queue.rdb" > /dev/null
fi
if [ -n "${STORAGE_ROOT:-}" ]; then
  # Published datasets are read-only trees: tar keeps their modes, so a restore is read-only too.
  tar --create --file "$out/storage.tar" --directory "$STORAGE_ROOT" --exclude=./.staging .
fi
(cd "$out" && sha256sum -- * > SHA256SUMS)
echo "backup.sh: $(cd "$out" && ls | tr '\n' ' ')in $out"
