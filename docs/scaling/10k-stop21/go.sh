#!/usr/bin/env bash
# stop 21, on a fresh machine: wait for the fleet (scripts/fleet-days.py
# --nodes 10000 --days 1,14 --outdir $D), import both windows with NEW and
# measure the query mix (round 1, with the concurrent phase), then OLD and
# NEW again on the same databases (rounds old and 2). Run at stop 21 with
# NEW = 722a8d3, OLD = b47edfa, and stopped after round 1, which showed the
# deep page planned blind (fixed in 9801474); the rounds on the same
# databases were then measured with rounds.sh.
#   go.sh NEW_BINARY OLD_BINARY   (built beforehand from clean trees)
set -u
[[ -x "${1:-}" && -x "${2:-}" ]] || { echo "usage: $0 NEW_BINARY OLD_BINARY" >&2; exit 2; }
cd "$(dirname "$0")/../../.."
D=/work/data-10k; R=$D/results-stop21; mkdir -p $R
PG=postgres://postgres@127.0.0.1:5432
while [[ ! -e $D/fleet-10000n-14d.jsonl.gz || ! -e $D/fleet-10000n-1d.jsonl.gz ]]; do sleep 20; done
date -u +%FT%TZ > $R/fleet-done
echo "$1 $2" > $R/binaries
common="NODES=10000 DATA=$D K=5 WARMUP=1 ROUNDS=1"
env $common REPORTDB=$1 DURATION=30 DAYS="1 14" scripts/days-scaling.sh $PG/s10k $R/days-r1 > $R/days-r1.log 2>&1
date -u +%FT%TZ > $R/import-done
env $common REPORTDB=$2 DURATION=0 DAYS="1 14" SKIP_IMPORT=1 scripts/days-scaling.sh $PG/s10k $R/days-old > $R/days-old.log 2>&1
env $common REPORTDB=$1 DURATION=0 DAYS="1 14" SKIP_IMPORT=1 scripts/days-scaling.sh $PG/s10k $R/days-r2 > $R/days-r2.log 2>&1
date -u +%FT%TZ > $R/queries-done
