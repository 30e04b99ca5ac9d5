#!/usr/bin/env bash
# stop 28: ingest into the 14-day database with PostgreSQL's buffers sized
# for the tables ingest writes. Stops 20-27 ran every probe on the default
# 128 MB of shared_buffers and 1 GB of max_wal_size; stop 27 traced the
# 14-day probes' lost 19 % to blocks of resource_latest (1.1 GB at 14 d),
# report_keys (1.0 GB) and distinct_rollup (0.6 GB) read from outside
# those buffers, 7-10 times as many as in the empty database. Here
# PostgreSQL runs with shared_buffers = 4GB and max_wal_size = 8GB (set
# with ALTER SYSTEM before the import and a restart; the machine has
# 24 GB), as its documentation advises for a dedicated server (a quarter of
# the memory, more WAL between checkpoints for write-heavy loads).
# Import the 14-day window of the 10,000-node fleet (scripts/fleet-days.py
# --nodes 10000 --days 1,14 --outdir /work/data-10k) with BINARY (one round
# of queries.py -k 5 and a 30 s concurrent phase after it), let its writes
# settle (CHECKPOINT, sync), then stop 22's probes
# (docs/scaling/10k-stop22/probes.sh: three files of three runs of every
# node of a new day, each into an empty database and the 14-day one, the
# order alternated) in sets:
#   days 20, 21: shared_buffers 4GB, max_wal_size 8GB
#   day 22:      shared_buffers 4GB, max_wal_size 1GB (reload): which of the
#                two settings the result owes to
#   day 23:      shared_buffers 128MB, max_wal_size 8GB (restart), if
#                SETS includes 23 (default: 20 21 22)
#   days 26, 27: shared_buffers 128MB, max_wal_size 1GB (PostgreSQL's
#                defaults, as every probe of stops 20-27), if in SETS
# (Run at stop 28: the default sets with the import, then SKIP_IMPORT=1
# SETS="24 25 23" (24, 25 as 20), then SKIP_IMPORT=1 SETS="26 27".)
# The settings in force are written before each set (settings-dDAY.txt).
#   go.sh BINARY      (SKIP_IMPORT=1: keep s10k_14d; SETS="20 21 22 23")
set -u
[[ -x "${1:-}" ]] || { echo "usage: $0 BINARY" >&2; exit 2; }
B=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
cd "$(dirname "$0")/../../.."
D=/work/data-10k; R=$D/results-stop28; mkdir -p $R
PG=postgres://postgres@127.0.0.1:5432
pgset() { # pgset SHARED_BUFFERS MAX_WAL_SIZE: ALTER SYSTEM, restart when shared_buffers changes
  local sb; sb=$(psql -qAt $PG/postgres -c "SHOW shared_buffers")
  psql -qAt $PG/postgres -c "ALTER SYSTEM SET shared_buffers = '$1'" -c "ALTER SYSTEM SET max_wal_size = '$2'"
  if [[ $sb != "$1" ]]; then pg_ctlcluster 15 main restart; sleep 2; else psql -qAt $PG/postgres -c "SELECT pg_reload_conf()" > /dev/null; fi
}
settings() { psql -qAt $PG/postgres -c "SELECT name || ' = ' || setting || coalesce(' ' || unit, '') FROM pg_settings
  WHERE name IN ('shared_buffers', 'max_wal_size', 'checkpoint_timeout', 'wal_buffers', 'effective_cache_size', 'work_mem', 'synchronous_commit', 'autovacuum') ORDER BY 1"; }
pgset 4GB 8GB
if [[ -z "${SKIP_IMPORT:-}" && ! -e $R/import14-done ]]; then
  settings > $R/settings-import.txt
  (while [[ ! -e $R/import14-done ]]; do
     for p in $(pgrep -f "$B import"); do grep VmHWM /proc/$p/status 2>/dev/null; done; sleep 5
   done) > $R/import14-vmhwm.txt &
  scripts/days-10k.sh $R import14 $B 14 5 1 30 0
fi
settle() {
  psql -qAt $PG/s10k_14d -c CHECKPOINT; sync
  echo "$(date -u +%FT%TZ) settled: $(grep -E '^(Dirty|Writeback):' /proc/meminfo | tr -s ' ' | tr '\n' ' ')" >> $R/probes.txt
}
for day in ${SETS:-20 21 22}; do
  case $day in 22) pgset 4GB 1GB;; 23) pgset 128MB 8GB;; 26|27) pgset 128MB 1GB;; *) pgset 4GB 8GB;; esac
  settings > $R/settings-d$day.txt
  settle
  R=$R DB14=s10k_14d DAY=$day TAG=d$day- docs/scaling/10k-stop22/probes.sh $B
done
pgset 4GB 8GB
date -u +%FT%TZ > $R/go-done
