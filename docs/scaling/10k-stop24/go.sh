#!/usr/bin/env bash
# stop 24: import the 1- and 14-day windows of the 10,000-node fleet with
# NEW (scripts/fleet-days.py --nodes 10000 --days 1,14 --outdir
# /work/data-10k), the 14-day one with the concurrent phase (30 s), then
# the 14 d / 1 d ratio with six rounds of queries.py -k 20 on the loaded
# databases, OLD and NEW alternated per round when OLD is given.
#   go.sh NEW_BINARY [OLD_BINARY]     (IMPORT_ONLY=1: the imports alone)
set -u
[[ -x "${1:-}" ]] || { echo "usage: $0 NEW_BINARY [OLD_BINARY]" >&2; exit 2; }
cd "$(dirname "$0")/../../.."
D=/work/data-10k; R=$D/results-stop24; mkdir -p $R
days() { scripts/days-10k.sh $R "$@"; } # days NAME BINARY WINDOWS K ROUNDS DURATION SKIP_IMPORT
if [[ ! -e $R/import14-done ]]; then
  days import1 $1 1 5 1 0 0
  days import14 $1 14 5 1 30 0
fi
[[ -n "${IMPORT_ONLY:-}" ]] && exit 0
if [[ -n "${2:-}" ]]; then
  for i in 1 2 3; do
    days ratio-new-$i $1 "1 14" 20 2 0 1
    days ratio-old-$i $2 "1 14" 20 2 0 1
  done
else
  days ratio-new $1 "1 14" 20 6 0 1
fi
date -u +%FT%TZ > $R/go-done
