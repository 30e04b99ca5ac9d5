#!/bin/bash
# q-procs.sh BIN ROUNDS: the query mix (sequential -k 20, concurrent 20 s) against reportdb_bench, GOMAXPROCS 1 and 2 alternated
B=$1; R=$2; PORT=8323
for r in $(seq 1 $R); do for g in 1 2; do
  rm -rf /tmp/qp; mkdir -p /tmp/qp
  GOMAXPROCS=$g $B serve --listen 127.0.0.1:$PORT --report-ttl 0 --data-dir /tmp/qp/data --database postgres://postgres@127.0.0.1:5432/reportdb_bench > /tmp/qp/log 2>&1 &
  SP=$!; sleep 3
  python3 /work/shared/bench/queries.py http://127.0.0.1:$PORT --fleet /work/data-small/fleet-medium.jsonl.gz -k 20 --warmup 3 -c 8 -d 20 --json-out /tmp/qp-r$r-g$g.json > /tmp/qp-r$r-g$g.txt 2>&1
  kill $SP; wait $SP 2>/dev/null
  echo "round $r GOMAXPROCS=$g: $(grep -E 'requests/s' /tmp/qp-r$r-g$g.txt | head -1)"
done; done
