#!/usr/bin/env bash
# stop 33: the 10,000-node fleet at 1 and 14 days (scripts/fleet-days.py
# --nodes 10000 --days 1,14 --outdir /work/data-10k) with this stop's
# server (latest_rollup: the latest reports' event counts kept at write
# time), PostgreSQL's defaults: stop 31's driver (import both windows, the
# latest-report tables' state, the ratio, then the sustained rounds unless
# SKIP_SUSTAINED=1) with the ratio over 5 rounds of -k 40 on an idle
# machine, as stop 32, and two sustained rounds. Results in
# /work/data-10k/results-stop33.
#   go.sh BINARY   (SKIP_IMPORT, SKIP_SUSTAINED, K, ROUNDS, ROUNDS4 as stop 31's)
RESULTS=${RESULTS:-/work/data-10k/results-stop33} K=${K:-40} ROUNDS=${ROUNDS:-5} ROUNDS4=${ROUNDS4:-2} \
  exec "$(dirname "$0")/../10k-stop31/go.sh" "$@"
