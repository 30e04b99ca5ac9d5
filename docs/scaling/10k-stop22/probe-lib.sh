# probe-lib.sh: one ingest probe, sourced by probes.sh (stop 22) and
# 10k-stop27/keys-synthetic.sh. Expects PG (server URL without a database),
# R (results directory), TAG (a prefix for result names, may be empty) and
# PB (the reportdb binary), and the working directory at the repository's
# root (../shared beside it).
# serve and statio_diff are shared with 10k-stop28/sustained.sh.
#   probe NAME DB FILE: serve DB on 127.0.0.1:18700, ingest FILE with 8
#   connections, append NAME's line to $R/probes.txt (reports/s end to
#   end, the server's RSS peak, blocks read and hit, disk read) and keep
#   its outputs in $R/probe-$TAG$NAME.
stats() { psql -qAt $PG/postgres -c "SELECT blks_read || '|' || blks_hit FROM pg_stat_database WHERE datname = '$1'"; }
statio() { # per table (partitions under their parent's name): blocks read|blocks hit
  psql -qAt $PG/$1 -c "SELECT regexp_replace(relname, '_[0-9]{8}$', '') AS t,
    sum(coalesce(heap_blks_read, 0) + coalesce(idx_blks_read, 0) + coalesce(toast_blks_read, 0) + coalesce(tidx_blks_read, 0)),
    sum(coalesce(heap_blks_hit, 0) + coalesce(idx_blks_hit, 0) + coalesce(toast_blks_hit, 0) + coalesce(tidx_blks_hit, 0))
    FROM pg_statio_user_tables GROUP BY 1 ORDER BY 1" | sort -t'|' -k1,1
}
serve() { # serve DB OUT [FLAG...]: start PB on DB at 127.0.0.1:18700 (log
  # OUT/server.log), wait until it answers and has loaded its fleet state,
  # sample its RSS every 2 s into OUT/rss_kb_samples; its pid in $pid
  local db=$1 out=$2; shift 2
  rm -rf /tmp/probe22-$db; mkdir -p /tmp/probe22-$db
  $PB serve --listen 127.0.0.1:18700 --database $PG/$db --report-ttl 0 "$@" \
    --data-dir /tmp/probe22-$db/data --spool-dir /tmp/probe22-$db/spool > $out/server.log 2>&1 &
  pid=$!
  for i in $(seq 120); do curl -sf http://127.0.0.1:18700/pdb/meta/v1/version >/dev/null && break; sleep 1; done
  for i in $(seq 600); do
    curl -sf http://127.0.0.1:18700/metrics | grep -q '^reportdb_fleet_state_loaded_timestamp_seconds [1-9]' && break
    sleep 0.2
  done
  (while kill -0 $pid 2>/dev/null; do ps -o rss= -p $pid; sleep 2; done) > $out/rss_kb_samples &
}
statio_diff() { # statio_diff OUT: blocks read outside PostgreSQL's buffers and hit per table
  # (day partitions summed), most read first, from OUT/statio-{before,after}.txt
  join -t'|' $1/statio-before.txt $1/statio-after.txt | awk -F'|' '{printf "%s %d %d\n", $1, $4-$2, $5-$3}' |
    sort -k2,2nr | head -12 > $1/statio-read-hit.txt
}
probe() { # probe NAME DB FILE
  local out=$R/probe-$TAG$1 db=$2 f=$3 pid
  mkdir -p $out
  serve $db $out
  # (stop 27) what the probe read: PostgreSQL's blocks read outside its
  # buffers and hit in them, and what the kernel read from the disk
  local s0 d0; s0=$(stats $db); d0=$(awk '/^pgpgin /{print $2}' /proc/vmstat); statio $db > $out/statio-before.txt
  python3 ../shared/bench/ingest.py http://127.0.0.1:18700 --fleet $f --concurrency 8 \
    --json-out $out/ingest.json > $out/ingest.txt 2>&1
  local s1 d1; s1=$(stats $db); d1=$(awk '/^pgpgin /{print $2}' /proc/vmstat); statio $db > $out/statio-after.txt
  statio_diff $out
  echo "$TAG$1 $(grep 'end to end' $out/ingest.txt) rss_max_kb $(sort -n $out/rss_kb_samples | tail -1)" \
    "blks_read $(( ${s1%%|*} - ${s0%%|*} )) blks_hit $(( ${s1##*|} - ${s0##*|} )) disk_read_mb $(( (d1 - d0) / 1024 ))" >> $R/probes.txt
  kill $pid; wait $pid
}
