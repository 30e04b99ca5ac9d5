#!/usr/bin/env bash
# A/B on the 10k x 14 d database: deeec5b (before) vs c19b8e8 (latest-of-node + jit off), 2 interleaved rounds
R=/work/data-10k/results/ab; mkdir -p $R
start() { # start NAME PORT
  mkdir -p /tmp/ab-$1
  /work/data-10k/reportdb-$1 serve --listen 127.0.0.1:$2 --database postgres://postgres@127.0.0.1:5432/s10k_14d --report-ttl 0 --data-dir /tmp/ab-$1/data --spool-dir /tmp/ab-$1/spool > $R/server-$1.log 2>&1 &
  echo $! > /tmp/ab-$1/pid
  for i in $(seq 60); do curl -sf http://127.0.0.1:$2/pdb/meta/v1/version >/dev/null && break; sleep 1; done
}
start deeec5b 18811; start c19b8e8 18812
for round in 1 2; do
  for v in deeec5b:18811 c19b8e8:18812; do
    name=${v%%:*}; port=${v##*:}
    python3 /work/shared/bench/queries.py http://127.0.0.1:$port --fleet /work/data-10k/fleet-10000n-14d.jsonl.gz -k 10 --warmup 2 -d 20 -c 8 --engine python --json-out $R/$name-$round.json --label "$name r$round" > $R/$name-$round.txt 2>&1
  done
done
kill $(cat /tmp/ab-deeec5b/pid) $(cat /tmp/ab-c19b8e8/pid)
echo done > $R/done
