#!/usr/bin/env bash
# Runs the real PuppetDB clients (Puppet 7.23 + the puppetdb terminus,
# pypuppetdb, node-puppetdbquery) from ../shared/clients against a fresh
# reportdb. Their dependencies come from Debian's archive and npm.
set -euo pipefail
cd "$(dirname "$0")/.."
shared=${REPORTDB_SHARED:-$(cd .. && pwd)/shared}
if [ ! -x "$shared/clients/run-all.sh" ]; then
  echo "real clients: $shared/clients is not on this machine; they were NOT run"
  exit 0
fi
for i in 1 2 3; do "$shared/clients/install-deps.sh" && break; sleep 10; done
tmp=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; rm -rf "$tmp"' EXIT
go build -o "$tmp/reportdb" ./cmd/reportdb
"$tmp/reportdb" serve --listen 127.0.0.1:0 --data-dir "$tmp/data" 2> "$tmp/server.log" &
pid=$!
for _ in $(seq 100); do
  addr=$(sed -n 's/.*addr=\(http:[^ ]*\).*/\1/p' "$tmp/server.log" | head -1)
  [ -n "$addr" ] && break
  sleep 0.2
done
[ -n "${addr:-}" ] || { cat "$tmp/server.log"; exit 1; }
PDB_CHECK_NODES=1 OUT_DIR="$tmp/out" "$shared/clients/run-all.sh" "$addr"
# Puppet's own http report processor (reports = store,http) against a fresh
# reportdb: the YAML Puppet 7.23 POSTs must be stored as the terminus stores it.
scripts/http-processor-check.sh
# A node's life cycle with Puppet 7.23's `puppet node deactivate` and
# `puppet node status`, without an upstream PuppetDB.
scripts/node-lifecycle-check.sh
# The real Puppetboard (headless Chromium) against a fresh reportdb loaded with
# the conformance corpus, environments production and '*'.
scripts/puppetboard-check.sh "$shared"
# reportdb in front of a real PuppetDB 7.12.1 (--upstream): Puppet 7.23 with the
# puppetdb terminus for facts, catalogs and reports pointed at reportdb, Puppetboard,
# and `puppet node deactivate` recorded in both.
scripts/upstream-e2e.sh "$shared"
