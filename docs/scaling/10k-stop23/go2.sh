#!/usr/bin/env bash
# stop 23, second half: go.sh's first round (new1: the import of both
# windows by 1a452ba and its query round with the concurrent phase) was
# left running when the distinct_resources change (8759d61) landed; this
# waits for it, then measures on the same databases: the 14 d / 1 d ratio
# for NEW (three rounds alternating the windows, 20 measured runs per
# query, the concurrent phase in round 1) and for OLD (the same without
# it), migration 0015 timed on the 14-day database (its table and trigger
# dropped first), and the ingest probes (10k-stop22/probes.sh) with NEW.
#   go2.sh NEW_BINARY OLD_BINARY
set -u
[[ -x "${1:-}" && -x "${2:-}" ]] || { echo "usage: $0 NEW_BINARY OLD_BINARY" >&2; exit 2; }
cd "$(dirname "$0")/../../.."
D=/work/data-10k; R=$D/results-stop23; mkdir -p $R
PG=postgres://postgres@127.0.0.1:5432
while pgrep -f "scripts/days-scaling.sh $PG/s10k" > /dev/null; do sleep 10; done
date -u +%FT%TZ > $R/new1-done
echo "$1 $2" >> $R/binaries
days() { # days NAME BINARY K WARMUP ROUNDS DURATION
  env NODES=10000 DATA=$D K=$3 WARMUP=$4 ROUNDS=$5 DAYS="1 14" REPORTDB=$2 DURATION=$6 SKIP_IMPORT=1 \
    scripts/days-scaling.sh $PG/s10k $R/days-$1 > $R/days-$1.log 2>&1
  date -u +%FT%TZ > $R/$1-done
}
days ratio-new $1 20 3 3 30
days ratio-old $2 20 3 3 0
psql -qAt $PG/s10k_14d -c "DROP TRIGGER reports_time_bounds ON reports" -c "DROP FUNCTION report_time_bounds_widen()" \
  -c "DROP TABLE report_time_bounds" -c "DELETE FROM reportdb_schema_migrations WHERE version = 15"
/usr/bin/time -f "migrate 0015 14d: %e s, %M KB" $1 migrate --database $PG/s10k_14d > $R/migrate.log 2>&1
date -u +%FT%TZ > $R/migrate-done
R=$R DB14=s10k_14d DAY=16 docs/scaling/10k-stop22/probes.sh "$1"
date -u +%FT%TZ > $R/all-done
