#!/usr/bin/env bash
# sustained.sh BINARY DB14
#
# Sustained ingest into a loaded database (DB14, e.g. the 10,000-node 14-day
# one of fleet-14d.sh or days.sh) against an empty one: per round, one
# server per database takes the three files of a new day (fleet.py, NODES
# nodes x 3 runs, 29,704 reports at 10,000 nodes) back to back at 8
# connections, with its rollup compaction running as in production, and stays
# up until the compaction has merged what they wrote. The rate is the three
# files' reports over their ingest time. Rounds alternate which database
# goes first; each round takes a new day and a newly created empty database
# (sustained_empty).
#
# Writes bench/results/sustained.txt: per session the rate, the compaction
# after the last file, the server's peak RSS, PostgreSQL's blocks read
# outside its buffers and hit, and the ratio of the loaded database's rate
# to the empty one's over all rounds.
#
# The figure of docs/performance.md:
#   bench/sustained.sh ./reportdb s10k_14d
#
#   ROUNDS=2  NODES=10000  START=2026-02-13 (the first round's day; each
#   round the next)  PORT=18700  DATA=$REPORTDB_BENCH_WORK/fleets (probe files)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_shared
PB=${1:?usage: $0 BINARY DB14}; DB14=${2:?usage: $0 BINARY DB14}
ROUNDS=${ROUNDS:-2}; NODES=${NODES:-10000}; START=${START:-2026-02-13}; PORT=${PORT:-18700}
DATA=${DATA:-$WORK/fleets}; mkdir -p "$DATA"
R=$WORK/sustained; rm -rf "$R"; mkdir -p "$R"
result=$RESULTS/sustained.txt
header "Sustained ingest into $DB14 against an empty database ($NODES nodes, 3 files a day, 8 connections, $ROUNDS rounds)" "$PB" > "$R/sustained.txt"

stats() { psql -qAt "$PG/postgres" -c "SELECT blks_read || '|' || blks_hit FROM pg_stat_database WHERE datname = '$1'"; }
unmerged() { # delta rows not yet merged, all rollups
  psql -qAt "$PG/$1" -c "SELECT (SELECT count(*) FROM distinct_rollup WHERE NOT merged) + (SELECT count(*) FROM event_rollup WHERE NOT merged)
    + (SELECT count(*) FROM report_rollup WHERE NOT merged) + (SELECT count(*) FROM failure_rollup WHERE NOT merged)
    + (SELECT count(*) FROM latest_rollup WHERE NOT merged) + (SELECT count(*) FROM report_type_rollup WHERE NOT merged)" 2>/dev/null || echo "none (no tables yet)"
}
serve() { # serve DB OUT: start PB on DB, wait until it answers and has loaded
  # its fleet state, sample its RSS every 2 s into OUT/rss_kb_samples; pid in $pid
  local db=$1 out=$2
  rm -rf "$out/state"; mkdir -p "$out/state"
  "$PB" serve --listen 127.0.0.1:$PORT --database "$PG/$db" --report-ttl 0 --node-ttl 0 \
    --data-dir "$out/state/data" > "$out/server.log" 2>&1 &
  pid=$!
  for _ in $(seq 120); do curl -sf http://127.0.0.1:$PORT/pdb/meta/v1/version >/dev/null && break; sleep 1; done
  for _ in $(seq 600); do
    curl -sf http://127.0.0.1:$PORT/metrics | grep -q '^reportdb_fleet_state_loaded_timestamp_seconds [1-9]' && break
    sleep 0.2
  done
  (while kill -0 $pid 2>/dev/null; do ps -o rss= -p $pid; sleep 2; done) > "$out/rss_kb_samples" &
}
session() { # session NAME DB FILE...
  local name=$1 db=$2 out=$R/$1; shift 2
  mkdir -p "$out"
  local pid; serve "$db" "$out"
  local s0 s1 t=0 n=0 k=0 f secs reps
  s0=$(stats "$db")
  for f in "$@"; do
    k=$((k+1))
    python3 "$BENCH/ingest.py" http://127.0.0.1:$PORT --fleet "$f" --concurrency 8 \
      --json-out "$out/ingest-$k.json" > "$out/ingest-$k.txt" 2>&1
    read -r secs reps < <(python3 -c "import json, sys; d = json.load(open(sys.argv[1])); print(d['e2e_seconds'], d['reports_accepted'])" "$out/ingest-$k.json")
    t=$(echo "$t + $secs" | bc); n=$((n + reps))
  done
  s1=$(stats "$db")
  local c0 cs; c0=$(date +%s.%N)
  for _ in $(seq 900); do [[ $(unmerged "$db") == 0 ]] && break; sleep 1; done
  cs=$(echo "$(date +%s.%N) - $c0" | bc)
  echo "$name reports $n ingest_s $t rate $(echo "scale=1; $n / $t" | bc) compaction_after_s $(printf %.1f "$cs")" \
    "rss_max_mb $(( $(sort -n "$out/rss_kb_samples" | tail -1) / 1024 )) blks_read $(( ${s1%%|*} - ${s0%%|*} )) blks_hit $(( ${s1##*|} - ${s0##*|} ))" \
    | tee -a "$R/sustained.txt"
  kill "$pid"; wait "$pid" || true
}
for r in $(seq "$ROUNDS"); do
  day=$(date -u -d "$START + $((r - 1)) days" +%F); files=()
  for end in 01:30 03:00 04:30; do
    f=$DATA/probe-${NODES}n-3runs-$day-${end/:/}.jsonl.gz
    [[ -e $f ]] || python3 "$BENCH/fleet.py" --nodes "$NODES" --runs 3 --end "${day}T$end:00Z" --out "$f" >&2
    files+=("$f")
  done
  psql -qAt "$PG/postgres" -c "DROP DATABASE IF EXISTS sustained_empty WITH (FORCE)" -c "CREATE DATABASE sustained_empty" >/dev/null
  psql -qAt "$PG/$DB14" -c CHECKPOINT >/dev/null 2>&1 || true; sync
  case $((r % 2)) in 1) order="empty loaded";; *) order="loaded empty";; esac
  for w in $order; do
    case $w in empty) db=sustained_empty;; loaded) db=$DB14;; esac
    session "r$r-$day-$w" "$db" "${files[@]}"
  done
done
awk '/ rate / { for (i = 1; i < NF; i++) { if ($i == "reports") n = $(i+1); if ($i == "ingest_s") s = $(i+1) }
  if ($1 ~ /-loaded$/) { ln += n; ls += s } else { en += n; es += s } }
  END { if (es > 0 && ls > 0) printf "\nloaded / empty: %.1f %% (%.1f against %.1f reports/s over all rounds)\n", 100 * (ln / ls) / (en / es), ln / ls, en / es }' \
  "$R/sustained.txt" >> "$R/sustained.txt"
cp "$R/sustained.txt" "$result"
cat "$result"
