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
# iostats DBURL: the cluster's WAL counters and the database's per-table
# block counters (heap and index, read and hit) and row changes, to diff
# around a probe: where an ingest's I/O and full-page images go.
iostats() {
  psql -qAt "$1" -F ' ' -c "SELECT 'wal', wal_records, wal_fpi, wal_bytes FROM pg_stat_wal" \
    -c "SELECT 'table', s.relname, coalesce(heap_blks_read,0), coalesce(heap_blks_hit,0),
          coalesce(idx_blks_read,0), coalesce(idx_blks_hit,0), n_tup_ins, n_tup_upd, n_tup_hot_upd
        FROM pg_statio_user_tables s JOIN pg_stat_user_tables u USING (relid) ORDER BY 2"
}
probe() { # probe NAME DBURL
  mkdir -p $R/probe-$1 /tmp/probe-$1
  rm -rf /tmp/probe-$1/spool
  $B serve --listen 127.0.0.1:18700 --database "$2" --report-ttl 0 --data-dir /tmp/probe-$1/data \
    --spool-dir /tmp/probe-$1/spool > $R/probe-$1/server.log 2>&1 &
  pid=$!
  for i in $(seq 60); do curl -sf http://127.0.0.1:18700/pdb/meta/v1/version >/dev/null && break; sleep 1; done
  if [[ -n "${WAIT_FLEET:-}" ]]; then
    # the fleet state's first load done before the probe (its hourly counts
    # read every report and failure event kept, ~22 s at 14 days, before
    # failure_rollup); how long it took from the server answering is kept
    t0=$(date +%s.%N)
    for i in $(seq 3000); do
      curl -sf http://127.0.0.1:18700/metrics | grep -q '^reportdb_fleet_state_loaded_timestamp_seconds [1-9]' && break
      sleep 0.1
    done
    echo "$(date +%s.%N) $t0" | awk '{ printf "%.1f\n", $1 - $2 }' > $R/probe-$1/fleet_load_seconds
  fi
  (while kill -0 $pid 2>/dev/null; do ps -o rss= -p $pid; sleep 2; done) > $R/probe-$1/rss_kb_samples &
  iostats "$2" > $R/probe-$1/io-before.txt
  python3 ../shared/bench/ingest.py http://127.0.0.1:18700 --fleet $DATA/${PROBE:-probe-10000n-3runs.jsonl.gz} \
    --concurrency 8 --json-out $R/probe-$1/ingest.json > $R/probe-$1/ingest.txt 2>&1
  iostats "$2" > $R/probe-$1/io-after.txt
  ps -o rss= -p $pid > $R/probe-$1/rss_kb
  kill $pid; wait $pid
}
# the imports (each window's queries follow its import), then one more round
# over the windows in turn (SKIP_IMPORT keeps the databases and import figures;
# IMPORT_DAYS: import only these windows, the others being loaded already)
# (ONLY_PROBES=1: the probes only, into databases loaded already; a probe
# file is only new once per database: PROBE names another, e.g. the same
# command with --end 2026-01-15T15:00:00Z)
if [[ -z "${ONLY_PROBES:-}" ]]; then
for d in ${IMPORT_DAYS:-${DAYS:-1 7 14}}; do
  env $common DAYS=$d scripts/days-scaling.sh $PG/s10k $R/days > $R/days-$d.log 2>&1
done
env $common DAYS="${DAYS:-1 7 14}" SKIP_IMPORT=1 scripts/days-scaling.sh $PG/s10k $R/days > $R/days.log 2>&1
fi
# PROBES: none, or empty (a fresh database) and dN (the N-day database s10k_Nd; the
# probe writes into it: after its queries were measured)
for p in ${PROBES:-empty d14}; do
  if [[ $p == none ]]; then
    continue
  elif [[ $p == empty ]]; then
    psql -qAt $PG/postgres -c "DROP DATABASE IF EXISTS probe_empty WITH (FORCE)" -c "CREATE DATABASE probe_empty"
    probe empty $PG/probe_empty
  else
    probe $p $PG/s10k_${p#d}d
  fi
done
echo done > $R/done
