#!/usr/bin/env bash
# second ingest probe: 30k newer reports into a fresh empty database and into the 14-day one, alternating
B=/work/data-10k/reportdb-c19b8e8; R=/work/data-10k/results/probe2; mkdir -p $R
PG=postgres://postgres@127.0.0.1:5432
probe() { # NAME DBURL FLEET
  rm -rf /tmp/p2-$1; mkdir -p /tmp/p2-$1
  $B serve --listen 127.0.0.1:18720 --database "$2" --report-ttl 0 --data-dir /tmp/p2-$1/data --spool-dir /tmp/p2-$1/spool > $R/server-$1.log 2>&1 &
  pid=$!
  for i in $(seq 60); do curl -sf http://127.0.0.1:18720/pdb/meta/v1/version >/dev/null && break; sleep 1; done
  python3 /work/shared/bench/ingest.py http://127.0.0.1:18720 --fleet $3 --concurrency 8 --json-out $R/$1.json > $R/$1.txt 2>&1
  ps -o rss= -p $pid > $R/$1.rss_kb
  kill $pid; wait $pid
}
psql -qAt $PG/postgres -c "DROP DATABASE IF EXISTS probe_empty2 WITH (FORCE)" -c "CREATE DATABASE probe_empty2"
probe 14d $PG/s10k_14d /work/data-10k/probe2.jsonl.gz
probe empty $PG/probe_empty2 /work/data-10k/probe2.jsonl.gz
