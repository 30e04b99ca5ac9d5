#!/bin/bash
# strace the server's fsyncs during a spool-mode ingest
B=$1; PORT=8321; DB=pgst
runuser -u postgres -- psql -qAt -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB" >/dev/null 2>&1
rm -rf /tmp/st-$PORT; mkdir -p /tmp/st-$PORT
REPORTDB_ACKNOWLEDGE=spool $B serve --listen 127.0.0.1:$PORT --report-ttl 0 --data-dir /tmp/st-$PORT/data --database postgres://postgres@127.0.0.1:5432/$DB > /tmp/st-$PORT/log 2>&1 &
SP=$!
sleep 3
strace -f -T -tt --seccomp-bpf -e trace=fsync,fdatasync,ftruncate,pwrite64,write -p $SP -o /tmp/st-$PORT/strace.txt &
STP=$!
sleep 1
python3 /work/shared/bench/ingest.py http://127.0.0.1:$PORT --fleet /work/data-small/fleet-medium.jsonl.gz -c 8 --limit 8000 > /tmp/st-$PORT/ing.txt 2>&1
kill $STP; sleep 1; kill $SP; wait $SP 2>/dev/null
grep -E "end to end|ack latency" /tmp/st-$PORT/ing.txt
