#!/usr/bin/env bash
# stop 27: does the report_keys index of a 14-day database (13.3 million
# rows at 10,000 nodes, 400 MB of index) cost ingest? Two otherwise empty
# databases: kb, whose report_keys holds 13,310,000 rows of random keys
# (uniform, as hashtextextended's are; ids negative, so no real report's),
# and ke, whose report_keys is empty; the same probe files (3 runs of every
# node of a new day, docs/scaling/10k-stop22/probes.sh's) into each, the
# order alternated. The difference is the cost of the big key index alone.
#   keys-synthetic.sh BINARY PROBE_DAY_FILE_PREFIX OUT
#   (e.g. /work/data-10k/probe-10000n-3runs-17 for its -0130, -0300, -0430 files)
set -eu
B=$1; P=$2; R=$3; mkdir -p $R
PG=postgres://postgres@127.0.0.1:5432
for db in kb ke; do
  psql -qAt $PG/postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
  $B migrate --database $PG/$db
done
psql -qAt $PG/kb -c "DROP INDEX report_keys_key" \
  -c "INSERT INTO report_keys SELECT (random()*1.8e19 - 9.0e18)::bigint, -g FROM generate_series(1,13310000) g" \
  -c "CREATE INDEX report_keys_key ON report_keys (key, id)" -c "VACUUM ANALYZE report_keys" -c "CHECKPOINT"
psql -qAt $PG/kb -c "SELECT pg_size_pretty(pg_total_relation_size('report_keys')), pg_size_pretty(pg_relation_size('report_keys_key'))" > $R/kb-size.txt
probe() { # probe DB FILE
  local db=$1 f=$2 out=$R/$1-$(basename $2 .jsonl.gz)
  mkdir -p $out; rm -rf /tmp/keys-synth-$db; mkdir -p /tmp/keys-synth-$db
  $B serve --listen 127.0.0.1:18700 --database $PG/$db --report-ttl 0 \
    --data-dir /tmp/keys-synth-$db/data --spool-dir /tmp/keys-synth-$db/spool > /tmp/keys-synth-$db/server.log 2>&1 &
  local pid=$!
  for i in $(seq 120); do curl -sf http://127.0.0.1:18700/pdb/meta/v1/version >/dev/null && break; sleep 1; done
  for i in $(seq 600); do
    curl -sf http://127.0.0.1:18700/metrics | grep -q '^reportdb_fleet_state_loaded_timestamp_seconds [1-9]' && break
    sleep 0.2
  done
  python3 ../shared/bench/ingest.py http://127.0.0.1:18700 --fleet $f --concurrency 8 \
    --json-out $out/ingest.json > $out/ingest.txt 2>&1
  echo "$db $(basename $f) $(grep 'end to end' $out/ingest.txt)" >> $R/probes.txt
  kill $pid; wait $pid || true
}
cd "$(dirname "$0")/../../.."
probe ke $P-0130.jsonl.gz; probe kb $P-0130.jsonl.gz
probe kb $P-0300.jsonl.gz; probe ke $P-0300.jsonl.gz
probe ke $P-0430.jsonl.gz; probe kb $P-0430.jsonl.gz
