#!/usr/bin/env bash
# stop 42: stop 36's measurement again, with the final code of stops 37-41
# (the title search's page without its join, a page of reports reading its
# events apart, the spool's acknowledgement mode, whose default `commit`
# keeps the ingest path of stop 36), on this stop's machine: the
# 10,000-node fleet at 1 and 14 days (scripts/fleet-days.py --nodes 10000
# --days 1,14 --outdir /work/data-10k, 41 min here), stop 31's driver
# (import both windows with the import's peak RSS sampled, the latest-report
# tables' state, the 14 d / 1 d ratio over ROUNDS (6) interleaved rounds of
# -k K (30), the concurrent phase in the first), then sustained ingest into
# the 14-day database against an empty one (10k-stop28/sustained.sh, two
# rounds from February 13th). Results in /work/data-10k/results-stop42.
#   go.sh BINARY   (SKIP_IMPORT, K, ROUNDS as stop 31's)
RESULTS=${RESULTS:-/work/data-10k/results-stop42} K=${K:-30} ROUNDS=${ROUNDS:-6} \
  SKIP_SUSTAINED=${SKIP_SUSTAINED-} MONTH=${MONTH:-02} DAY=${DAY:-13} ROUNDS4=${ROUNDS4:-2} \
  exec "$(dirname "$0")/../10k-stop31/go.sh" "$@"
