#!/usr/bin/env bash
# stop 31: the 10,000-node fleet at 1 and 14 days (scripts/fleet-days.py
# --nodes 10000 --days 1,14 --outdir /work/data-10k) with this stop's
# server (events' reports looked up by id, loopback without TLS, events
# rendered from the record bytes), PostgreSQL's defaults:
#   1. import both windows (queries.py -k 5 after each; the 14-day one
#      with the concurrent phase, 30 s), the import's peak RSS sampled;
#   2. the state of the tables the latest reports' queries read
#      (latest_reports, certnames: live and dead rows, pages) and the
#      plan of pql_latest_failed_reports' statement, on both databases;
#   3. the 14 d / 1 d ratio, queries.py -k K (20), ROUNDS rounds (3; windows
#      alternated), the concurrent phase in the first;
#   4. unless SKIP_SUSTAINED=1: sustained ingest (10k-stop28/sustained.sh),
#      ROUNDS4 rounds (2), days MONTH-DAY.. (02-11..).
#   go.sh BINARY   (SKIP_IMPORT=1 keeps the databases; RESULTS: the results
#                   directory, /work/data-10k/results-stop31)
set -u
[[ -x "${1:-}" ]] || { echo "usage: $0 BINARY" >&2; exit 2; }
B=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
cd "$(dirname "$0")/../../.."
D=/work/data-10k; R=${RESULTS:-$D/results-stop31}; mkdir -p $R
PG=postgres://postgres@127.0.0.1:5432
psql -qAt $PG/postgres -c "SELECT name || ' = ' || setting || coalesce(' ' || unit, '') FROM pg_settings
  WHERE name IN ('shared_buffers', 'max_wal_size', 'checkpoint_timeout', 'autovacuum', 'synchronous_commit', 'ssl') ORDER BY 1" > $R/settings.txt
if [[ -z "${SKIP_IMPORT:-}" ]]; then
  scripts/days-10k.sh $R import1 $B 1 5 1 0 0
  (while [[ ! -e $R/import14-done ]]; do
     for p in $(pgrep -f "$B import"); do grep VmHWM /proc/$p/status 2>/dev/null; done; sleep 5
   done) > $R/import14-vmhwm.txt &
  scripts/days-10k.sh $R import14 $B 14 5 1 30 0
fi
for db in s10k_1d s10k_14d; do
  {
    echo "== $db"
    psql -qAt $PG/$db -c "SELECT relname, n_live_tup, n_dead_tup, pg_relation_size(relid) / 8192 AS pages,
      last_vacuum, last_analyze FROM pg_stat_user_tables WHERE relname IN ('latest_reports', 'certnames') ORDER BY 1"
    psql -qAt $PG/$db -c "EXPLAIN (ANALYZE, BUFFERS) SELECT r.certname, r.hash, r.status, r.producer_timestamp
      FROM latest_reports r WHERE r.type = 'agent' AND r.status = 'failed' ORDER BY r.certname"
  } >> $R/latest-tables.txt 2>&1
done
scripts/days-10k.sh $R ratio $B "1 14" ${K:-20} ${ROUNDS:-3} 30 1
if [[ -z "${SKIP_SUSTAINED:-}" ]]; then
  MONTH=${MONTH:-02}; DAY=${DAY:-11}; N=${ROUNDS4:-2}
  R=$R/sustained MONTH=$MONTH DAY=$DAY ROUNDS=$N DB14=s10k_14d docs/scaling/10k-stop28/sustained.sh $B
fi
date -u +%FT%TZ > $R/go-done
