#!/usr/bin/env bash
# ack-under-load.sh URL LOADED_FLEET PROBE_FLEET [DURATION]
#
# Measures how quickly reportdb acknowledges reports while 8 clients run the
# heaviest queries of the shared bench mix (issue 11's budget check): the
# server at URL must already hold LOADED_FLEET (e.g. ../shared/bench/fleet.py
# --scale medium, loaded with ingest.py); PROBE_FLEET (a small fleet with
# another seed and end date, so that its reports are new) is submitted at
# 5 reports/s by 2 clients during the query load. Prints the probe's ack
# latency (p50/p90/p99) and the query load's figures. Run it on a quiet
# machine; compare with a run without query load (DURATION=0).
set -euo pipefail
URL=$1; LOADED=$2; PROBE=$3; DURATION=${4:-80}
BENCH=${REPORTDB_SHARED:-$(cd "$(dirname "$0")/../.." && pwd)/shared}/bench
HEAVY=distinct_resources_day,aggregate_event_counts,pb_index_event_counts,reports_page_deep,regex_resource_title,pql_events_by_type_day,latest_events_by_status
out=$(mktemp -d)
trap 'kill $qpid 2>/dev/null || true; rm -rf "$out"' EXIT
qpid=
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
