#!/usr/bin/env bash
# stop 20, on a fresh machine: wait for the fleet (scripts/fleet-days.py
# --nodes 10000 --days 1,14 --outdir $D), import both windows and measure
# the query mix in two rounds (PostgreSQL defaults); then the ingest
# probes: three files of 3 runs of every node in a new day (2026-01-16,
# runs ending 01:30, 03:00, 04:30), each into an empty database (created
# before the first), the 1-day and the 14-day database, one server per
# probe, rotating the order. Every database then receives the same
# reports into the same (new) day partition, which is empty before the
# first file: the databases differ only in the days they keep.
set -u
[[ -x "${1:-}" ]] || { echo "usage: $0 REPORTDB_BINARY" >&2; exit 2; }
cd /work/main
D=/work/data-10k; R=$D/results-stop20; mkdir -p $R
PG=postgres://postgres@127.0.0.1:5432
while [[ ! -e $D/fleet-10000n-14d.jsonl.gz || ! -e $D/fleet-10000n-1d.jsonl.gz ]]; do sleep 20; done
date -u +%FT%TZ > $R/fleet-done
B=$1 # built beforehand from a clean tree: go build -o $D/reportdb-<commit> ./cmd/reportdb
echo $B > $R/binary
common="NODES=10000 DATA=$D REPORTDB=$B K=5 WARMUP=1 ROUNDS=1 DURATION=30"
env $common DAYS="1 14" scripts/days-scaling.sh $PG/s10k $R/days-r1 > $R/days-r1.log 2>&1
date -u +%FT%TZ > $R/import-done
docs/scaling/10k-compact/sizes.sh s10k_14d $R/sizes-14d.txt 2>/dev/null
docs/scaling/10k-compact/sizes.sh s10k_1d $R/sizes-1d.txt 2>/dev/null
env $common DAYS="1 14" SKIP_IMPORT=1 scripts/days-scaling.sh $PG/s10k $R/days-r2 > $R/days-r2.log 2>&1
date -u +%FT%TZ > $R/queries-done
for end in 01:30 03:00 04:30; do
  f=$D/probe-10000n-3runs-16-${end/:/}.jsonl.gz
  [[ -e $f ]] || python3 ../shared/bench/fleet.py --nodes 10000 --runs 3 --end 2026-01-16T$end:00Z \
    --out $f >> $R/probe-fleet.log 2>&1
done
psql -qAt $PG/postgres -c "DROP DATABASE IF EXISTS probe_empty" -c "CREATE DATABASE probe_empty"
# the probes' server: $R/probe-binary when it names one (a later build,
# written there while the imports ran), else the import's
PB=$B
[[ -s $R/probe-binary && -x $(cat $R/probe-binary) ]] && PB=$(cat $R/probe-binary)
echo $PB > $R/probe-binary-used
probe() { # probe NAME DB FILE
  local out=$R/probe-$1 db=$2 f=$3
  mkdir -p $out; rm -rf /tmp/probe20-$db; mkdir -p /tmp/probe20-$db
  $PB serve --listen 127.0.0.1:18700 --database $PG/$db --report-ttl 0 \
    --data-dir /tmp/probe20-$db/data --spool-dir /tmp/probe20-$db/spool > $out/server.log 2>&1 &
  local pid=$!
  for i in $(seq 120); do curl -sf http://127.0.0.1:18700/pdb/meta/v1/version >/dev/null && break; sleep 1; done
  for i in $(seq 600); do
    curl -sf http://127.0.0.1:18700/metrics | grep -q '^reportdb_fleet_state_loaded_timestamp_seconds [1-9]' && break
    sleep 0.2
  done
  (while kill -0 $pid 2>/dev/null; do ps -o rss= -p $pid; sleep 2; done) > $out/rss_kb_samples &
  python3 ../shared/bench/ingest.py http://127.0.0.1:18700 --fleet $f --concurrency 8 \
    --json-out $out/ingest.json > $out/ingest.txt 2>&1
  echo "$1 $(grep 'end to end' $out/ingest.txt)" >> $R/probes.txt
  kill $pid; wait $pid
}
n=0
for end in 0130 0300 0430; do
  n=$((n+1))
  f=$D/probe-10000n-3runs-16-$end.jsonl.gz
  case $n in
    1) order="empty 1d 14d";;
    2) order="14d empty 1d";;
    3) order="1d 14d empty";;
  esac
  for w in $order; do
    case $w in empty) db=probe_empty;; 1d) db=s10k_1d;; 14d) db=s10k_14d;; esac
    probe $n-$w $db $f
  done
done
date -u +%FT%TZ > $R/probes-done
echo done > $R/all-done
