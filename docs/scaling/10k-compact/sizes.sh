#!/usr/bin/env bash
# sizes DB OUT: rollup/latest table sizes and live/dead tuples
psql -qAt "postgres://postgres@127.0.0.1:5432/$1" -F ' ' -c "SELECT relname, pg_size_pretty(pg_total_relation_size(relid)), pg_size_pretty(pg_relation_size(relid)), n_live_tup, n_dead_tup, n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relname IN ('report_rollup','event_rollup','failure_rollup','distinct_rollup','resource_latest','latest_reports') ORDER BY 1" -c "SELECT 'database', pg_size_pretty(pg_database_size('$1'))" > "$2"
