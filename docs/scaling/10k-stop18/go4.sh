#!/usr/bin/env bash
# stop 18: fleet files -> probe file -> quiet writers A/B (medium) -> 1d and
# 14d imports with their query round -> two interleaved query rounds -> probes
cd /work/main
D=/work/data-10k; R=$D/results; mkdir -p $R
while [[ ! -f $D/fleet-10000n-14d.jsonl.gz.manifest.json ]]; do sleep 15; done
date -u +%FT%TZ > $R/fleet-done
python3 ../shared/bench/fleet.py --nodes 10000 --runs 3 --end 2026-01-15T13:30:00Z --out $D/probe-10000n-3runs.jsonl.gz > $R/probe-gen.log 2>&1
ROUNDS=2 OUT=/work/data-small/ab2 scripts/ab-ingest.sh /work/data-small/fleet-medium.jsonl.gz \
  w1=/work/data-small/rdb-w1 w2=/work/data-small/rdb-w2 w3=/work/data-small/rdb-w3 > $R/ab-writers-quiet.txt 2>&1
B=$D/reportdb-import
common="NODES=10000 DATA=$D REPORTDB=$B K=5 WARMUP=1 ROUNDS=1 DURATION=30"
for d in 1 14; do
  env $common DAYS=$d scripts/days-scaling.sh postgres://postgres@127.0.0.1:5432/s10k $R/days > $R/days-$d.log 2>&1
  docs/scaling/10k-compact/sizes.sh s10k_${d}d $R/sizes-${d}d.txt 2>/dev/null
done
date -u +%FT%TZ > $R/imports-done
Bq=$D/reportdb-query   # may be replaced while the imports run
env $common REPORTDB=$Bq DAYS="1 14" SKIP_IMPORT=1 scripts/days-scaling.sh postgres://postgres@127.0.0.1:5432/s10k $R/days-r2 > $R/days-r2.log 2>&1
env $common REPORTDB=$Bq DAYS="1 14" SKIP_IMPORT=1 DURATION=0 scripts/days-scaling.sh postgres://postgres@127.0.0.1:5432/s10k $R/days-r3 > $R/days-r3.log 2>&1
B=$D/reportdb-probe DATA=$D R=$R ONLY_PROBES=1 PROBES="empty d14" WAIT_FLEET=1 bash docs/scaling/10k/run-all.sh > $R/run-all-probes.log 2>&1
echo done > $R/all-done
