#!/usr/bin/env bash
# stop 19, continuing go6.sh (stopped during the 14-day import, whose
# days-scaling.sh went on: pid $1): once the imports and the first query
# round are done (time: no second round at the defaults), sizes and the
# ingest probe into an empty database at PostgreSQL's defaults (shared_buffers 128MB, max_wal_size
# 1GB); then the same with a configuration tuned for a large fleet
# (shared_buffers 4GB, max_wal_size 8GB, checkpoint_timeout 15min,
# wal_compression lz4): a query round, the probes into an empty and the
# 14-day database; then, back at the defaults, the probe into the 14-day
# database (a probe adds newer reports, so probes that write into s10k_*
# come last, each with a probe file of its own). The OS page cache is
# not dropped (as at stop 18): a probe runs after the queries, on warm caches.
set -u
cd /work/main
D=/work/data-10k; R=$D/results; mkdir -p $R
PG=postgres://postgres@127.0.0.1:5432
while kill -0 "$1" 2>/dev/null; do sleep 10; done
date -u +%FT%TZ > $R/import-done
B=$D/reportdb-5d3a213
pgconf() { # pgconf tuned|default: set (or reset) and restart PostgreSQL
  for kv in shared_buffers=4GB max_wal_size=8GB checkpoint_timeout=15min wal_compression=lz4; do
    if [[ $1 == tuned ]]; then
      psql -qAt $PG/postgres -c "ALTER SYSTEM SET ${kv%%=*} = '${kv#*=}'"
    else
      psql -qAt $PG/postgres -c "ALTER SYSTEM RESET ${kv%%=*}"
    fi
  done
  pg_ctlcluster 15 main restart
  psql -qAt $PG/postgres -c "SELECT name, setting, unit FROM pg_settings WHERE name IN
    ('shared_buffers', 'max_wal_size', 'checkpoint_timeout', 'wal_compression')" > $R/pgconf-$1.txt
}
probes() { # probes RESULTS PROBE_FILE WHICH...
  local out=$1 file=$2; shift 2
  B=$B DATA=$D R=$out ONLY_PROBES=1 PROBES="$*" WAIT_FLEET=1 PROBE=$file \
    bash docs/scaling/10k/run-all.sh > $out.log 2>&1
}
docs/scaling/10k-compact/sizes.sh s10k_14d $R/sizes-14d.txt 2>/dev/null
docs/scaling/10k-compact/sizes.sh s10k_1d $R/sizes-1d.txt 2>/dev/null
common="NODES=10000 DATA=$D REPORTDB=$B K=5 WARMUP=1 ROUNDS=1 DURATION=30"
probes $R/default probe-10000n-3runs-1330.jsonl.gz empty
pgconf tuned
env $common DAYS="1 14" SKIP_IMPORT=1 scripts/days-scaling.sh $PG/s10k $R/days-tuned > $R/days-tuned.log 2>&1
date -u +%FT%TZ > $R/tuned-round-done
probes $R/tuned probe-10000n-3runs-1330.jsonl.gz empty d14
pgconf default
probes $R/default-d14 probe-10000n-3runs-1500.jsonl.gz d14
date -u +%FT%TZ > $R/probes-done
echo done > $R/all-done
