#!/usr/bin/env bash
# stop 19, on a fresh machine: wait for the fleet (scripts/fleet-days.py
# --nodes 10000 --days 1,14 --outdir $D), import both windows and measure
# the query mix (parallel query off by default since e4bb5f6) in two
# rounds; the ingest probe into an empty database; then the same with
# shared_buffers = 4GB (a query round and the probes into an empty and the
# 14-day database); then, back at PostgreSQL's default 128MB, the probe
# into the 14-day database (a probe adds newer reports, so probes that
# write into s10k_* come last, and each uses a probe file of its own).
# The OS page cache is dropped before each round and probe.
set -u
cd /work/main
D=/work/data-10k; R=$D/results; mkdir -p $R
PG=postgres://postgres@127.0.0.1:5432
while [[ ! -e $D/fleet-10000n-14d.jsonl.gz || ! -e $D/fleet-10000n-1d.jsonl.gz ]]; do sleep 20; done
date -u +%FT%TZ > $R/fleet-done
for end in 13:30 15:00; do
  python3 ../shared/bench/fleet.py --nodes 10000 --runs 3 --end 2026-01-15T$end:00Z \
    --out $D/probe-10000n-3runs-${end/:/}.jsonl.gz >> $R/probe-fleet.log 2>&1
done
B=$D/reportdb-$(git rev-parse --short HEAD)
go build -o $B ./cmd/reportdb
dropcache() { sync; echo 3 > /proc/sys/vm/drop_caches; }
shared_buffers() { # restart PostgreSQL with this shared_buffers
  psql -qAt $PG/postgres -c "ALTER SYSTEM SET shared_buffers = '$1'"
  pg_ctlcluster 15 main restart
  psql -qAt $PG/postgres -c "SHOW shared_buffers" > $R/shared_buffers-now
}
common="NODES=10000 DATA=$D REPORTDB=$B K=5 WARMUP=1 ROUNDS=1 DURATION=30"
env $common DAYS="1 14" scripts/days-scaling.sh $PG/s10k $R/days-r1 > $R/days-r1.log 2>&1
date -u +%FT%TZ > $R/import-done
docs/scaling/10k-compact/sizes.sh s10k_14d $R/sizes-14d.txt 2>/dev/null
docs/scaling/10k-compact/sizes.sh s10k_1d $R/sizes-1d.txt 2>/dev/null
dropcache
env $common DAYS="1 14" SKIP_IMPORT=1 scripts/days-scaling.sh $PG/s10k $R/days-r2 > $R/days-r2.log 2>&1
date -u +%FT%TZ > $R/queries-done
dropcache
B=$B DATA=$D R=$R/sb128 ONLY_PROBES=1 PROBES="empty" WAIT_FLEET=1 PROBE=probe-10000n-3runs-1330.jsonl.gz \
  bash docs/scaling/10k/run-all.sh > $R/probes-sb128-empty.log 2>&1
shared_buffers 4GB
dropcache
env $common DAYS="1 14" SKIP_IMPORT=1 scripts/days-scaling.sh $PG/s10k $R/days-sb4g > $R/days-sb4g.log 2>&1
dropcache
B=$B DATA=$D R=$R/sb4g ONLY_PROBES=1 PROBES="empty d14" WAIT_FLEET=1 PROBE=probe-10000n-3runs-1330.jsonl.gz \
  bash docs/scaling/10k/run-all.sh > $R/probes-sb4g.log 2>&1
shared_buffers 128MB
dropcache
B=$B DATA=$D R=$R/sb128 ONLY_PROBES=1 PROBES="d14" WAIT_FLEET=1 PROBE=probe-10000n-3runs-1500.jsonl.gz \
  bash docs/scaling/10k/run-all.sh > $R/probes-sb128-d14.log 2>&1
psql -qAt $PG/postgres -c "ALTER SYSTEM RESET shared_buffers"; pg_ctlcluster 15 main restart
date -u +%FT%TZ > $R/probes-done
echo done > $R/all-done
