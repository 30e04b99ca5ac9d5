#!/usr/bin/env bash
# conformance.sh [BINARY]
#
# The reference kit's conformance suite (conformance/run.py: the cases
# recorded from PuppetDB 7.12.1) against a fresh reportdb on the embedded
# store and on a fresh PostgreSQL database (conformance_bench), with
# --report-ttl 0 --node-ttl 0 (the corpus has fixed dates). BINARY defaults to a build of
# this checkout; the environment reaches the servers, so
# REPORTDB_ACKNOWLEDGE=spool runs both in that mode. Writes
# bench/results/conformance.txt (each backend's passed/failed counts).
#   PORT=18180 (the embedded store; PostgreSQL on PORT+1)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[[ -f "$SHARED/conformance/run.py" ]] || { echo "conformance.sh: no conformance suite at $SHARED (set REPORTDB_SHARED)" >&2; exit 2; }
bin=${1:-$(build)}
PORT=${PORT:-18180}
out=$WORK/conformance; rm -rf "$out"; mkdir -p "$out"
result=$RESULTS/conformance.txt
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT
psql -qAt "$PG/postgres" -c "DROP DATABASE IF EXISTS conformance_bench WITH (FORCE)" -c "CREATE DATABASE conformance_bench" >/dev/null
"$bin" serve --listen 127.0.0.1:$PORT --data-dir "$out/sqlite" --report-ttl 0 --node-ttl 0 > "$out/sqlite.log" 2>&1 &
pids+=($!)
"$bin" serve --listen 127.0.0.1:$((PORT + 1)) --data-dir "$out/pg" --database "$PG/conformance_bench" --report-ttl 0 --node-ttl 0 > "$out/pg.log" 2>&1 &
pids+=($!)
for p in $PORT $((PORT + 1)); do
  for _ in $(seq 300); do curl -sf -o /dev/null "http://127.0.0.1:$p/pdb/meta/v1/version" && break; sleep 0.2; done
done
{
  header "Conformance on both backends${REPORTDB_ACKNOWLEDGE:+ (--acknowledge $REPORTDB_ACKNOWLEDGE)}" "$bin"
  echo "== embedded store"; python3 "$SHARED/conformance/run.py" "http://127.0.0.1:$PORT" 2>&1 | tail -3
  echo "== PostgreSQL"; python3 "$SHARED/conformance/run.py" "http://127.0.0.1:$((PORT + 1))" 2>&1 | tail -3
} | tee "$result"
