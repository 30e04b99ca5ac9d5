#!/usr/bin/env bash
# stop 36: the 10,000-node fleet at 1 and 14 days (scripts/fleet-days.py
# --nodes 10000 --days 1,14 --outdir /work/data-10k) with this stop's
# server (report_keys_archive, migration 0020: the keys of the days that
# have ended in one index by key, so that a lookup by hash reads one index
# whatever the days kept), PostgreSQL's defaults: stop 31's driver (import
# both windows, the latest-report tables' state, the 14 d / 1 d ratio) with
# the ratio over ROUNDS (6) interleaved rounds of -k K (30), and no
# sustained rounds unless SKIP_SUSTAINED is set empty. Results in
# /work/data-10k/results-stop36.
#   go.sh BINARY   (SKIP_IMPORT, K, ROUNDS as stop 31's)
RESULTS=${RESULTS:-/work/data-10k/results-stop36} K=${K:-30} ROUNDS=${ROUNDS:-6} \
  SKIP_SUSTAINED=${SKIP_SUSTAINED-1} exec "$(dirname "$0")/../10k-stop31/go.sh" "$@"
