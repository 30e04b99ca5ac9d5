#!/usr/bin/env bash
# ack-under-load.sh URL LOADED_FLEET PROBE_FLEET [DURATION]
#
# How quickly reportdb acknowledges reports while 8 clients run the heaviest
# queries of the reference kit's query mix: the server at URL must already
# hold LOADED_FLEET (e.g. fleet.py --scale medium, loaded with ingest.py);
# PROBE_FLEET (a small fleet with another seed and end date, so that its
# reports are new) is submitted at 5 reports/s by 2 clients during the query
# load. Writes bench/results/ack-under-load.txt: the probe's ack latency
# (p50/p90/p99) and the query load's figures. Run it on a quiet machine;
# compare with a run without query load (DURATION=0).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_shared
URL=${1:?url}; LOADED=${2:?loaded fleet}; PROBE=${3:?probe fleet}; DURATION=${4:-80}
HEAVY=distinct_resources_day,aggregate_event_counts,pb_index_event_counts,reports_page_deep,regex_resource_title,pql_events_by_type_day,latest_events_by_status
out=$WORK/ack-under-load; mkdir -p "$out"
result=$RESULTS/ack-under-load.txt
qpid=
trap '[ -n "$qpid" ] && kill $qpid 2>/dev/null || true' EXIT
{
  header "Acknowledgement latency under the heavy queries (8 connections, ${DURATION}s) at $URL"
  if [ "$DURATION" != 0 ]; then
    python3 "$BENCH/queries.py" "$URL" --fleet "$LOADED" -k 1 --warmup 0 -c 8 -d "$DURATION" --engine python \
      --only "$HEAVY" --json-out "$out/queries.json" > "$out/queries.log" 2>&1 &
    qpid=$!
    sleep 5 # the query load is running
  fi
  python3 "$BENCH/ingest.py" "$URL" --fleet "$PROBE" -c 2 --rate 5 --no-wait 2>&1 | grep -Ei "ack|latency|reports/s|error" || true
  if [ -n "$qpid" ]; then
    wait "$qpid" || true
    grep -Ei "concurrent|req/s|non-200|p99" "$out/queries.log" | tail -5 || true
  fi
} | tee "$result"
