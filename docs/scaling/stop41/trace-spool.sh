#!/bin/bash
# trace-spool.sh BIN GOMAXPROCS: a Go execution trace of 3 s in the middle of a spool-mode ingest
B=$1; G=$2; PORT=8322; DB=pgtr
runuser -u postgres -- psql -qAt -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB" >/dev/null 2>&1
rm -rf /tmp/tr-$PORT; mkdir -p /tmp/tr-$PORT
GOMAXPROCS=$G REPORTDB_ACKNOWLEDGE=spool $B serve --listen 127.0.0.1:$PORT --debug-listen 127.0.0.1:6061 --report-ttl 0 --data-dir /tmp/tr-$PORT/data --database postgres://postgres@127.0.0.1:5432/$DB > /tmp/tr-$PORT/log 2>&1 &
SP=$!
sleep 3
(sleep 4; curl -s -o /tmp/tr-$PORT/trace.out "http://127.0.0.1:6061/debug/pprof/trace?seconds=3") &
python3 /work/shared/bench/ingest.py http://127.0.0.1:$PORT --fleet /work/data-small/fleet-medium.jsonl.gz -c 8 --limit 12000 > /tmp/tr-$PORT/ing.txt 2>&1
wait %2 2>/dev/null; sleep 1
kill $SP; wait $SP 2>/dev/null
grep -E "end to end|ack latency" /tmp/tr-$PORT/ing.txt
