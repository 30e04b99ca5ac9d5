#!/usr/bin/env bash
# stop 29: migration 0017 (report_keys' index by day) at 10,000 nodes x 1
# and 14 days (scripts/fleet-days.py --nodes 10000 --days 1,14 --outdir
# /work/data-10k), all with PostgreSQL's defaults (shared_buffers 128MB,
# max_wal_size 1GB):
#   1. import both windows (queries.py -k 5 after each; the 14-day one
#      with the concurrent phase, 30 s), the import's peak RSS sampled;
#   2. the 14 d / 1 d ratio, queries.py -k 20, two rounds (windows
#      alternated), the concurrent phase in the first (before 3 and 4,
#      which add newer days to the 14-day database);
#   3. sustained ingest (10k-stop28/sustained.sh), ROUNDS4 rounds (4)
#      without a restart between them, days MONTH-DAY.. (02-05..);
#   4. the control: the same rounds, 2 of them, with migration 0016's
#      index (key, id) put back in place of 0017's on the 14-day database,
#      then 0017's restored.
#   go.sh BINARY   (SKIP_IMPORT=1 keeps the databases; SKIP_RATIO=1,
#                   SKIP_CONTROL=1 leave out 2, 4)
set -u
[[ -x "${1:-}" ]] || { echo "usage: $0 BINARY" >&2; exit 2; }
B=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
cd "$(dirname "$0")/../../.."
D=/work/data-10k; R=$D/results-stop29; mkdir -p $R
PG=postgres://postgres@127.0.0.1:5432
psql -qAt $PG/postgres -c "ALTER SYSTEM RESET shared_buffers" -c "ALTER SYSTEM RESET max_wal_size"
pg_ctlcluster 15 main restart; sleep 2
psql -qAt $PG/postgres -c "SELECT name || ' = ' || setting || coalesce(' ' || unit, '') FROM pg_settings
  WHERE name IN ('shared_buffers', 'max_wal_size', 'checkpoint_timeout', 'autovacuum', 'synchronous_commit') ORDER BY 1" > $R/settings.txt
if [[ -z "${SKIP_IMPORT:-}" ]]; then
  scripts/days-10k.sh $R import1 $B 1 5 1 0 0
  (while [[ ! -e $R/import14-done ]]; do
     for p in $(pgrep -f "$B import"); do grep VmHWM /proc/$p/status 2>/dev/null; done; sleep 5
   done) > $R/import14-vmhwm.txt &
  scripts/days-10k.sh $R import14 $B 14 5 1 30 0
fi
[[ -n "${SKIP_RATIO:-}" ]] || scripts/days-10k.sh $R ratio $B "1 14" 20 2 30 1
MONTH=${MONTH:-02}; DAY=${DAY:-05}; N=${ROUNDS4:-4}
R=$R/sustained MONTH=$MONTH DAY=$DAY ROUNDS=$N DB14=s10k_14d docs/scaling/10k-stop28/sustained.sh $B
if [[ -z "${SKIP_CONTROL:-}" ]]; then
  psql -qAt $PG/s10k_14d -c "CREATE INDEX report_keys_key ON report_keys (key, id)" -c "DROP INDEX report_keys_day_key" -c "VACUUM ANALYZE report_keys"
  R=$R/sustained-index0016 MONTH=$MONTH DAY=$(printf %02d $((10#$DAY + N))) ROUNDS=2 DB14=s10k_14d docs/scaling/10k-stop28/sustained.sh $B
  psql -qAt $PG/s10k_14d -c "CREATE INDEX report_keys_day_key ON report_keys ((id >> 32), key, id)" -c "DROP INDEX report_keys_key" -c "VACUUM ANALYZE report_keys"
fi
date -u +%FT%TZ > $R/go-done
