#!/bin/bash
# after ratio-new: stop go.sh (no ratio-old/new2), run the probes, then the medium compare
R=/work/data-10k/results-stop26
while [ ! -e $R/ratio-new-done ]; do sleep 5; done
pkill -f 10k-stop26/go.sh; pkill -f days-10k.sh; pkill -f days-scaling.sh; sleep 1
pkill -f "listen 127.0.0.1:18620"; pkill -f queries.py; sleep 3
date -u +%FT%TZ > $R/go-stopped-after-ratio-new
cd /work/main && R=$R DB14=s10k_14d DAY=16 docs/scaling/10k-stop22/probes.sh /work/data-10k/reportdb-caad81f > $R/probes.log 2>&1
cd /tmp/wt-caad81f && REPORTDB_SHARED=/work/shared docs/scaling/compare-medium/run.sh /work/data-small/fleet-medium.jsonl.gz /work/data-small/compare/run-caad81f > /tmp/compare-caad81f.log 2>&1
/work/shared/bench/puppetdb-instance.sh stop 8092 puppetdb_bench; scripts/bench-instance.sh stop 8091
date -u +%FT%TZ > $R/after-done
