#!/bin/bash
# procs-ab.sh OUT BIN : GOMAXPROCS 2 vs 1 on the medium fleet: ingest into a fresh
# database (ingest.py, 8 connections), then the sequential mix (k 20) and the
# concurrent mix (15 s), two rounds alternating.
OUT=$1; BIN=$2; mkdir -p $OUT
S=/work/shared/bench
for round in 1 2; do for procs in 2 1; do
  n=p$procs-$round
  pkill -f "serve --listen 127.0.0.1:8300"; sleep 0.5
  dropdb -h 127.0.0.1 -U postgres --if-exists -f procs_ab; createdb -h 127.0.0.1 -U postgres procs_ab
  rm -rf /tmp/srv-8300; mkdir -p /tmp/srv-8300/data
  (GOMAXPROCS=$procs nohup $BIN serve --listen 127.0.0.1:8300 --database "postgres://postgres@127.0.0.1:5432/procs_ab" --data-dir /tmp/srv-8300/data --report-ttl 0 > $OUT/$n.server.log 2>&1 &); sleep 1.5
  python3 $S/ingest.py http://127.0.0.1:8300 --fleet /work/data-small/fleet-medium.jsonl.gz > $OUT/$n.ingest.txt 2>&1
  psql -h 127.0.0.1 -U postgres procs_ab -qc "VACUUM ANALYZE" ; sleep 2
  python3 $S/queries.py http://127.0.0.1:8300 --fleet /work/data-small/fleet-medium.jsonl.gz -k 20 --warmup 3 --duration 15 --json-out $OUT/$n.json > $OUT/$n.txt 2>&1
done; done
pkill -f "serve --listen 127.0.0.1:8300"
for f in $OUT/*.ingest.txt; do echo "$(basename $f): $(grep 'end to end' $f)"; done
for f in $OUT/*.txt; do case $f in *ingest*) ;; *) echo "$(basename $f): $(grep -iE 'requests/s|req/s' $f | head -2 | tr '\n' ' ')";; esac; done
