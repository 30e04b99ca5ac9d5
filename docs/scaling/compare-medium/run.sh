#!/usr/bin/env bash
# The medium fleet against PuppetDB 7.12.1 (apt-get install puppetdb), one
# run of ../shared/bench/compare.sh: reportdb from this checkout on
# PostgreSQL (scripts/bench-instance.sh, database reportdb_bench), PuppetDB
# with ../shared/bench/puppetdb-instance.sh (database puppetdb_bench), each
# reset to an empty database before it ingests. Both are stopped afterwards:
# a PuppetDB left running keeps using about half a core (stop 39), which
# spoiled the measurements that followed it.
#   run.sh FLEET OUT_DIR     (FLEET: ../shared/bench/fleet.py --scale medium --out FLEET)
#   REPORTDB_ACKNOWLEDGE=spool: reportdb answers submissions from its spool (README)
#   K=N: measured runs per query (compare.sh's -k, 20 by default): PuppetDB's
#   p50 of failures_last_hour ranged 7.4-50 ms over the committed compare reports.
set -euo pipefail
cd "$(dirname "$0")/../../.."
fleet=$1; out=$2
S=${REPORTDB_SHARED:-../shared}
PG=postgres://postgres@127.0.0.1:5432
name=reportdb-$(git rev-parse --short HEAD)${REPORTDB_ACKNOWLEDGE:+-ack-$REPORTDB_ACKNOWLEDGE}
"$S/bench/compare.sh" --fleet "$fleet" --out "$out" --markdown ${K:+-k "$K"} \
  --a http://127.0.0.1:8091 --a-name "$name" --a-db reportdb_bench \
  --a-reset "scripts/bench-instance.sh restart 8091 --database $PG/reportdb_bench --fresh" \
  --a-pid "scripts/bench-instance.sh pid 8091" \
  --b http://127.0.0.1:8092 --b-name puppetdb-7.12.1 --b-db puppetdb_bench \
  --b-reset "$S/bench/puppetdb-instance.sh restart 8092 puppetdb_bench --fresh" \
  --b-pid "$S/bench/puppetdb-instance.sh pid 8092 puppetdb_bench" || rc=$?
"$S/bench/puppetdb-instance.sh" stop 8092 puppetdb_bench || true
scripts/bench-instance.sh stop 8091 || true
exit "${rc:-0}"
