#!/usr/bin/env bash
# What a rollup table's rewrite (VACUUM FULL: an ACCESS EXCLUSIVE lock for
# as long as the copy takes, as `reportdb import`'s ShrinkAfterLoad takes
# after a bulk load) does to ingest and to the reports page meanwhile.
#
#   rewrite-lock.sh BINARY DATABASE_URL PROBE OUT [TABLE...]
#
# Serves DATABASE_URL (--report-ttl 0, no retention), posts PROBE (new
# reports) at 8 connections, asks for the first reports page with its total
# every 200 ms, and from 15 s on holds each TABLE (default: distinct_rollup
# event_rollup report_type_rollup) locked ACCESS EXCLUSIVE for 10 s, 10 s
# apart. OUT gets the page's latencies with their start times, the
# server's slow-query lines (with conn wait / sql) and the lock times.
set -euo pipefail
bin=${1:?binary}; db=${2:?database url}; probe=${3:?probe}; out=${4:?out}; shift 4
tables=("$@"); (( ${#tables[@]} )) || tables=(distinct_rollup event_rollup report_type_rollup)
HERE=$(cd "$(dirname "$0")" && pwd)
BENCH=${BENCH:-$HERE/../../../../shared/bench}
port=18531
mkdir -p "$out"; rm -rf "$out/data"
"$bin" serve --listen "127.0.0.1:$port" --database "$db" --data-dir "$out/data" --report-ttl 0 \
  --slow-query 500ms > "$out/server.log" 2>&1 &
spid=$!
trap 'kill $spid 2>/dev/null || true' EXIT
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$port/status/v1/services" && break; sleep 0.2; done
"$HERE/../../../scripts/reports-page-probe.sh" "http://127.0.0.1:$port" $(( 15 + 20 * ${#tables[@]} + 5 )) \
  > "$out/queries.txt" &
qpid=$!
python3 "$BENCH/ingest.py" "http://127.0.0.1:$port" --fleet "$probe" --concurrency 8 \
  --no-wait --json-out "$out/ingest.json" > "$out/ingest.txt" 2>&1 &
ipid=$!
sleep 15
for t in "${tables[@]}"; do
  echo "$(date -u +%T.%3N) lock $t requested" >> "$out/locks.txt"
  psql -Atq "$db" -c "BEGIN" -c "LOCK TABLE $t IN ACCESS EXCLUSIVE MODE" \
    -c "SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'HH24:MI:SS.MS') || ' lock $t granted'" \
    -c "SELECT pg_sleep(10)" -c "COMMIT" | grep granted >> "$out/locks.txt"
  echo "$(date -u +%T.%3N) lock $t released" >> "$out/locks.txt"
  sleep 10
done
wait $qpid || true
wait $ipid || true
grep 'slow query' "$out/server.log" > "$out/slow-query.log" || true
cat "$out/locks.txt"
grep -iE "reports/s|ack latency" "$out/ingest.txt" | head -3
"$HERE/../../../scripts/reports-page-probe.sh" --summary "$out/queries.txt"
echo "page requests over 500 ms:"; awk '$3 > 0.5' "$out/queries.txt"
