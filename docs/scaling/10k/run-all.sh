#!/usr/bin/env bash
# 10,000 nodes x 1 and 14 days on PostgreSQL: days-scaling for each window,
# and the ingest probe (30,000 newer reports through /pdb/cmd/v1) into an
# empty database and into the 14-day one.
set -x
cd /work/main
B=/work/data-10k/reportdb-deeec5b
R=/work/data-10k/results
PG=postgres://postgres@127.0.0.1:5432
common="NODES=10000 DATA=/work/data-10k REPORTDB=$B K=5 WARMUP=1 ROUNDS=1 DURATION=30"
probe() { # probe NAME DBURL
  mkdir -p $R/probe-$1 /tmp/probe-$1
  $B serve --listen 127.0.0.1:18700 --database "$2" --report-ttl 0 --data-dir /tmp/probe-$1/data --spool-dir /tmp/probe-$1/spool > $R/probe-$1/server.log 2>&1 &
  pid=$!
  for i in $(seq 60); do curl -sf http://127.0.0.1:18700/pdb/meta/v1/version >/dev/null && break; sleep 1; done
  python3 /work/shared/bench/ingest.py http://127.0.0.1:18700 --fleet /work/data-10k/probe-10000n-3runs.jsonl.gz --concurrency 8 --json-out $R/probe-$1/ingest.json > $R/probe-$1/ingest.txt 2>&1
  ps -o rss= -p $pid > $R/probe-$1/rss_kb
  kill $pid; wait $pid
}
env $common DAYS=1 scripts/days-scaling.sh $PG/s10k $R/d1 > $R/d1.log 2>&1
psql -qAt $PG/postgres -c "DROP DATABASE IF EXISTS probe_empty WITH (FORCE)" -c "CREATE DATABASE probe_empty"
probe empty $PG/probe_empty
env $common DAYS=14 scripts/days-scaling.sh $PG/s10k $R/d14 > $R/d14.log 2>&1
# the probe writes into the 14-day database: after its queries were measured
probe d14 $PG/s10k_14d
echo done > $R/done
