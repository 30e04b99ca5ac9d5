#!/bin/bash
# pg-cpu-per-report.sh BIN DB PORT CONC LIMIT
# Ingests the first LIMIT reports of the medium fleet (/work/data-small/fleet-medium.jsonl.gz,
# ../shared/bench/fleet.py --scale medium) with ingest.py at CONC connections into a fresh
# PostgreSQL database DB through BIN serve on PORT, and prints the end-to-end rate, the CPU
# of all postgres processes per report (utime+stime from /proc, the backends alive at the end,
# including ingest.py's count polls), the server's CPU per report and the number of commit batches.
#   PRESQL='...'   SQL run in DB after the migrations, before the ingest (experiments: drop a trigger)
#   NICE='nice -n 10'  runs the server at a lower priority
#   SENV='NAME=value ...'  environment for the server (REPORTDB_WRITERS=2, GOGC=100)
BIN=$1; DB=$2; PORT=$3; C=$4; L=$5
runuser -u postgres -- psql -qAt -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB" >/dev/null 2>&1
rm -rf /tmp/pi-$PORT; mkdir -p /tmp/pi-$PORT
env $SENV $NICE $BIN serve --listen 127.0.0.1:$PORT --report-ttl 0 --data-dir /tmp/pi-$PORT/data --database postgres://postgres@127.0.0.1:5432/$DB > /tmp/pi-$PORT/log 2>&1 &
SP=$!
sleep 3
[ -n "$PRESQL" ] && runuser -u postgres -- psql -qAt -d $DB -c "$PRESQL"
pgt() { local s=0; for p in $(pgrep -f "postgres"); do read -r u st < <(awk '{print $14, $15}' /proc/$p/stat 2>/dev/null) && s=$((s+u+st)); done; echo $s; }
svt() { awk '{print $14+$15}' /proc/$SP/stat; }
a=$(pgt); b=$(svt)
python3 /work/shared/bench/ingest.py http://127.0.0.1:$PORT --fleet /work/data-small/fleet-medium.jsonl.gz -c $C --limit $L > /tmp/pi-$PORT/ing.txt 2>&1
c=$(pgt); d=$(svt)
rate=$(grep "end to end" /tmp/pi-$PORT/ing.txt | awk '{print $7}')
batches=$(curl -s http://127.0.0.1:$PORT/metrics | grep -E "^reportdb_ingest_batch_size_count|^reportdb_commit_batch_size_count" | awk '{print $2}' | head -1)
kill $SP; wait $SP 2>/dev/null
echo "conc=$C reports=$L rate=$rate/s pg_ms_per_report=$(echo "scale=3; ($c-$a)*10/$L" | bc) server_ms_per_report=$(echo "scale=3; ($d-$b)*10/$L" | bc) batches=$batches"
