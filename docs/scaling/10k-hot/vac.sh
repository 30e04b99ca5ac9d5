#!/bin/bash
# the 1-day import with compaction-time vacuum of the rollups, against s10k_1d (9e69b75)
P=postgres://postgres@127.0.0.1:5432
psql -qAt $P/postgres -c "DROP DATABASE IF EXISTS s10k_1d_vac WITH (FORCE)" -c "CREATE DATABASE s10k_1d_vac" >/dev/null
/usr/bin/time -v -o /work/data-10k/results/import-vac-time.txt /work/data-10k/reportdb-vac import --database $P/s10k_1d_vac --progress lines --progress-interval 30s /work/data-10k/fleet-10000n-1d.jsonl.gz > /work/data-10k/results/import-vac.log 2>&1
for db in s10k_1d s10k_1d_vac; do
  echo "== $db"
  psql -qAt -F ' ' $P/$db -c "select c.relname, pg_size_pretty(pg_total_relation_size(c.oid)), s.n_live_tup, s.n_dead_tup, s.vacuum_count from pg_class c join pg_stat_user_tables s on s.relid = c.oid where c.relname in ('distinct_rollup','event_rollup','failure_rollup','report_rollup') order by 1"
done
