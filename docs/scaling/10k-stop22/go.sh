#!/usr/bin/env bash
# stop 22, on a fresh machine: migration 0014 (title keys) at 10,000 nodes.
# Waits for the fleet (scripts/fleet-days.py --nodes 10000 --days 1,14
# --outdir /work/data-10k), imports both windows with OLD (schema through
# 0013) and measures the query mix there (round old1, with the concurrent
# phase); copies both databases (s10k_* -> s10kn_*), migrates the copies
# with NEW (`reportdb migrate`, timed), then alternates query rounds on the
# same data: new1 (with the concurrent phase), old2, new2.
#   go.sh NEW_BINARY OLD_BINARY   (built beforehand from clean trees)
set -u
[[ -x "${1:-}" && -x "${2:-}" ]] || { echo "usage: $0 NEW_BINARY OLD_BINARY" >&2; exit 2; }
cd "$(dirname "$0")/../../.."
D=/work/data-10k; R=$D/results-stop22; mkdir -p $R
PG=postgres://postgres@127.0.0.1:5432
while [[ ! -e $D/fleet-10000n-14d.jsonl.gz || ! -e $D/fleet-10000n-1d.jsonl.gz ]]; do sleep 20; done
date -u +%FT%TZ > $R/fleet-done
echo "$1 $2" > $R/binaries
round() { # round NAME BINARY PREFIX DURATION [SKIP_IMPORT]
  env NODES=10000 DATA=$D K=5 WARMUP=1 ROUNDS=1 DAYS="1 14" REPORTDB=$2 DURATION=$4 SKIP_IMPORT=${5:-1} \
    scripts/days-scaling.sh $PG/$3 $R/days-$1 > $R/days-$1.log 2>&1
  date -u +%FT%TZ > $R/$1-done
}
round old1 $2 s10k 30 0
for d in 1 14; do
  psql -qAt $PG/postgres -c "DROP DATABASE IF EXISTS s10kn_${d}d" \
    -c "CREATE DATABASE s10kn_${d}d TEMPLATE s10k_${d}d STRATEGY FILE_COPY"
  /usr/bin/time -f "migrate ${d}d: %e s, %M KB" $1 migrate --database $PG/s10kn_${d}d >> $R/migrate.log 2>&1
done
round new1 $1 s10kn 30
round old2 $2 s10k 0
round new2 $1 s10kn 0
