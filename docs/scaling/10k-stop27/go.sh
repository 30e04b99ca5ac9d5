#!/usr/bin/env bash
# stop 27: is ingest into the 14-day database at least 90 % of the rate
# into an empty one? (stop 26 measured 79.9 %: 61.8, 86.4, 96.6 % in three
# probes, the first right after the import.) Import the 14-day window of
# the 10,000-node fleet (scripts/fleet-days.py --nodes 10000 --days 1,14
# --outdir /work/data-10k) with BINARY; then let the import's writes reach
# the disk (CHECKPOINT, sync: a server that keeps 14 days has no import of
# 6.7 million reports just before the reports it receives, and stop 26's
# first probe ran into that writeback); then two sets of stop 22's probes
# (docs/scaling/10k-stop22/probes.sh: 3 files of 3 runs of every node of a
# new day, each into an empty database and the 14-day one, the order
# alternated), days 17 and 18; then time migration 0016 on the 14-day
# database (its table, function and trigger dropped and the migration
# applied again by `reportdb migrate`). The import's peak RSS is sampled
# (/proc/PID/status VmHWM every 5 s, results-stop27/import14-vmhwm.txt).
#   go.sh BINARY      (SKIP_IMPORT=1: keep s10k_14d)
set -u
[[ -x "${1:-}" ]] || { echo "usage: $0 BINARY" >&2; exit 2; }
B=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
cd "$(dirname "$0")/../../.."
D=/work/data-10k; R=$D/results-stop27; mkdir -p $R
PG=postgres://postgres@127.0.0.1:5432
if [[ -z "${SKIP_IMPORT:-}" && ! -e $R/import14-done ]]; then
  # the import's peak resident memory (VmHWM), sampled every 5 s
  (while [[ ! -e $R/import14-done ]]; do
     for p in $(pgrep -f "$B import"); do grep VmHWM /proc/$p/status 2>/dev/null; done; sleep 5
   done) > $R/import14-vmhwm.txt &
  scripts/days-10k.sh $R import14 $B 14 5 1 30 0
fi
settle() {
  psql -qAt $PG/s10k_14d -c CHECKPOINT; sync
  echo "$(date -u +%FT%TZ) settled: $(grep -E '^(Dirty|Writeback):' /proc/meminfo | tr -s ' ' | tr '\n' ' ')" >> $R/probes.txt
}
for day in 17 18; do
  settle
  R=$R DB14=s10k_14d DAY=$day TAG=d$day- docs/scaling/10k-stop22/probes.sh $B
done
psql -qAt $PG/s10k_14d -c "SELECT pg_size_pretty(pg_database_size('s10k_14d')), (SELECT count(*) FROM report_keys)" > $R/size-before-migration.txt
psql -qAt $PG/s10k_14d -c "DROP TRIGGER reports_keys ON reports" -c "DROP FUNCTION report_keys_add()" \
  -c "DROP TABLE report_keys" -c "DELETE FROM reportdb_schema_migrations WHERE version = 16" -c CHECKPOINT
/usr/bin/time -v $B migrate --database $PG/s10k_14d > $R/migrate-0016.log 2>&1
date -u +%FT%TZ > $R/go-done
