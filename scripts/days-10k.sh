#!/usr/bin/env bash
# days-10k.sh RESULTS NAME BINARY WINDOWS K ROUNDS DURATION SKIP_IMPORT
#
# One measurement of the 10,000-node fleet's windows (scripts/fleet-days.py
# --nodes 10000 --days ... --outdir $DATA, DATA=/work/data-10k by default)
# with scripts/days-scaling.sh on the databases s10k_<D>d of PostgreSQL at
# 127.0.0.1:5432: BINARY measured over WINDOWS ("1 14"), K measured runs
# per query after 3 unmeasured, ROUNDS rounds, DURATION seconds of the
# concurrent phase in round 1 (0: none), SKIP_IMPORT=1 to keep the
# databases. Results in RESULTS/days-NAME (log RESULTS/days-NAME.log), and
# RESULTS/NAME-done holds when it ended. The stops' drivers
# (docs/scaling/10k-stop*/go*.sh) are sequences of these.
set -u
[[ $# -eq 8 ]] || { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2; exit 2; }
R=$(mkdir -p "$1" && cd "$1" && pwd) || exit 1
cd "$(dirname "$0")/.."
env NODES=10000 DATA=${DATA:-/work/data-10k} K=$5 WARMUP=3 ROUNDS=$6 DAYS="$4" REPORTDB=$3 DURATION=$7 SKIP_IMPORT=$8 \
  scripts/days-scaling.sh postgres://postgres@127.0.0.1:5432/s10k "$R/days-$2" > "$R/days-$2.log" 2>&1
date -u +%FT%TZ > "$R/$2-done"
