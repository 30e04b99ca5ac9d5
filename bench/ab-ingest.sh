#!/usr/bin/env bash
# ab-ingest.sh FLEET NAME=BINARY [NAME=BINARY ...]
#
# Ingest A/B: for ROUNDS rounds, each binary in turn ingests FLEET (a file of
# the reference kit's fleet.py) through /pdb/cmd/v1 with the kit's ingest.py
# into a fresh PostgreSQL database, so that binaries (or one binary with
# different settings, through a wrapper script) are compared in one run,
# interleaved, on the same machine state. Writes bench/results/ab-ingest.txt:
# one line per run (name, round, reports/s end to end, ack p99).
#
#   ROUNDS=3  CONCURRENCY=8  PORT=18730
#   REPORTDB_BENCH_PG   the cluster (databases ab_ingest_<NAME> are dropped and created)
#   SERVE_FLAGS         extra flags for every `reportdb serve`
#
# E.g. the two acknowledgement modes (docs/performance.md):
#   printf '#!/bin/sh\nexec %s "$@" --acknowledge spool\n' "$PWD/reportdb" > /tmp/rdb-spool; chmod +x /tmp/rdb-spool
#   bench/ab-ingest.sh medium.jsonl.gz commit=$PWD/reportdb spool=/tmp/rdb-spool
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_shared
fleet=${1:?usage: $0 FLEET NAME=BINARY ...}; shift
ROUNDS=${ROUNDS:-3}; CONCURRENCY=${CONCURRENCY:-8}; PORT=${PORT:-18730}
OUT=$WORK/ab-ingest; mkdir -p "$OUT"
result=$RESULTS/ab-ingest.txt
{
  header "Ingest A/B: $(basename "$fleet"), $CONCURRENCY connections, $ROUNDS interleaved rounds" "${1#*=}"
  echo "binaries: $*"
  echo
} > "$result"
for r in $(seq "$ROUNDS"); do
  for nb in "$@"; do
    name=${nb%%=*}; bin=${nb#*=}
    db=ab_ingest_$name
    psql -qAt "$PG/postgres" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db" >/dev/null
    rm -rf "$OUT/state-$name"; mkdir -p "$OUT/state-$name"
    # shellcheck disable=SC2086
    "$bin" serve --listen 127.0.0.1:$PORT --database "$PG/$db" --report-ttl 0 --node-ttl 0 --data-dir "$OUT/state-$name/data" \
      --spool-dir "$OUT/state-$name/spool" ${SERVE_FLAGS:-} > "$OUT/server-$name-$r.log" 2>&1 &
    pid=$!
    for _ in $(seq 100); do curl -sf http://127.0.0.1:$PORT/pdb/meta/v1/version >/dev/null && break; sleep 0.2; done
    python3 "$BENCH/ingest.py" http://127.0.0.1:$PORT --fleet "$fleet" --concurrency "$CONCURRENCY" \
      --json-out "$OUT/$name-$r.json" > "$OUT/$name-$r.txt" 2>&1
    kill $pid; wait $pid || true
    python3 -c 'import json, sys; j = json.load(open(sys.argv[1]))
print("%-10s round %s  %8.1f reports/s end to end  ack p99 %.1f ms" % (sys.argv[2], sys.argv[3], j["e2e_reports_per_s"], j["ack_ms"]["p99"]))' \
      "$OUT/$name-$r.json" "$name" "$r" | tee -a "$result"
  done
done
echo "wrote $result" >&2
