#!/usr/bin/env bash
# stop 19: two ingest probes back to back per database, one server each
# (is the 14-day database's gap a transient of the day partition's free
# space holes after a bulk import?). steady.sh BINARY DBNAME OUT FILE...
set -u
B=$1; db=$2; out=$3; shift 3
mkdir -p $out; rm -rf /tmp/steady-$db; mkdir -p /tmp/steady-$db
$B serve --listen 127.0.0.1:18701 --database postgres://postgres@127.0.0.1:5432/$db --report-ttl 0 \
  --data-dir /tmp/steady-$db/data --spool-dir /tmp/steady-$db/spool > $out/server.log 2>&1 &
pid=$!
for i in $(seq 60); do curl -sf http://127.0.0.1:18701/pdb/meta/v1/version >/dev/null && break; sleep 1; done
for i in $(seq 300); do
  curl -sf http://127.0.0.1:18701/metrics | grep -q '^reportdb_fleet_state_loaded_timestamp_seconds [1-9]' && break
  sleep 0.2
done
n=0
for f in "$@"; do
  n=$((n+1))
  python3 /work/shared/bench/ingest.py http://127.0.0.1:18701 --fleet $f --concurrency 8 \
    --json-out $out/ingest-$n.json > $out/ingest-$n.txt 2>&1
  grep "end to end" $out/ingest-$n.txt
done
kill $pid; wait $pid
