#!/usr/bin/env bash
# stop 27: does the report_keys index of a 14-day database (13.3 million
# rows at 10,000 nodes, 400 MB of index) cost ingest? Two otherwise empty
# databases: kb, whose report_keys holds 13,310,000 rows of random keys
# (uniform, as hashtextextended's are; ids negative, so no real report's),
# and ke, whose report_keys is empty; the same probe files (3 runs of every
# node of a new day, docs/scaling/10k-stop22/probes.sh's) into each, the
# order alternated. The difference is the cost of the big key index alone.
# Each probe is probe-lib.sh's (stop 22's probes), named DB-FILE (ke-0130, ...);
# results/keys-synthetic-{1,2} were recorded by an earlier copy of it (lines
# "DB FILE end to end ...", without the block counts).
#   keys-synthetic.sh BINARY PROBE_DAY_FILE_PREFIX OUT
#   (e.g. /work/data-10k/probe-10000n-3runs-17 for its -0130, -0300, -0430 files)
set -eu
B=$1; P=$2; R=$(mkdir -p "$3" && cd "$3" && pwd)
PG=postgres://postgres@127.0.0.1:5432
for db in kb ke; do
  psql -qAt $PG/postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
  $B migrate --database $PG/$db
done
psql -qAt $PG/kb -c "DROP INDEX report_keys_key" \
  -c "INSERT INTO report_keys SELECT (random()*1.8e19 - 9.0e18)::bigint, -g FROM generate_series(1,13310000) g" \
  -c "CREATE INDEX report_keys_key ON report_keys (key, id)" -c "VACUUM ANALYZE report_keys" -c "CHECKPOINT"
psql -qAt $PG/kb -c "SELECT pg_size_pretty(pg_total_relation_size('report_keys')), pg_size_pretty(pg_relation_size('report_keys_key'))" > $R/kb-size.txt
cd "$(dirname "$0")/../../.."
PB=$B; TAG=; . docs/scaling/10k-stop22/probe-lib.sh # probe NAME DB FILE
probe ke-0130 ke $P-0130.jsonl.gz; probe kb-0130 kb $P-0130.jsonl.gz
probe kb-0300 kb $P-0300.jsonl.gz; probe ke-0300 ke $P-0300.jsonl.gz
probe ke-0430 ke $P-0430.jsonl.gz; probe kb-0430 kb $P-0430.jsonl.gz
