#!/usr/bin/env bash
# clients.sh [MODE] [BINARY]
#
# The real PuppetDB clients of the reference kit (clients/run-all.sh: Puppet
# 7.23 with the puppetdb terminus, pypuppetdb, node-puppetdbquery) against
# `reportdb serve --acknowledge MODE` (commit, the default, or spool) on a
# fresh PostgreSQL database (clients_bench). CI runs them on the embedded
# store (.ci/clients.sh); this is the check for PostgreSQL and either mode.
# Writes bench/results/clients-MODE.txt (the kit's summary).
#   PORT=18190
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[[ -x "$SHARED/clients/run-all.sh" ]] || { echo "clients.sh: no clients at $SHARED (set REPORTDB_SHARED)" >&2; exit 2; }
mode=${1:-commit}
bin=${2:-$(build)}
PORT=${PORT:-18190}
out=$WORK/clients-$mode; rm -rf "$out"; mkdir -p "$out"
result=$RESULTS/clients-$mode.txt
psql -qAt "$PG/postgres" -c "DROP DATABASE IF EXISTS clients_bench WITH (FORCE)" -c "CREATE DATABASE clients_bench" >/dev/null
"$bin" serve --listen 127.0.0.1:$PORT --data-dir "$out/data" --database "$PG/clients_bench" --acknowledge "$mode" > "$out/server.log" 2>&1 &
spid=$!
trap 'kill $spid 2>/dev/null || true' EXIT
for _ in $(seq 300); do curl -sf -o /dev/null "http://127.0.0.1:$PORT/pdb/meta/v1/version" && break; sleep 0.2; done
rc=0
PDB_CHECK_NODES=1 OUT_DIR="$out/clients" bash "$SHARED/clients/run-all.sh" "http://127.0.0.1:$PORT" > "$out/clients.txt" 2>&1 || rc=$?
{ header "The real clients on PostgreSQL, --acknowledge $mode" "$bin"; echo "exit status $rc"; tail -5 "$out/clients.txt"; } | tee "$result"
exit "$rc"
