#!/usr/bin/env bash
# retention-under-load.sh BINARY DATABASE_URL FLEET CUTOFF [PORT] [OUT]
#
# Measures a retention run on PostgreSQL while reports are ingested and
# queries run (issue 10): serves DATABASE_URL with BINARY, a --report-ttl
# chosen so that the first retention run (one --gc-interval, 30 s, after the
# start) deletes the reports older than CUTOFF (RFC 3339, e.g.
# 2026-01-10T06:00:00Z), and meanwhile
#   - posts FLEET (a fleet.py file) with ../shared/bench/ingest.py, 8
#     connections: acknowledgement latency p50/p99, errors;
#   - asks for the first reports page with include_total every 200 ms
#     (reports-page-probe.sh: start time, status and latency of each).
# (ingest.py does not wait for the reports to be queryable: retention
# deletes some meanwhile.) Prints the retention line of the server log (deleted reports, duration)
# and a summary, with how many of the posted reports were new (stored) and
# how many the database already had (duplicates: use a FLEET of new
# reports, e.g. fleet.py --end later than the database's, or the run loads
# the database less than real ingest); everything is kept in OUT (default
# /tmp/retention-PORT).
# The database is changed (reports deleted, reports added): use a copy, e.g.
#   createdb -T loaded_db scratch_copy
set -euo pipefail
bin=${1:?binary}; db=${2:?database url}; fleet=${3:?fleet file}; cutoff=${4:?cutoff}
port=${5:-18513}; out=${6:-/tmp/retention-$port}
HERE=$(cd "$(dirname "$0")" && pwd)
BENCH=${BENCH:-$HERE/../../shared/bench}
mkdir -p "$out"; rm -rf "$out/data"
interval=30
cut=$(date -u -d "$cutoff" +%s)
now=$(date -u +%s)
ttl=$(( now + interval - cut ))s
"$bin" serve --listen "127.0.0.1:$port" --database "$db" --data-dir "$out/data" \
  --report-ttl "$ttl" --gc-interval ${interval}s --log-level info > "$out/server.log" 2>&1 &
spid=$!
trap 'kill $spid 2>/dev/null || true' EXIT
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$port/status/v1/services" && break; sleep 0.2; done
# queries: the first reports page with its total, every 200 ms, for 75 s
"$HERE/reports-page-probe.sh" "http://127.0.0.1:$port" 75 > "$out/queries.txt" &
qpid=$!
python3 "$BENCH/ingest.py" "http://127.0.0.1:$port" --fleet "$fleet" --concurrency 8 \
  --no-wait --json-out "$out/ingest.json" > "$out/ingest.txt" 2>&1 || true
wait $qpid || true
# wait for the retention run to be logged (at most 5 minutes)
for _ in $(seq 300); do grep -q '"retention\|msg=retention' "$out/server.log" && break; sleep 1; done
echo "== retention"; grep -E 'msg=retention|retention failed' "$out/server.log" || echo "no retention run logged"
echo "== ingest"; grep -iE "reports/s|ack|latency|error|fail" "$out/ingest.txt" | head -8
# a probe the database already holds is all duplicates, which write nothing
# (and so do not load the database): say so
curl -s "http://127.0.0.1:$port/metrics" | awk '/^reportdb_ingest_reports_total\{/ && /channel="command"/ {
  match($0, /outcome="[a-z]+"/); o = substr($0, RSTART + 9, RLENGTH - 10); n[o] += $NF }
  END { printf "  stored %d, duplicates %d (the server'"'"'s reportdb_ingest_reports_total)\n", n["stored"], n["duplicate"] }'
echo "== queries (reports page with include_total, every 200 ms)"
"$HERE/reports-page-probe.sh" --summary "$out/queries.txt"
