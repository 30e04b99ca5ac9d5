#!/usr/bin/env bash
# waits for the fleet files; 1-day import + queries, 14-day import + queries,
# the parallel-query settings on the 14-day database, then the ingest probes
cd /work/main
while [[ ! -f /work/data-10k/fleet-10000n-14d.jsonl.gz.manifest.json || ! -f /work/data-10k/probe-10000n-3runs.jsonl.gz.manifest.json ]]; do sleep 20; done
B=/work/data-10k/reportdb-c55af64
R=/work/data-10k/results
mkdir -p $R
common="NODES=10000 DATA=/work/data-10k REPORTDB=$B K=5 WARMUP=1 ROUNDS=1 DURATION=30"
for d in 1 14; do
  env $common DAYS=$d scripts/days-scaling.sh postgres://postgres@127.0.0.1:5432/s10k $R/days > $R/days-$d.log 2>&1
done
/work/data-10k/par.sh
# both windows again without parallel workers (the 1-day figure to compare with)
env $common DAYS="1 14" SKIP_IMPORT=1 scripts/days-scaling.sh "postgres://postgres@127.0.0.1:5432/s10k?max_parallel_workers_per_gather=0" $R/days-nopar > $R/days-nopar.log 2>&1
B=$B DATA=/work/data-10k R=$R ONLY_PROBES=1 PROBES="empty d14" WAIT_FLEET=1 bash docs/scaling/10k/run-all.sh > $R/run-all-probes.log 2>&1
echo done > $R/all-done
