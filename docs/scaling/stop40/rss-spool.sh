#!/bin/bash
# rss-spool.sh BIN LIMIT NAME=value...: the server's peak RSS (VmHWM) and the end-to-end rate over an
# ingest of the first LIMIT medium-fleet reports at 8 connections into a fresh database, with the
# settings given (REPORTDB_ACKNOWLEDGE=spool REPORTDB_MAX_BATCH=64, say)
BIN=$1; L=$2; shift 2
runuser -u postgres -- psql -qAt -c "DROP DATABASE IF EXISTS rssdb WITH (FORCE)" -c "CREATE DATABASE rssdb" >/dev/null 2>&1
rm -rf /tmp/rss; mkdir -p /tmp/rss
env "$@" $BIN serve --listen 127.0.0.1:8340 --report-ttl 0 --data-dir /tmp/rss/data --database postgres://postgres@127.0.0.1:5432/rssdb > /tmp/rss/log 2>&1 &
SP=$!; sleep 3
python3 /work/shared/bench/ingest.py http://127.0.0.1:8340 --fleet /work/data-small/fleet-medium.jsonl.gz -c 8 --limit $L > /tmp/rss/ing.txt 2>&1
echo "$* rate=$(grep 'end to end' /tmp/rss/ing.txt | awk '{print $7}') $(grep VmHWM /proc/$SP/status)"
kill $SP; wait $SP 2>/dev/null
