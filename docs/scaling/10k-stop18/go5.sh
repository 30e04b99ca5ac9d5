#!/usr/bin/env bash
# stop 18, after go4.sh was stopped during the 14-day import: sizes, one
# interleaved query round with the concurrent phase, a second one without
# it, then the ingest probes (the d14 probe adds newer reports to s10k_14d)
cd /work/main
D=/work/data-10k; R=$D/results
docs/scaling/10k-compact/sizes.sh s10k_14d $R/sizes-14d-rewritten.txt 2>/dev/null
docs/scaling/10k-compact/sizes.sh s10k_1d $R/sizes-1d-rewritten.txt 2>/dev/null
Bq=$D/reportdb-query
common="NODES=10000 DATA=$D REPORTDB=$Bq K=5 WARMUP=1 ROUNDS=1 DURATION=30"
env $common DAYS="1 14" SKIP_IMPORT=1 scripts/days-scaling.sh postgres://postgres@127.0.0.1:5432/s10k $R/days-r2 > $R/days-r2.log 2>&1
env $common DAYS="1 14" SKIP_IMPORT=1 DURATION=0 scripts/days-scaling.sh postgres://postgres@127.0.0.1:5432/s10k $R/days-r3 > $R/days-r3.log 2>&1
B=$D/reportdb-probe DATA=$D R=$R ONLY_PROBES=1 PROBES="empty d14" WAIT_FLEET=1 bash docs/scaling/10k/run-all.sh > $R/run-all-probes.log 2>&1
date -u +%FT%TZ > $R/probes-done
echo done > $R/all-done
