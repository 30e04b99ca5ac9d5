#!/bin/bash
# perf-postgres.sh BIN DB PORT CONC LIMIT OUT
# perf record (cpu-clock, call graphs) of the database's backends for 10 s in the middle of an
# ingest of LIMIT medium-fleet reports at CONC connections; OUT.perf.data for perf report.
BIN=$1; DB=$2; PORT=$3; C=$4; L=$5; OUT=$6
runuser -u postgres -- psql -qAt -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB" >/dev/null 2>&1
rm -rf /tmp/pi-$PORT; mkdir -p /tmp/pi-$PORT
$BIN serve --listen 127.0.0.1:$PORT --report-ttl 0 --data-dir /tmp/pi-$PORT/data --database postgres://postgres@127.0.0.1:5432/$DB > /tmp/pi-$PORT/log 2>&1 &
SP=$!
sleep 3
python3 /work/shared/bench/ingest.py http://127.0.0.1:$PORT --fleet /work/data-small/fleet-medium.jsonl.gz -c $C --limit $L > $OUT.ingest.txt 2>&1 &
IP=$!
sleep 10
perf record -e cpu-clock -g -o $OUT.perf.data -p $(pgrep -d, -f "postgres: 15/main: postgres $DB") -- sleep 10 >/dev/null 2>&1
wait $IP
kill $SP; wait $SP 2>/dev/null
