#!/usr/bin/env bash
# stop 35: the 10,000-node fleet at 1 and 14 days (scripts/fleet-days.py
# --nodes 10000 --days 1,14 --outdir /work/data-10k) with this stop's
# server (report_type_rollup: reports per day and the totals of unfiltered
# pages from a row per bucket and report type), PostgreSQL's defaults:
# stop 31's driver (import both windows, the latest-report tables' state,
# the 14 d / 1 d ratio) with the ratio over ROUNDS (4) rounds of -k K (30),
# and no sustained rounds unless SKIP_SUSTAINED is set empty. Results in
# /work/data-10k/results-stop35.
#   go.sh BINARY   (SKIP_IMPORT, K, ROUNDS as stop 31's)
RESULTS=${RESULTS:-/work/data-10k/results-stop35} K=${K:-30} ROUNDS=${ROUNDS:-4} \
  SKIP_SUSTAINED=${SKIP_SUSTAINED-1} exec "$(dirname "$0")/../10k-stop31/go.sh" "$@"
