#!/usr/bin/env bash
# stop 24, second part: the 14 d / 1 d ratio on the databases go.sh
# imported, queries.py -k 20 after 3 unmeasured runs, the windows
# alternated in each round: NEW two rounds, then OLD two.
#   go2.sh NEW_BINARY OLD_BINARY
set -u
[[ -x "${1:-}" && -x "${2:-}" ]] || { echo "usage: $0 NEW_BINARY OLD_BINARY" >&2; exit 2; }
cd "$(dirname "$0")/../../.."
D=/work/data-10k; R=$D/results-stop24; mkdir -p $R
PG=postgres://postgres@127.0.0.1:5432
days() { # days NAME BINARY WINDOWS K ROUNDS DURATION SKIP_IMPORT
  env NODES=10000 DATA=$D K=$4 WARMUP=3 ROUNDS=$5 DAYS="$3" REPORTDB=$2 DURATION=$6 SKIP_IMPORT=$7 \
    scripts/days-scaling.sh $PG/s10k $R/days-$1 > $R/days-$1.log 2>&1
  date -u +%FT%TZ > $R/$1-done
}
days ratio-new-1 $1 "1 14" 20 2 0 1
days ratio-old-1 $2 "1 14" 20 2 0 1
date -u +%FT%TZ > $R/go2-done
