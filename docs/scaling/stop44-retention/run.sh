#!/usr/bin/env bash
# Retention at 1,000 nodes x 14 days (stop 44): the 14 day partitions of each
# parent, and a retention run that drops the oldest (half) day and deletes the
# next day's first 18 hours in batches, under ingest and queries.
#   run.sh BINARY OUT [DIR]
# DIR (default /work/data-1k) keeps the fleet; the database s1k_14d is built
# once (fleet-14d.sh: 4 min generation, 2 min 30 s import here, 2.8 GB) and
# served once so that maintenance archives the keys; each run gets its own
# copy (CREATE DATABASE ... TEMPLATE, 12 s).
set -euo pipefail
cd "$(dirname "$0")/../../.."
bin=${1:?binary}; out=${2:?out dir}; dir=${3:-/work/data-1k}
PG=postgres://postgres@127.0.0.1:5432
S=${REPORTDB_SHARED:-../shared}
mkdir -p "$dir" "$out"
if ! psql -Atq "$PG/postgres" -c "SELECT 1 FROM pg_database WHERE datname = 's1k_14d'" | grep -q 1; then
  NODES=1000 RUNS=672 scripts/fleet-14d.sh "$PG/s1k_14d" "$dir"
  # maintenance archives the keys (report_keys_archive), as on a server
  # that has run for a while
  "$bin" serve --listen 127.0.0.1:18600 --database "$PG/s1k_14d" --data-dir "$out/maint-data" \
    --report-ttl 0 --gc-interval 5s > "$out/maint.log" 2>&1 &
  mpid=$!
  for _ in $(seq 120); do grep -q "keys archived" "$out/maint.log" && break; sleep 1; done
  sleep 10; kill $mpid; wait $mpid || true
fi
probe=$dir/probe-1000n-3runs.jsonl.gz
[[ -s $probe ]] || python3 "$S/bench/fleet.py" --nodes 1000 --runs 3 --end 2026-01-15T13:30:00Z --out "$probe"
copy=s1k_14d_$$
psql -q "$PG/postgres" -c "CREATE DATABASE $copy TEMPLATE s1k_14d"
trap 'psql -q "$PG/postgres" -c "DROP DATABASE IF EXISTS $copy"' EXIT
BENCH=$S/bench scripts/retention-under-load.sh "$bin" "$PG/$copy" "$probe" 2026-01-02T18:00:00Z 18513 "$out/run" | tee "$out/retention.txt"
