#!/usr/bin/env bash
# stop 21: query rounds on the databases go.sh imported (s10k_1d,
# s10k_14d), alternating binaries on the same data: NEW (with the
# concurrent phase), OLD, NEW again. Each binary migrates the databases to
# its schema at start (OLD runs unchanged on a newer one).
#   rounds.sh NEW_BINARY OLD_BINARY RESULTS_DIR
set -u
[[ -x "${1:-}" && -x "${2:-}" && -n "${3:-}" ]] || { echo "usage: $0 NEW_BINARY OLD_BINARY RESULTS_DIR" >&2; exit 2; }
cd "$(dirname "$0")/../../.."
R=$3; mkdir -p $R
PG=postgres://postgres@127.0.0.1:5432
echo "$1 $2" > $R/binaries
run() { # run NAME BINARY DURATION
  env NODES=10000 DATA=/work/data-10k K=5 WARMUP=1 ROUNDS=1 SKIP_IMPORT=1 DAYS="1 14" \
    REPORTDB=$2 DURATION=$3 scripts/days-scaling.sh $PG/s10k $R/days-$1 > $R/days-$1.log 2>&1
  date -u +%FT%TZ > $R/$1-done
}
run new1 $1 30
run old $2 0
run new2 $1 0
