#!/bin/bash
# rss-ingest-then-mix.sh ENV... : a fresh database, the medium fleet ingested through the server (BIN, default
# /tmp/rdb-head) at 8 connections, then queries.py -k 20 and its 30 s concurrent mix at 8; the server RSS
# after each phase and its peak (VmRSS every 0.2 s). ENV is passed to the server, e.g. GOGC=200.
PORT=8331
runuser -u postgres -- psql -qAt -c "DROP DATABASE IF EXISTS rssb WITH (FORCE)" -c "CREATE DATABASE rssb" >/dev/null 2>&1
rm -rf /tmp/rssb-d; env "$@" ${BIN:-/tmp/rdb-head} serve --listen 127.0.0.1:$PORT --report-ttl 0 --data-dir /tmp/rssb-d --database postgres://postgres@127.0.0.1:5432/rssb > /tmp/rssb.log 2>&1 &
SP=$!; sleep 3
( while kill -0 $SP 2>/dev/null; do r=$(awk '/VmRSS/{print $2}' /proc/$SP/status 2>/dev/null); [ -n "$r" ] && echo "$(date +%s) $r"; sleep 0.2; done ) > /tmp/rssb-samples.txt &
MP=$!
python3 /work/shared/bench/ingest.py http://127.0.0.1:$PORT --fleet /work/data-small/fleet-medium.jsonl.gz -c 8 2>&1 | grep "end to end"
sleep 10; echo "after ingest+10s: $(awk '/VmRSS/{print $2/1024}' /proc/$SP/status) MB; peak so far $(awk '{print $2}' /tmp/rssb-samples.txt | sort -n | tail -1 | awk '{printf "%.1f", $1/1024}') MB"
python3 /work/shared/bench/queries.py http://127.0.0.1:$PORT --fleet /work/data-small/fleet-medium.jsonl.gz -k 20 --duration 30 --concurrency 8 2>&1 | grep -E "concurrent \(" | head -1
sleep 10; echo "after queries+10s: $(awk '/VmRSS/{print $2/1024}' /proc/$SP/status) MB; peak overall $(awk '{print $2}' /tmp/rssb-samples.txt | sort -n | tail -1 | awk '{printf "%.1f", $1/1024}') MB  env=$*"
kill $SP; wait $SP 2>/dev/null; kill $MP 2>/dev/null
