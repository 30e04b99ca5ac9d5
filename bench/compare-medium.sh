#!/usr/bin/env bash
# compare-medium.sh [FLEET]
#
# reportdb against PuppetDB 7.12.1 side by side on the medium fleet (1,000
# nodes x 24 runs, 23,696 reports), with the reference kit's compare.sh:
# reportdb from this checkout on PostgreSQL (instance.sh, database
# reportdb_bench, port 8091), PuppetDB with the kit's puppetdb-instance.sh
# (database puppetdb_bench, port 8092; PuppetDB 7.12.1 installed from its
# apt repository), each reset to an empty database before it ingests. Both
# are stopped afterwards: a PuppetDB left running keeps using about half a
# core, which spoils whatever is measured next.
#
# Writes bench/results/compare-medium.txt (compare.sh's report: ingest, the
# 16 queries p50/p95, the concurrent mix, CPU and memory, the result check),
# or compare-medium-ack-spool.txt with REPORTDB_ACKNOWLEDGE=spool.
#
#   FLEET  a fleet.py --scale medium file (generated into $WORK when absent)
#   REPORTDB_ACKNOWLEDGE=spool   reportdb answers submissions from its spool
#   K=N    measured runs per query (compare.sh's -k, 20 by default)
#   REPORTDB_BENCH_BIN=PATH   measure that binary instead of a build of this checkout
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_shared
fleet=${1:-$WORK/fleet-medium.jsonl.gz}
if [[ ! -s "$fleet" ]]; then
  python3 "$BENCH/fleet.py" --scale medium --out "$fleet"
fi
out=$WORK/compare-medium; rm -rf "$out"
name=reportdb-$(cd "$ROOT" && git rev-parse --short HEAD)
[[ -n "${REPORTDB_BENCH_BIN:-}" ]] && name=$(basename "$REPORTDB_BENCH_BIN")
name=$name${REPORTDB_ACKNOWLEDGE:+-ack-$REPORTDB_ACKNOWLEDGE}
result=$RESULTS/compare-medium${REPORTDB_ACKNOWLEDGE:+-ack-$REPORTDB_ACKNOWLEDGE}.txt
rc=0
"$BENCH/compare.sh" --fleet "$fleet" --out "$out" --markdown ${K:+-k "$K"} \
  --a http://127.0.0.1:8091 --a-name "$name" --a-db reportdb_bench \
  --a-reset "$ROOT/bench/instance.sh restart 8091 --database $PG/reportdb_bench --fresh" \
  --a-pid "$ROOT/bench/instance.sh pid 8091" \
  --b http://127.0.0.1:8092 --b-name puppetdb-7.12.1 --b-db puppetdb_bench \
  --b-reset "$BENCH/puppetdb-instance.sh restart 8092 puppetdb_bench --fresh" \
  --b-pid "$BENCH/puppetdb-instance.sh pid 8092 puppetdb_bench" || rc=$?
"$BENCH/puppetdb-instance.sh" stop 8092 puppetdb_bench || true
"$ROOT/bench/instance.sh" stop 8091 || true
{ header "The medium fleet against PuppetDB 7.12.1 (compare-medium.sh${REPORTDB_ACKNOWLEDGE:+, --acknowledge $REPORTDB_ACKNOWLEDGE})"; cat "$out/report.txt"; } > "$result"
echo "wrote $result" >&2
exit "$rc"
