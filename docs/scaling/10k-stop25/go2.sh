#!/usr/bin/env bash
# stop 25, second part: the 14 d / 1 d ratio on the databases go.sh
# imported (IMPORT_ONLY=1), for each binary given in turn: queries.py -k 20
# after 3 unmeasured runs, two rounds, the windows alternated in each, the
# concurrent phase (30 s) at both windows in the first round.
#   go2.sh NAME=BINARY...     e.g. new=reportdb-4c7a215 old=reportdb-2279ee6
set -u
[[ $# -gt 0 ]] || { echo "usage: $0 NAME=BINARY..." >&2; exit 2; }
cd "$(dirname "$0")/../../.."
D=/work/data-10k; R=$D/results-stop25; mkdir -p $R
days() { scripts/days-10k.sh $R "$@"; } # days NAME BINARY WINDOWS K ROUNDS DURATION SKIP_IMPORT
for nb in "$@"; do
  days ratio-${nb%%=*} ${nb#*=} "1 14" 20 2 30 1
done
date -u +%FT%TZ > $R/go2-done
