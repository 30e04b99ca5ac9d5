#!/usr/bin/env bash
# stop 32: the 10,000-node fleet at 1 and 14 days (scripts/fleet-days.py
# --nodes 10000 --days 1,14 --outdir /work/data-10k) with this stop's
# server (stop 31's, and a narrowed head planned with its values bounded
# on both sides), PostgreSQL's defaults: stop 31's driver (import both
# windows, the latest-report tables' state, the ratio, the sustained
# rounds unless SKIP_SUSTAINED=1), with the ratio over 5 rounds of
# -k 40 instead of 3 of -k 20. Stop 31 measured it while other work
# loaded the machine (load averages 3-5 on 2 cores; a round of the mix
# takes ~4 s, so a burst of load lands in one window's round): here on an
# idle machine. Results in /work/data-10k/results-stop32.
#   go.sh BINARY   (SKIP_IMPORT, SKIP_SUSTAINED, K, ROUNDS as stop 31's)
RESULTS=${RESULTS:-/work/data-10k/results-stop32} K=${K:-40} ROUNDS=${ROUNDS:-5} \
  exec "$(dirname "$0")/../10k-stop31/go.sh" "$@"
