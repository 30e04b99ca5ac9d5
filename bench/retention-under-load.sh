#!/usr/bin/env bash
# retention-under-load.sh BINARY DATABASE_URL FLEET CUTOFF [PORT]
#
# A retention run on PostgreSQL while reports are ingested and queries run:
# serves DATABASE_URL with BINARY, a --report-ttl chosen so that the first
# retention run (one --gc-interval, 30 s, after the start) deletes the
# reports older than CUTOFF (RFC 3339, e.g. 2026-01-02T12:00:00Z), and
# meanwhile
#   - posts FLEET (a fleet.py file) with the reference kit's ingest.py, 8
#     connections: acknowledgement latency p50/p99, errors;
#   - asks for the first reports page with include_total every 200 ms
#     (reports-page-probe.sh: start time, status and latency of each).
# (ingest.py does not wait for the reports to be queryable: retention
# deletes some meanwhile.)
#
# Writes bench/results/retention-under-load.txt: the retention line of the
# server log (deleted reports, duration, the time of each step), the ingest
# figures with how many of the posted reports were new (stored) and how many
# the database already had (duplicates write nothing, so a FLEET the
# database holds loads it less than real ingest: generate new reports with
# fleet.py --end later than the database's), and the page's latencies. The
# raw output stays in $REPORTDB_BENCH_WORK/retention.
#
# TRACE=1 also records where a slow request's time went: for the run only,
# PostgreSQL's lock-wait log (deadlock_timeout 200 ms), statements over 1 s
# with auto_explain (ANALYZE, BUFFERS), track_io_timing; pg_stat_activity
# and ungranted pg_locks sampled every 200 ms (activity.tsv), vmstat 1 and
# /proc/pressure/io (needs psql as a superuser on DATABASE_URL's server and
# a PostgreSQL log file on this machine).
#
# The figures of docs/performance.md (10,000 nodes x 14 days):
#   bench/fleet-14d.sh postgres://postgres@127.0.0.1:5432/s10k_14d     # the database
#   python3 $REPORTDB_SHARED/bench/fleet.py --nodes 10000 --runs 3 --end 2026-02-16T01:30:00Z --out probe.jsonl.gz
#   bench/retention-under-load.sh ./reportdb postgres://postgres@127.0.0.1:5432/s10k_14d probe.jsonl.gz 2026-01-02T12:00:00Z
# The database is changed (reports deleted, reports added): use a copy, e.g.
#   createdb -T loaded_db scratch_copy
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_shared
bin=${1:?binary}; db=${2:?database url}; fleet=${3:?fleet file}; cutoff=${4:?cutoff}
port=${5:-18513}
HERE=$ROOT/bench
out=$WORK/retention; rm -rf "$out"; mkdir -p "$out"
result=$RESULTS/retention-under-load.txt
pids=()
pg() { psql -Atq "$db" "$@"; }
run_settings=(
  "log_lock_waits = on" "deadlock_timeout = '200ms'" "track_io_timing = on"
  "log_min_duration_statement = '1s'" "session_preload_libraries = 'auto_explain'"
  "auto_explain.log_min_duration = '1s'" "auto_explain.log_analyze = on"
  "auto_explain.log_buffers = on" "auto_explain.log_timing = off"
)
# alter SET|RESET: ALTER SYSTEM each of run_settings, then reload
# (auto_explain's settings are known once it is loaded in the session)
alter() {
  local args=(-c "LOAD 'auto_explain'") s
  for s in "${run_settings[@]}"; do
    if [[ $1 == SET ]]; then args+=(-c "ALTER SYSTEM SET $s"); else args+=(-c "ALTER SYSTEM RESET ${s%% =*}"); fi
  done
  pg "${args[@]}" -c "SELECT pg_reload_conf()" >/dev/null
}
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  if [[ -n "${TRACE:-}" ]]; then
    alter RESET || true
    tail -c +"$((logstart + 1))" "$pglog" > "$out/postgresql.log" || true
  fi
}
trap cleanup EXIT
if [[ -n "${TRACE:-}" ]]; then
  pglog=$(pg -c "SELECT pg_current_logfile()" 2>/dev/null || true)
  [[ -n "$pglog" ]] || pglog=$(ls -t /var/log/postgresql/postgresql-*-main.log | head -1)
  [[ "$pglog" = /* ]] || pglog=$(pg -c "SHOW data_directory")/$pglog
  logstart=$(stat -c %s "$pglog")
  alter SET
  ( while :; do
      pg -F $'\t' -c "SELECT to_char(clock_timestamp(), 'HH24:MI:SS.MS'), pid, backend_type, state,
          coalesce(wait_event_type, '-'), coalesce(wait_event, '-'),
          round(extract(epoch FROM clock_timestamp() - query_start)::numeric, 3),
          left(regexp_replace(query, '\s+', ' ', 'g'), 100)
        FROM pg_stat_activity
        WHERE pid <> pg_backend_pid() AND state IS DISTINCT FROM 'idle'" \
        -c "SELECT to_char(clock_timestamp(), 'HH24:MI:SS.MS'), 'LOCKWAIT', l.pid, l.locktype, l.mode,
          coalesce(l.relation::regclass::text, '-'), pg_blocking_pids(l.pid)::text
        FROM pg_locks l WHERE NOT l.granted" 2>/dev/null || true
      sleep 0.2
    done ) > "$out/activity.tsv" &
  pids+=($!)
  vmstat -t 1 > "$out/vmstat.txt" &
  pids+=($!)
  ( while :; do echo "$(date -u +%T) $(tr '\n' ' ' < /proc/pressure/io)"; sleep 1; done ) > "$out/pressure-io.txt" 2>/dev/null &
  pids+=($!)
fi

interval=30
cut=$(date -u -d "$cutoff" +%s)
now=$(date -u +%s)
ttl=$(( now + interval - cut ))s
"$bin" serve --listen "127.0.0.1:$port" --database "$db" --data-dir "$out/data" \
  --report-ttl "$ttl" --gc-interval ${interval}s --log-level info > "$out/server.log" 2>&1 &
spid=$!
pids+=($spid)
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$port/status/v1/services" && break; sleep 0.2; done
# queries: the first reports page with its total, every 200 ms, for 75 s
"$HERE/reports-page-probe.sh" "http://127.0.0.1:$port" 75 > "$out/queries.txt" &
qpid=$!
python3 "$BENCH/ingest.py" "http://127.0.0.1:$port" --fleet "$fleet" --concurrency 8 \
  --no-wait --json-out "$out/ingest.json" > "$out/ingest.txt" 2>&1 || true
wait $qpid || true
# wait for the retention run to be logged (at most 5 minutes)
for _ in $(seq 300); do grep -q '"retention\|msg=retention' "$out/server.log" && break; sleep 1; done
{
  header "Retention under ingest and queries: $(basename "$fleet") posted, cutoff $cutoff${TRACE:+ (traced)}" "$bin"
  echo "database: $(pg -c "SELECT count(*) || ' reports, ' || pg_size_pretty(pg_database_size(current_database())) FROM reports" 2>/dev/null || echo '?')"
  echo "== retention"; grep -E 'msg=retention|retention failed' "$out/server.log" || echo "no retention run logged"
  echo "== ingest"; grep -iE "reports/s|ack|latency|error|fail" "$out/ingest.txt" | head -8
  curl -s "http://127.0.0.1:$port/metrics" | awk '/^reportdb_ingest_reports_total\{/ && /channel="command"/ {
    match($0, /outcome="[a-z]+"/); o = substr($0, RSTART + 9, RLENGTH - 10); n[o] += $NF }
    END { printf "  stored %d, duplicates %d (the server'"'"'s reportdb_ingest_reports_total)\n", n["stored"], n["duplicate"] }'
  echo "== queries (reports page with include_total, every 200 ms)"
  "$HERE/reports-page-probe.sh" --summary "$out/queries.txt"
  if [[ -n "${TRACE:-}" ]]; then
    echo "== lock waits logged"; grep -c 'still waiting for\|acquired .* after' "$out/postgresql.log" 2>/dev/null || true
  fi
} | tee "$result"
