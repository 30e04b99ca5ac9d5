#!/usr/bin/env bash
# 10,000 nodes x 1, 7 and 14 days on PostgreSQL: days-scaling for the three
# windows (imports, then the query rounds), and the ingest probe (29,704
# newer reports through /pdb/cmd/v1, 8 connections) into an empty database
# and into the 14-day one, with the server's RSS sampled every 2 s.
#
# The data (scripts/fleet-days.py --nodes 10000 --days 1,7,14 --outdir
# $DATA, ~75 min; the probe: ../shared/bench/fleet.py --nodes 10000 --runs 3
# --end 2026-01-15T13:30:00Z --out $DATA/probe-10000n-3runs.jsonl.gz).
set -x
cd "$(dirname "$0")/../../.."
DATA=${DATA:-/work/data-10k}
B=${B:?the reportdb binary}
R=${R:-$DATA/results}
PG=${PG:-postgres://postgres@127.0.0.1:5432}
common="NODES=10000 DATA=$DATA REPORTDB=$B K=${K:-5} WARMUP=1 ROUNDS=${ROUNDS:-1} DURATION=30"
probe() { # probe NAME DBURL
  mkdir -p $R/probe-$1 /tmp/probe-$1
  rm -rf /tmp/probe-$1/spool
  $B serve --listen 127.0.0.1:18700 --database "$2" --report-ttl 0 --data-dir /tmp/probe-$1/data \
    --spool-dir /tmp/probe-$1/spool > $R/probe-$1/server.log 2>&1 &
  pid=$!
  for i in $(seq 60); do curl -sf http://127.0.0.1:18700/pdb/meta/v1/version >/dev/null && break; sleep 1; done
  (while kill -0 $pid 2>/dev/null; do ps -o rss= -p $pid; sleep 2; done) > $R/probe-$1/rss_kb_samples &
  python3 ../shared/bench/ingest.py http://127.0.0.1:18700 --fleet $DATA/probe-10000n-3runs.jsonl.gz \
    --concurrency 8 --json-out $R/probe-$1/ingest.json > $R/probe-$1/ingest.txt 2>&1
  ps -o rss= -p $pid > $R/probe-$1/rss_kb
  kill $pid; wait $pid
}
# the imports (each window's queries follow its import), then one more round
# over the windows in turn (SKIP_IMPORT keeps the databases and import figures;
# IMPORT_DAYS: import only these windows, the others being loaded already)
for d in ${IMPORT_DAYS:-${DAYS:-1 7 14}}; do
  env $common DAYS=$d scripts/days-scaling.sh $PG/s10k $R/days > $R/days-$d.log 2>&1
done
env $common DAYS="${DAYS:-1 7 14}" SKIP_IMPORT=1 scripts/days-scaling.sh $PG/s10k $R/days > $R/days.log 2>&1
psql -qAt $PG/postgres -c "DROP DATABASE IF EXISTS probe_empty WITH (FORCE)" -c "CREATE DATABASE probe_empty"
probe empty $PG/probe_empty
# the probe writes into the 14-day database: after its queries were measured
probe d14 $PG/s10k_14d
echo done > $R/done
