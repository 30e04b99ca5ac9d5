#!/bin/bash
# kill9.sh BIN: spool-mode ingest, kill -9 of the server mid-way, restart, count
B=$1; PORT=8325; DB=pgk9
runuser -u postgres -- psql -qAt -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB" >/dev/null 2>&1
rm -rf /tmp/k9; mkdir -p /tmp/k9
start() { REPORTDB_ACKNOWLEDGE=spool $B serve --listen 127.0.0.1:$PORT --report-ttl 0 --data-dir /tmp/k9/data --database postgres://postgres@127.0.0.1:5432/$DB >> /tmp/k9/log 2>&1 & SP=$!; }
start; sleep 3
python3 /work/shared/bench/ingest.py http://127.0.0.1:$PORT --fleet /work/data-small/fleet-medium.jsonl.gz -c 8 --limit 8000 --no-wait --json-out /tmp/k9/ing.json > /tmp/k9/ing.txt 2>&1 &
IP=$!
sleep 6.5
kill -9 $SP
wait $IP
grep -E "submitted|errors" /tmp/k9/ing.txt | head -3
python3 - <<'PY'
import json
d=json.load(open('/tmp/k9/ing.json'))
print({k:d[k] for k in d if k in ('accepted','errors','submitted','http_errors','ok')})
PY
echo "rows right after the kill: $(runuser -u postgres -- psql -qAt -d $DB -c 'select count(*) from reports')"
ls -la /tmp/k9/data/spool/
start; sleep 5
for i in 1 2 3 4 5 6; do c=$(runuser -u postgres -- psql -qAt -d $DB -c 'select count(*) from reports'); echo "after restart: $c rows"; sleep 2; done
runuser -u postgres -- psql -qAt -d $DB -c "select count(*), count(distinct hash) from reports"
grep -E "spooled reports found|torn|delivered|drained" /tmp/k9/log | head
kill $SP; wait $SP 2>/dev/null
