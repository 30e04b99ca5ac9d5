#!/usr/bin/env bash
# storage.sh FLEET[:import|:ingest] ...
#
# Where the bytes go: each FLEET (a file of the reference kit's fleet.py, or
# a scale name, medium or large, generated into $DATA when absent) is loaded
# into a fresh PostgreSQL database (storage_<name>_<how>) and a fresh
# embedded store, and bench/storagestat prints, for each backend, every table and
# index (rows, heap, TOAST or overflow pages, indexes, total, bytes per
# report, share; day partitions added up under their parent), the largest
# ten, the columns of the largest tables, and the JSON documents' stored
# size against their raw length.
#
# Writes bench/results/storage.txt (every fleet and backend of the run, one
# after the other; rewritten after each, so an interrupted run keeps what it
# measured), overwritten by the next run. The figures of docs/performance.md:
#   bench/storage.sh medium medium:ingest large
#
#   :import, :ingest, or LOAD for the FLEETs without one (default import):
#                   how the reports get in: import (reportdb import, then its
#                   VACUUM and rollup compaction) or ingest (a server with
#                   --report-ttl 0 --node-ttl 0, the kit's ingest.py at
#                   CONCURRENCY=8 connections through /pdb/cmd/v1, stopped 5 s
#                   after: what a live server holds; the embedded store takes
#                   about 150 reports/s that way on 2 CPUs, so large:ingest
#                   takes most of an hour)
#   BACKENDS="postgres sqlite"
#   DATA=$REPORTDB_BENCH_WORK/fleets   where scale names are generated
#   REPORTDB=PATH   the binary (default: built from this checkout)
#   KEEP=1          keep the databases (storage_<name>_<how>, $WORK/storage/<name>_<how>/sqlite)
#   PORT=18740      the server's port with LOAD=ingest
set -euo pipefail
[[ $# -gt 0 ]] || { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2; exit 2; }
. "$(dirname "$0")/lib.sh"
need_shared
LOAD=${LOAD:-import}
BACKENDS=${BACKENDS:-postgres sqlite}
DATA=${DATA:-$WORK/fleets}
KEEP=${KEEP:-0}
PORT=${PORT:-18740}
CONCURRENCY=${CONCURRENCY:-8}
[[ "$LOAD" == import || "$LOAD" == ingest ]] || { echo "storage.sh: LOAD is import or ingest" >&2; exit 2; }
bin=${REPORTDB:-$(build)}
out=$WORK/storage; mkdir -p "$out" "$DATA"
stat=$out/storagestat
(cd "$ROOT" && go build -o "$stat" ./bench/storagestat)
result=$RESULTS/storage.txt
export PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning"
log() { echo "storage.sh: $*" >&2; }

server_pid=""
dbs=()
cleanup() {
  if [[ -n "$server_pid" ]]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  if [[ "$KEEP" != 1 ]]; then
    for db in "${dbs[@]}"; do psql -qAt "$PG/postgres" -c "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" >/dev/null 2>&1 || true; done
  fi
}
trap cleanup EXIT

# load BACKEND FLEET NAME HOW: a fresh database of BACKEND with FLEET in it,
# loaded HOW (import or ingest); sets flag to the storagestat flag that names it
load() {
  local backend=$1 fleet=$2 name=$3 how=$4 dir=$out/$name db target t0
  if [[ "$backend" == postgres ]]; then
    db=storage_$name
    dbs+=("$db")
    psql -qAt "$PG/postgres" -c "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" -c "CREATE DATABASE \"$db\"" >/dev/null
    target=(--database "$PG/$db")
  else
    rm -rf "$dir/sqlite"
    target=(--data-dir "$dir/sqlite")
  fi
  mkdir -p "$dir"
  t0=$(date +%s)
  if [[ "$how" == import ]]; then
    "$bin" import "${target[@]}" --progress lines --progress-interval 60s "$fleet" > "$dir/import-$backend.log" 2>&1 ||
      { log "import failed:"; tail -20 "$dir/import-$backend.log" >&2; exit 1; }
  else
    rm -rf "$dir/state"; mkdir -p "$dir/state"
    local sdata=("${target[@]}")
    [[ "$backend" == postgres ]] && sdata+=(--data-dir "$dir/state/data")
    "$bin" serve --listen "127.0.0.1:$PORT" "${sdata[@]}" --spool-dir "$dir/state/spool" --report-ttl 0 --node-ttl 0 \
      > "$dir/server-$backend.log" 2>&1 &
    server_pid=$!
    for _ in $(seq 300); do curl -sf -o /dev/null "http://127.0.0.1:$PORT/pdb/meta/v1/version" && break; sleep 0.2; done
    python3 "$BENCH/ingest.py" "http://127.0.0.1:$PORT" --fleet "$fleet" --concurrency "$CONCURRENCY" \
      > "$dir/ingest-$backend.log" 2>&1 || { log "ingest failed:"; tail -20 "$dir/ingest-$backend.log" >&2; exit 1; }
    sleep 5
    kill "$server_pid"; wait "$server_pid" || true; server_pid=""
  fi
  log "$name: $backend loaded in $(($(date +%s) - t0)) s"
  if [[ "$backend" == postgres ]]; then
    psql -qAt "$PG/$db" -c "ANALYZE" -c "CHECKPOINT" >/dev/null
    flag="-postgres $PG/$db"
  else
    flag="-sqlite $dir/sqlite"
  fi
}

# the results file with the sections measured so far (rewritten after each
# one, so that an interrupted run leaves what it measured)
sections=()
write_result() {
  {
    header "Where the bytes go: every table and index of both backends" "$bin"
    for s in "${sections[@]}"; do
      echo "######## $(cat "$out/$s.fleet")"
      echo
      cat "$out/$s.txt"
      echo
    done
  } > "$result"
}

for arg in "$@"; do
  load_how=$LOAD
  if [[ "$arg" == *:import || "$arg" == *:ingest ]]; then load_how=${arg##*:}; arg=${arg%:*}; fi
  fleet=$arg
  if [[ "$arg" =~ ^(tiny|small|medium|large)$ ]]; then
    fleet=$DATA/fleet-$arg.jsonl.gz
    if [[ ! -s "$fleet" ]]; then
      log "generating the $arg fleet into $fleet"
      python3 "$BENCH/fleet.py" --scale "$arg" --out "$fleet.tmp.jsonl.gz" --manifest "$fleet.manifest.json" --quiet
      mv "$fleet.tmp.jsonl.gz" "$fleet"
    fi
  fi
  [[ -s "$fleet" ]] || { log "no fleet file $fleet"; exit 2; }
  name=$(basename "$fleet"); name=${name%%.*}; name=${name#fleet-}; name=${name//[^A-Za-z0-9_]/_}_$load_how
  for backend in $BACKENDS; do
    log "$name: loading into $backend"
    load "$backend" "$fleet" "$name" "$load_how"
    log "$name: measuring $backend"
    # shellcheck disable=SC2086
    "$stat" $flag > "$out/$name-$backend.txt"
    sections+=("$name-$backend")
    if [[ "$load_how" == import ]]; then how="reportdb import"; else how="reportdb serve, ingest.py at $CONCURRENCY connections"; fi
    echo "$(basename "$fleet"), $how" > "$out/$name-$backend.fleet"
    write_result
    if [[ "$KEEP" != 1 ]]; then
      if [[ "$backend" == postgres ]]; then
        psql -qAt "$PG/postgres" -c "DROP DATABASE IF EXISTS \"storage_$name\" WITH (FORCE)" >/dev/null
      else
        rm -rf "$out/$name/sqlite"
      fi
    fi
  done
done

echo "wrote $result" >&2
