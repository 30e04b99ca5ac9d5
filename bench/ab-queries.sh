#!/usr/bin/env bash
# ab-queries.sh FLEET NAME=BINARY [NAME=BINARY ...]
#
# Query A/B: the 16 queries of the bench mix (the reference kit's
# queries.py, sequential phase) answered by each binary in turn from ONE
# PostgreSQL database, for ROUNDS interleaved rounds, so that two builds are
# compared on the same data and the same machine state. The database
# (ab_queries) is loaded once by the first binary's `reportdb import`, and
# reused while it holds FLEET (a marker table records the file's name and
# size). Writes bench/results/ab-queries.txt: each query's p50 per binary
# (the median of its rounds' p50s) and the ratio of each binary to the
# first.
#
#   ROUNDS=3  K=20 (measured runs per query and round)  PORT=18750
#   DB=ab_queries (the database, kept between runs for its fleet)
#   REPORTDB_BENCH_PG   the cluster
#   SERVE_FLAGS         extra flags for every `reportdb serve`
#
# E.g. main against a branch at 10,000 nodes x 1 day:
#   python3 ../shared/bench/fleet.py --scale large --out large.jsonl.gz
#   bench/ab-queries.sh large.jsonl.gz main=/tmp/reportdb-main branch=./reportdb
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_shared
fleet=${1:?usage: $0 FLEET NAME=BINARY ...}; shift
(($# >= 1)) || { echo "usage: $0 FLEET NAME=BINARY ..." >&2; exit 2; }
ROUNDS=${ROUNDS:-3}; K=${K:-20}; PORT=${PORT:-18750}
OUT=$WORK/ab-queries; mkdir -p "$OUT"
result=$RESULTS/ab-queries.txt
db=${DB:-ab_queries}
first=${1#*=}
marker="$(basename "$fleet") $(stat -c %s "$fleet")"
loaded=$(psql -qAt "$PG/$db" -c "SELECT fleet FROM ab_queries_fleet" 2>/dev/null || true)
if [[ "$loaded" != "$marker" ]]; then
  echo "loading $fleet into $db with $first import" >&2
  psql -qAt "$PG/postgres" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db" >/dev/null
  "$first" import --database "$PG/$db" --progress lines --progress-interval 60s "$fleet" > "$OUT/import.log" 2>&1
  psql -qAt "$PG/$db" -c "CREATE TABLE ab_queries_fleet (fleet text)" -c "INSERT INTO ab_queries_fleet VALUES ('$marker')" >/dev/null
fi
for r in $(seq "$ROUNDS"); do
  for nb in "$@"; do
    name=${nb%%=*}; bin=${nb#*=}
    rm -rf "$OUT/state-$name"; mkdir -p "$OUT/state-$name"
    # shellcheck disable=SC2086
    "$bin" serve --listen 127.0.0.1:$PORT --database "$PG/$db" --report-ttl 0 --node-ttl 0 \
      --data-dir "$OUT/state-$name/data" --spool-dir "$OUT/state-$name/spool" ${SERVE_FLAGS:-} > "$OUT/server-$name-$r.log" 2>&1 &
    pid=$!
    for _ in $(seq 300); do curl -sf http://127.0.0.1:$PORT/pdb/meta/v1/version >/dev/null && break; sleep 0.2; done
    python3 "$BENCH/queries.py" http://127.0.0.1:$PORT --fleet "$fleet" -k "$K" --duration 0 \
      --json-out "$OUT/$name-$r.json" > "$OUT/$name-$r.txt" 2>&1
    kill $pid; wait $pid || true
  done
done
{
  header "Query A/B: $(basename "$fleet"), the 16 queries' p50 (ms), median of $ROUNDS interleaved rounds of $K runs" "$first"
  echo "binaries: $*"
  echo
  python3 - "$OUT" "$ROUNDS" "$@" <<'EOF'
import json, statistics, sys
out, rounds, pairs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
names = [p.split("=", 1)[0] for p in pairs]
p50 = {}
order = []
for n in names:
    for r in range(1, rounds + 1):
        j = json.load(open("%s/%s-%d.json" % (out, n, r)))
        for q in j["queries"]:
            if q["name"] not in order:
                order.append(q["name"])
            p50.setdefault((n, q["name"]), []).append(q["p50_ms"])
head = "%-26s" % "query" + "".join("%12s" % n for n in names) + "".join("%12s" % (n + "/" + names[0]) for n in names[1:])
print(head)
print("-" * len(head))
for q in order:
    med = [statistics.median(p50[(n, q)]) for n in names]
    print("%-26s" % q + "".join("%12.2f" % m for m in med) + "".join("%12.3f" % (m / med[0] if med[0] else float("nan")) for m in med[1:]))
EOF
} > "$result"
cat "$result"
echo "wrote $result" >&2
