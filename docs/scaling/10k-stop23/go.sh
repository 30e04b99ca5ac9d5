#!/usr/bin/env bash
# stop 23, on a fresh machine: narrowed report pages (migration 0015,
# report_time_bounds) at 10,000 nodes. Waits for the fleet
# (scripts/fleet-days.py --nodes 10000 --days 1,14 --outdir /work/data-10k),
# imports both windows with NEW (round new1, with the concurrent phase),
# measures OLD on the same databases (an older binary ignores migration
# 0015's table and trigger, which keeps the spans right under its writes
# too), then the 14 d / 1 d ratio with more runs for NEW and for OLD
# (three rounds alternating the windows, 20 measured runs per query), and
# last migration 0015 timed on the 14-day database (its table and trigger
# dropped first, then `reportdb migrate`).
#   go.sh NEW_BINARY OLD_BINARY   (built beforehand from clean trees)
set -u
[[ -x "${1:-}" && -x "${2:-}" ]] || { echo "usage: $0 NEW_BINARY OLD_BINARY" >&2; exit 2; }
cd "$(dirname "$0")/../../.."
D=/work/data-10k; R=$D/results-stop23; mkdir -p $R
PG=postgres://postgres@127.0.0.1:5432
while [[ ! -e $D/fleet-10000n-14d.jsonl.gz.manifest.json || ! -e $D/fleet-10000n-1d.jsonl.gz.manifest.json ]]; do sleep 20; done
date -u +%FT%TZ > $R/fleet-done
echo "$1 $2" > $R/binaries
days() { # days NAME BINARY K WARMUP ROUNDS DURATION SKIP_IMPORT
  env NODES=10000 DATA=$D K=$3 WARMUP=$4 ROUNDS=$5 DAYS="1 14" REPORTDB=$2 DURATION=$6 SKIP_IMPORT=$7 \
    scripts/days-scaling.sh $PG/s10k $R/days-$1 > $R/days-$1.log 2>&1
  date -u +%FT%TZ > $R/$1-done
}
days new1 $1 5 1 1 30 0
days old1 $2 5 1 1 0 1
days ratio-new $1 20 3 3 0 1
days ratio-old $2 20 3 3 0 1
psql -qAt $PG/s10k_14d -c "DROP TRIGGER reports_time_bounds ON reports" -c "DROP FUNCTION report_time_bounds_widen()" \
  -c "DROP TABLE report_time_bounds" -c "DELETE FROM reportdb_schema_migrations WHERE version = 15"
/usr/bin/time -f "migrate 0015 14d: %e s, %M KB" $1 migrate --database $PG/s10k_14d > $R/migrate.log 2>&1
date -u +%FT%TZ > $R/all-done
