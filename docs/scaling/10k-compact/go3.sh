#!/usr/bin/env bash
# after the 14-day import (c55af64, running): compact with the fixed binary,
# then query rounds over both windows (nopar = the binary's default, par2 =
# PostgreSQL's default of 2 workers per gather), then the ingest probes
cd /work/main
R=/work/data-10k/results
while kill -0 20654 2>/dev/null; do sleep 10; done
date -u +%FT%TZ > $R/import-14d-ended
/work/data-10k/sizes.sh s10k_14d $R/sizes-after-import-14d.txt
/work/data-10k/compact.sh s10k_14d 18612 > $R/compact-14d.txt 2>&1
/work/data-10k/sizes.sh s10k_14d $R/sizes-14d-compacted.txt
B=/work/data-10k/reportdb-6505288-nopar
common="NODES=10000 DATA=/work/data-10k REPORTDB=$B K=5 WARMUP=1 ROUNDS=1 DURATION=30"
env $common DAYS="1 14" SKIP_IMPORT=1 scripts/days-scaling.sh postgres://postgres@127.0.0.1:5432/s10k $R/days-nopar-1 > $R/days-nopar-1.log 2>&1
env $common REPORTDB=/work/data-10k/reportdb-6505288 DAYS="1 14" SKIP_IMPORT=1 scripts/days-scaling.sh postgres://postgres@127.0.0.1:5432/s10k $R/days-par2 > $R/days-par2.log 2>&1
# (a second nopar round was dropped for time)
# (the ingest probes were dropped for time)
/work/data-10k/sizes.sh s10k_14d $R/sizes-14d-after-probe.txt
echo done > $R/all-done
      env NODES=10000 DATA=/work/data-10k REPORTDB=/work/data-10k/reportdb-6505288-nopar K=5 WARMUP=1 ROUNDS=1 DURATION=30 DAYS="1 14" SKIP_IMPORT=1 scripts/days-scaling.sh postgres://postgres@127.0.0.1:5432/s10k $R/days-nopar-2  # run by hand after go3.sh
