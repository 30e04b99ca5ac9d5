#!/bin/bash
# rss-mix.sh ENV... : the server (/tmp/rdb-head) on database rss38 (the medium fleet, `reportdb import
# --database .../rss38 fleet-medium.jsonl.gz`), queries.py -k 3 then its 30 s concurrent mix at 8
# connections; requests/s and the server RSS peak (VmRSS every 0.2 s). ENV is passed to the server.
PORT=8330
rm -rf /tmp/rss-d; env "$@" /tmp/rdb-head serve --listen 127.0.0.1:$PORT --report-ttl 0 --data-dir /tmp/rss-d --database postgres://postgres@127.0.0.1:5432/rss38 > /tmp/rss.log 2>&1 &
SP=$!; sleep 3
( while kill -0 $SP 2>/dev/null; do r=$(awk '/VmRSS/{print $2}' /proc/$SP/status 2>/dev/null); [ -n "$r" ] && echo $r; sleep 0.2; done ) > /tmp/rss-samples.txt &
MP=$!
python3 /work/shared/bench/queries.py http://127.0.0.1:$PORT --fleet /work/data-small/fleet-medium.jsonl.gz -k 3 --warmup 1 --duration 30 --concurrency 8 2>&1 | grep -iE "requests/s|req/s" | head -2
kill $SP; wait $SP 2>/dev/null; kill $MP 2>/dev/null
echo "env=$* rss_peak_MB=$(sort -n /tmp/rss-samples.txt | tail -1 | awk '{printf "%.1f", $1/1024}')"
