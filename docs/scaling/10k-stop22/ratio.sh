#!/usr/bin/env bash
# stop 22: the 14 d / 1 d ratio with more runs than go.sh's rounds: NEW on
# the migrated databases (s10kn_1d, s10kn_14d), three rounds alternating
# the windows (1, 14, 1, 14, 1, 14), 20 measured runs per query each
# (days-scaling.sh keeps, per query and window, the median over rounds).
#   ratio.sh NEW_BINARY
set -u
[[ -x "${1:-}" ]] || { echo "usage: $0 NEW_BINARY" >&2; exit 2; }
cd "$(dirname "$0")/../../.."
D=/work/data-10k; R=$D/results-stop22; mkdir -p $R
env NODES=10000 DATA=$D K=20 WARMUP=3 ROUNDS=3 DAYS="1 14" REPORTDB=$1 DURATION=0 SKIP_IMPORT=1 \
  scripts/days-scaling.sh postgres://postgres@127.0.0.1:5432/s10kn $R/days-ratio > $R/days-ratio.log 2>&1
date -u +%FT%TZ > $R/ratio-done
