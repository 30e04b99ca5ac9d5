#!/bin/bash
# after the 14-day import and its first query round (9e69b75): a round over
# both windows with d199135, then the ingest probes (the ingest path is the
# same in both binaries)
cd /work/main
while pgrep -f "scripts/days-scaling.sh" >/dev/null; do sleep 5; done
env NODES=10000 DATA=/work/data-10k REPORTDB=/work/data-10k/reportdb-d199135 K=5 WARMUP=1 ROUNDS=1 DURATION=30 \
  DAYS="1 14" SKIP_IMPORT=1 LABEL="reportdb d199135" scripts/days-scaling.sh postgres://postgres@127.0.0.1:5432/s10k \
  /work/data-10k/results/days-d199 > /work/data-10k/results/days-d199.log 2>&1
ONLY_PROBES=1 B=/work/data-10k/reportdb-d199135 DATA=/work/data-10k R=/work/data-10k/results WAIT_FLEET=1 PROBES="empty d14" \
  docs/scaling/10k/run-all.sh > /work/data-10k/results/probes.log 2>&1
echo done > /work/data-10k/results/after-done
