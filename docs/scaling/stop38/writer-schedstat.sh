#!/bin/bash
# writer-schedstat.sh BIN DB PORT CONC LIMIT
# On-CPU and run-queue time (/proc/PID/schedstat) of the database backends over 10 s in the
# middle of an ingest of LIMIT medium-fleet reports at CONC connections, and the batches committed then.
BIN=$1; DB=$2; PORT=$3; C=$4; L=$5
runuser -u postgres -- psql -qAt -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB" >/dev/null 2>&1
rm -rf /tmp/pi-$PORT; mkdir -p /tmp/pi-$PORT
$BIN serve --listen 127.0.0.1:$PORT --report-ttl 0 --data-dir /tmp/pi-$PORT/data --database postgres://postgres@127.0.0.1:5432/$DB > /tmp/pi-$PORT/log 2>&1 &
SP=$!
sleep 3
python3 /work/shared/bench/ingest.py http://127.0.0.1:$PORT --fleet /work/data-small/fleet-medium.jsonl.gz -c $C --limit $L > /tmp/pi-$PORT/ing.txt 2>&1 &
IP=$!
sleep 8
declare -A A
for p in $(pgrep -f "postgres: 15/main: postgres $DB"); do A[$p]=$(cat /proc/$p/schedstat); done
b0=$(curl -s http://127.0.0.1:$PORT/metrics | grep -E "^reportdb_commit_batch_size_count" | awk '{print $2}')
sleep 10
b1=$(curl -s http://127.0.0.1:$PORT/metrics | grep -E "^reportdb_commit_batch_size_count" | awk '{print $2}')
for p in "${!A[@]}"; do set -- ${A[$p]}; r0=$1; w0=$2; set -- $(cat /proc/$p/schedstat); echo "backend $p: on-cpu $(( ($1-r0)/1000000 )) ms, runqueue wait $(( ($2-w0)/1000000 )) ms over 10 s"; done
echo "batches in the 10 s: $((b1-b0))"
wait $IP; kill $SP; wait $SP 2>/dev/null
grep "end to end" /tmp/pi-$PORT/ing.txt
