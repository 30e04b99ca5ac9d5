#!/usr/bin/env bash
# ab-ingest.sh FLEET NAME=BINARY [NAME=BINARY ...]
#
# Ingest A/B: for ROUNDS rounds, each binary in turn ingests FLEET (a
# fleet.py file) through /pdb/cmd/v1 with ../shared/bench/ingest.py into a
# fresh PostgreSQL database, so that binaries are compared in one run,
# interleaved, on the same machine state. Prints one line per run (name,
# round, reports/s end to end, ack p99) and keeps ingest.py's JSON in OUT.
#
#   PG=postgres://postgres@127.0.0.1:5432   the cluster (databases ab_ingest_<NAME> are dropped and created)
#   ROUNDS=2  CONCURRENCY=8  PORT=18730  OUT=${TMPDIR:-/tmp}/ab-ingest
set -euo pipefail
fleet=${1:?usage: $0 FLEET NAME=BINARY ...}; shift
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PG=${PG:-postgres://postgres@127.0.0.1:5432}
ROUNDS=${ROUNDS:-2}; CONCURRENCY=${CONCURRENCY:-8}; PORT=${PORT:-18730}
OUT=${OUT:-${TMPDIR:-/tmp}/ab-ingest}
mkdir -p "$OUT"
for r in $(seq "$ROUNDS"); do
  for nb in "$@"; do
    name=${nb%%=*}; bin=${nb#*=}
    db=ab_ingest_$name
    psql -qAt "$PG/postgres" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db" >/dev/null
    rm -rf "$OUT/state-$name"; mkdir -p "$OUT/state-$name"
    "$bin" serve --listen 127.0.0.1:$PORT --database "$PG/$db" --report-ttl 0 --data-dir "$OUT/state-$name/data" \
      --spool-dir "$OUT/state-$name/spool" > "$OUT/server-$name-$r.log" 2>&1 &
    pid=$!
    for _ in $(seq 100); do curl -sf http://127.0.0.1:$PORT/pdb/meta/v1/version >/dev/null && break; sleep 0.2; done
    python3 "$ROOT/../shared/bench/ingest.py" http://127.0.0.1:$PORT --fleet "$fleet" --concurrency "$CONCURRENCY" \
      --json-out "$OUT/$name-$r.json" > "$OUT/$name-$r.txt" 2>&1
    kill $pid; wait $pid || true
    python3 -c 'import json, sys; j = json.load(open(sys.argv[1]))
print("%-10s round %s  %8.1f reports/s end to end  ack p99 %.1f ms" % (sys.argv[2], sys.argv[3], j["e2e_reports_per_s"], j["ack_ms"]["p99"]))' \
      "$OUT/$name-$r.json" "$name" "$r"
  done
done
