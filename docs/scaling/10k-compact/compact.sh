#!/usr/bin/env bash
# compact.sh DB PORT: serve DB with the fixed binary until no rollup delta is unmerged
B=${B:-/work/data-10k/reportdb-6505288-nopar}
db=$1; port=$2
$B serve --listen 127.0.0.1:$port --database postgres://postgres@127.0.0.1:5432/$db --report-ttl 0 --data-dir /tmp/compact-$db > /tmp/compact-$db.log 2>&1 &
pid=$!
t0=$(date +%s)
while sleep 10; do
  n=$(psql -qAt postgres://postgres@127.0.0.1:5432/$db -c "SELECT (SELECT count(*) FROM report_rollup WHERE NOT merged) + (SELECT count(*) FROM event_rollup WHERE NOT merged) + (SELECT count(*) FROM failure_rollup WHERE NOT merged) + (SELECT count(*) FROM distinct_rollup WHERE NOT merged)")
  echo "$(( $(date +%s) - t0 )) s: $n unmerged"
  [[ $n == 0 ]] && break
done
kill $pid; wait $pid
psql -qAt postgres://postgres@127.0.0.1:5432/$db -c "VACUUM (ANALYZE) report_rollup, event_rollup, failure_rollup, distinct_rollup"
echo compacted
