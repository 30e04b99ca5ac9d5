#!/usr/bin/env bash
# stop 28: the 14-day import again, with PostgreSQL's defaults
# (shared_buffers 128MB, max_wal_size 1GB), into a second database
# (s10k_14d_def), on the same machine as go.sh's import with 4GB / 8GB:
# which part of the import's time the settings decide. Restores 4GB / 8GB
# at the end.
#   import-defaults.sh BINARY
set -u
[[ -x "${1:-}" ]] || { echo "usage: $0 BINARY" >&2; exit 2; }
B=$1
D=/work/data-10k; R=$D/results-stop28; mkdir -p $R/import-defaults
PG=postgres://postgres@127.0.0.1:5432
psql -qAt $PG/postgres -c "ALTER SYSTEM SET shared_buffers = '128MB'" -c "ALTER SYSTEM SET max_wal_size = '1GB'"
pg_ctlcluster 15 main restart; sleep 2
psql -qAt $PG/postgres -c "SELECT name || ' = ' || setting || coalesce(' ' || unit, '') FROM pg_settings
  WHERE name IN ('shared_buffers', 'max_wal_size') ORDER BY 1" > $R/import-defaults/settings.txt
psql -qAt $PG/postgres -c "DROP DATABASE IF EXISTS s10k_14d_def" -c "CREATE DATABASE s10k_14d_def"
sync
/usr/bin/time -v $B import --database $PG/s10k_14d_def --progress lines --progress-interval 30s \
  $D/fleet-10000n-14d.jsonl.gz > $R/import-defaults/import.log 2> $R/import-defaults/import.progress
psql -qAt $PG/postgres -c "SELECT pg_size_pretty(pg_database_size('s10k_14d_def'))" > $R/import-defaults/size.txt
psql -qAt $PG/postgres -c "ALTER SYSTEM SET shared_buffers = '4GB'" -c "ALTER SYSTEM SET max_wal_size = '8GB'"
pg_ctlcluster 15 main restart
date -u +%FT%TZ > $R/import-defaults/done
