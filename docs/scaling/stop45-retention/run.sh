#!/usr/bin/env bash
# Retention at 10,000 nodes x 14 days under load, with everything needed to
# say where a slow request's time went (stop 45, issue 10: stop 44's run 1
# had one reports-page request of 14.1 s that runs 2 and 3 did not repeat).
#
#   run.sh BINARY DATABASE_URL PROBE CUTOFF OUT
#
# PROBE must hold reports the database does not have yet (stop 44's runs 2
# and 3 re-posted run 1's probe: duplicates, which write nothing, so they
# did not load the database as run 1 did); fleet.py --end picks new ones:
#   fleet.py --nodes 10000 --runs 3 --end 2026-02-16T01:30:00Z --out probe.jsonl.gz
# Meanwhile it
#   - turns on, for the run only, PostgreSQL's lock-wait log
#     (deadlock_timeout 200 ms), statements over 1 s with auto_explain
#     (ANALYZE, BUFFERS, no per-node timing) and track_io_timing;
#   - samples pg_stat_activity (every non-idle backend, the checkpointer and
#     the other background processes included: wait event, state,
#     how long its statement has run) and ungranted pg_locks every 200 ms;
#   - runs vmstat 1 and samples /proc/pressure/io every second;
# and the server logs slow requests with their breakdown (conn wait, sql).
# Needs psql as a superuser on DATABASE_URL's server.
set -euo pipefail
bin=${1:?binary}; db=${2:?database url}; probe=${3:?probe fleet}; cutoff=${4:?cutoff}; out=${5:?out dir}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$HERE/../../..
mkdir -p "$out"
pg() { psql -Atq "$db" "$@"; }
pglog=$(pg -c "SELECT pg_current_logfile()" 2>/dev/null || true)
[[ -n "$pglog" ]] || pglog=$(ls -t /var/log/postgresql/postgresql-*-main.log | head -1)
[[ "$pglog" = /* ]] || pglog=$(pg -c "SHOW data_directory")/$pglog
logstart=$(stat -c %s "$pglog")

# the settings of the run (ALTER SYSTEM; reset on exit)
run_settings=(
  "log_lock_waits = on" "deadlock_timeout = '200ms'" "track_io_timing = on"
  "log_min_duration_statement = '1s'" "session_preload_libraries = 'auto_explain'"
  "auto_explain.log_min_duration = '1s'" "auto_explain.log_analyze = on"
  "auto_explain.log_buffers = on" "auto_explain.log_timing = off"
)
# alter VERB: ALTER SYSTEM SET (or RESET) each of run_settings, then reload
# (auto_explain's settings are known once it is loaded in the session)
alter() {
  local args=(-c "LOAD 'auto_explain'") s
  for s in "${run_settings[@]}"; do
    if [[ $1 == SET ]]; then args+=(-c "ALTER SYSTEM SET $s"); else args+=(-c "ALTER SYSTEM RESET ${s%% =*}"); fi
  done
  pg "${args[@]}" -c "SELECT pg_reload_conf()" >/dev/null
}
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  alter RESET || true
  tail -c +"$((logstart + 1))" "$pglog" > "$out/postgresql.log" || true
}
trap cleanup EXIT
alter SET

# samplers
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

BENCH=${BENCH:-$ROOT/../shared/bench} "$ROOT/scripts/retention-under-load.sh" "$bin" "$db" "$probe" "$cutoff" 18513 "$out/run" | tee "$out/summary.txt"
grep -E 'slow query|msg=retention|maintenance' "$out/run/server.log" > "$out/server-slow-and-retention.log" || true
