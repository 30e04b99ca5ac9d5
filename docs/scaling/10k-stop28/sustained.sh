#!/usr/bin/env bash
# stop 28: ingest into the 14-day database against an empty one, sustained.
# Stop 22's probes (probes.sh) start a server per file of 29,704 reports
# and stop it once the file is acknowledged: on this stop's machine a
# file takes 12-16 s, so the server's rollup compaction (every 30 s, and
# after 1 s without a batch) never ran inside the measured time, and was
# stopped half-way when the server was (the 14-day database's rollups kept
# 8.9 M unmerged distinct_rollup rows after 48 probes). On the slower
# machines of stops 22-27 a file took 30-45 s, so the 30 s compaction (and
# its VACUUM of the rollups) fell inside the 14-day probes. Here one server
# per database takes the three files of a new day back to back (the idle
# compaction between them, the interval one inside), and stays up until
# its compaction has merged what they wrote; the rate is the three files'
# reports over their ingest time, and the time the compaction after the
# last file took is recorded beside it. Rounds alternate the order; each
# round a new day and an empty database created anew.
#   sustained.sh BINARY   (DB14: the 14-day database, s10k_14d_def;
#                          DAY: the first round's day of MONTH (2026), 30;
#                          MONTH: 01;
#                          ROUNDS: 2; R: results, /work/data-10k/results-stop28/sustained;
#                          NODES: the probe files' nodes, 10000)
set -u
[[ -x "${1:-}" ]] || { echo "usage: $0 BINARY" >&2; exit 2; }
cd "$(dirname "$0")/../../.."
D=/work/data-10k; R=${R:-$D/results-stop28/sustained}; mkdir -p $R
PG=postgres://postgres@127.0.0.1:5432
PB=$1; DB14=${DB14:-s10k_14d_def}; DAY=${DAY:-30}; MONTH=${MONTH:-01}; ROUNDS=${ROUNDS:-2}; NODES=${NODES:-10000}; TAG=
. docs/scaling/10k-stop22/probe-lib.sh # stats, statio, serve, statio_diff
psql -qAt $PG/postgres -c "SELECT name || ' = ' || setting || coalesce(' ' || unit, '') FROM pg_settings
  WHERE name IN ('shared_buffers', 'max_wal_size') ORDER BY 1" > $R/settings.txt
unmerged() { # delta rows not yet merged, all rollups
  psql -qAt $PG/$1 -c "SELECT (SELECT count(*) FROM distinct_rollup WHERE NOT merged) + (SELECT count(*) FROM event_rollup WHERE NOT merged)
    + (SELECT count(*) FROM report_rollup WHERE NOT merged) + (SELECT count(*) FROM failure_rollup WHERE NOT merged)
    + (SELECT count(*) FROM latest_rollup WHERE NOT merged) + (SELECT count(*) FROM report_type_rollup WHERE NOT merged)" 2>/dev/null || echo "none (no tables yet)"
}
session() { # session NAME DB FILE...
  local name=$1 db=$2 out=$R/$1; shift 2
  mkdir -p $out
  echo "$name: unmerged rollup rows before: $(unmerged $db)" >> $R/sustained.txt
  local pid; serve $db $out --log-level debug
  local s0 s1 t=0 n=0 k=0 f secs reps
  s0=$(stats $db); statio $db > $out/statio-before.txt
  for f in "$@"; do
    k=$((k+1))
    python3 ../shared/bench/ingest.py http://127.0.0.1:18700 --fleet $f --concurrency 8 \
      --json-out $out/ingest-$k.json > $out/ingest-$k.txt 2>&1
    read -r secs reps < <(python3 -c "import json; d = json.load(open('$out/ingest-$k.json')); print(d['e2e_seconds'], d['reports_accepted'])")
    t=$(echo "$t + $secs" | bc); n=$((n + reps))
  done
  s1=$(stats $db)
  # then the compaction of what the files wrote (the server's, after 1 s idle)
  local c0; c0=$(date +%s.%N)
  for i in $(seq 900); do [[ $(unmerged $db) == 0 ]] && break; sleep 1; done
  local cs; cs=$(echo "$(date +%s.%N) - $c0" | bc)
  statio $db > $out/statio-after.txt
  statio_diff $out
  echo "$name files $# ingest_s $t reports $n rate $(echo "scale=1; $n / $t" | bc) compaction_after_s $(printf %.1f $cs)" \
    "rss_max_kb $(sort -n $out/rss_kb_samples | tail -1) blks_read $(( ${s1%%|*} - ${s0%%|*} )) blks_hit $(( ${s1##*|} - ${s0##*|} ))" \
    "compactions $(grep -c 'rollup compaction' $out/server.log)" >> $R/sustained.txt
  kill $pid; wait $pid
}
for r in $(seq $ROUNDS); do
  day=$(printf %02d $((10#$DAY + r - 1))); files=()
  for end in 01:30 03:00 04:30; do
    f=$D/probe-${NODES}n-3runs-$MONTH$day-${end/:/}.jsonl.gz
    [[ $MONTH == 01 ]] && f=$D/probe-${NODES}n-3runs-$day-${end/:/}.jsonl.gz # probes.sh's names
    [[ -e $f ]] || python3 ../shared/bench/fleet.py --nodes $NODES --runs 3 --end 2026-$MONTH-${day}T$end:00Z \
      --out $f >> $R/probe-fleet.log 2>&1 || { echo "fleet.py failed for day $MONTH-$day" >&2; exit 1; }
    files+=($f)
  done
  psql -qAt $PG/postgres -c "DROP DATABASE IF EXISTS probe_empty" -c "CREATE DATABASE probe_empty"
  psql -qAt $PG/$DB14 -c CHECKPOINT; sync
  case $((r % 2)) in 1) order="empty 14d";; *) order="14d empty";; esac
  for w in $order; do
    case $w in empty) db=probe_empty;; 14d) db=$DB14;; esac
    session r$r-d$day-$w $db "${files[@]}"
  done
done
date -u +%FT%TZ > $R/done
