#!/usr/bin/env bash
# node-lifecycle-check.sh
#
# A node's life cycle with the REAL client, without an upstream PuppetDB:
# Puppet 7.23 (`puppet apply`, reports = puppetdb) sends a report to reportdb
# over HTTPS (the test PKI of ../shared/clients), then
#   `puppet node deactivate` -> the node leaves /nodes, the root endpoint,
#                               the dashboard and the fleet metrics;
#                               `puppet node status` says "Deactivated at";
#   a newer run              -> the node is back everywhere;
#   deactivate again         -> node-purge-ttl (a few seconds here) later the
#                               node and its reports are gone.
# The same with --upstream (a real PuppetDB beside reportdb) is part of
# scripts/upstream-e2e.sh. Builds reportdb from this checkout; everything it
# starts is stopped at the end. Prints PASS:/FAIL: lines and "N passed, N
# failed"; exit 0 only if nothing failed. Environment: REPORTDB_SHARED (the
# reference kit, for its PKI), OUT_DIR, KEEP_WORK=1.
set -u
set -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SHARED=${REPORTDB_SHARED:-$(cd "$ROOT/.." && pwd)/shared}
PKI=$SHARED/clients/pki
[ -f "$PKI/ca.pem" ] || { echo "node-lifecycle-check: no test PKI at $PKI; NOT run"; exit 0; }
for tool in puppet jq curl go; do
  command -v "$tool" >/dev/null || { echo "missing dependency: $tool" >&2; exit 2; }
done
[ -f /usr/lib/ruby/vendor_ruby/puppet/face/node/deactivate.rb ] || { echo "missing dependency: puppet-terminus-puppetdb" >&2; exit 2; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
WORK=$(mktemp -d -t reportdb-nodes.XXXXXX)
OUT_DIR=${OUT_DIR:-$WORK/out}
mkdir -p "$OUT_DIR"
RDB_PID=
cleanup() {
  [ -n "$RDB_PID" ] && { kill "$RDB_PID" 2>/dev/null; wait "$RDB_PID" 2>/dev/null; }
  if [ "${KEEP_WORK:-0}" = 1 ]; then echo "work dir kept: $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
PASSED=0; FAILED=0
pass() { PASSED=$((PASSED + 1)); echo "PASS: $*"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL: $*"; }
check() { if [ "$2" = "$3" ]; then pass "$1 ($2)"; else fail "$1: got '$2', want '$3'"; fi; }

# A purge TTL of seconds and a GC every second, so that the purge is seen
# within the run; node-ttl stays at its default (7d).
(cd "$ROOT" && go build -o "$WORK/reportdb" ./cmd/reportdb) || exit 2
HTTPS_PORT=$(free_port); HTTP_PORT=$(free_port)
"$WORK/reportdb" serve --listen "127.0.0.1:$HTTP_PORT" --tls-listen "127.0.0.1:$HTTPS_PORT" \
  --tls-cert "$PKI/server.pem" --tls-key "$PKI/server_key.pem" --tls-ca "$PKI/ca.pem" \
  --data-dir "$WORK/data" --node-purge-ttl 8s --gc-interval 1s > "$OUT_DIR/reportdb.log" 2>&1 &
RDB_PID=$!
RDB=http://127.0.0.1:$HTTP_PORT
for _ in $(seq 100); do curl -fsS "$RDB/pdb/meta/v1/version" >/dev/null 2>&1 && break; sleep 0.1; done
echo "== reportdb on $RDB and https://127.0.0.1:$HTTPS_PORT, log $OUT_DIR/reportdb.log"

CN=lifecycle-$(date -u +%H%M%S).example.test
SSL=$WORK/conf/ssl
mkdir -p "$SSL/certs" "$SSL/private_keys" "$WORK/code/environments/production/manifests" "$WORK/var"
cp "$PKI/ca.pem" "$SSL/certs/ca.pem"; cp "$PKI/client.pem" "$SSL/certs/$CN.pem"; cp "$PKI/client_key.pem" "$SSL/private_keys/$CN.pem"
chmod 600 "$SSL/private_keys/$CN.pem"
printf '[main]\nssldir = %s\nenvironmentpath = %s\ncertificate_revocation = false\nreport = true\nreports = puppetdb\n' \
  "$SSL" "$WORK/code/environments" > "$WORK/conf/puppet.conf"
printf '[main]\nserver_urls = https://127.0.0.1:%s\nsoft_write_failure = false\n' "$HTTPS_PORT" > "$WORK/conf/puppetdb.conf"
printf "node default {\n  notify { 'node-lifecycle': message => 'a run' }\n}\n" > "$WORK/code/environments/production/manifests/site.pp"
P=(--confdir "$WORK/conf" --vardir "$WORK/var" --codedir "$WORK/code" --logdir "$WORK/var/log"
   --rundir "$WORK/var/run" --certname "$CN" --color=false)
run() { # run LABEL: one puppet apply, its report sent to reportdb
  puppet apply "${P[@]}" --environment production --detailed-exitcodes \
    "$WORK/code/environments/production/manifests/site.pp" > "$OUT_DIR/apply-$1.log" 2>&1
  local rc=$?
  if [ "$rc" = 0 ] || [ "$rc" = 2 ]; then pass "puppet apply ($1) exit code $rc"; else fail "puppet apply ($1) exit code $rc (see $OUT_DIR/apply-$1.log)"; fi
}
q() { curl -sS -G "$RDB$1" --data-urlencode "query=$2"; }
listed() { # listed WHEN N REPORTS: whether the node is in /nodes, the root endpoint, the dashboard, the fleet metrics (N 1 or 0)
  check "$1: in /nodes" "$(q /pdb/query/v4/nodes "[\"=\",\"certname\",\"$CN\"]" | jq length)" "$2"
  check "$1: root from reports" "$(q /pdb/query/v4 "reports[certname]{certname = \"$CN\"}" | jq length)" "$3"
  check "$1: dashboard nodes page" "$(curl -sS "$RDB/ui/nodes?q=$CN" | grep -c "href=\"/ui/node/$CN\"")" "$2"
  check "$1: fleet metrics" "$(curl -sS "$RDB/metrics" | grep '^reportdb_fleet_nodes{' | awk '{s += $2} END {print s + 0}')" "$2"
}

run first
for _ in $(seq 50); do [ "$(q /pdb/query/v4/reports "[\"=\",\"certname\",\"$CN\"]" | jq length)" = 1 ] && break; sleep 0.1; done
listed "after the first run" 1 1
puppet node status "${P[@]}" "$CN" > "$OUT_DIR/status-1.log" 2>&1
check "puppet node status" "$(sed -n 2p "$OUT_DIR/status-1.log")" "Currently active"

puppet node deactivate "${P[@]}" "$CN" > "$OUT_DIR/deactivate-1.log" 2>&1
check "puppet node deactivate exit code" "$?" 0
grep -q "Submitted 'deactivate node' for $CN with UUID" "$OUT_DIR/deactivate-1.log" && pass "deactivate node submitted" || fail "deactivate: $(cat "$OUT_DIR/deactivate-1.log")"
listed "after puppet node deactivate" 0 0
check "/reports still has its report" "$(q /pdb/query/v4/reports "[\"=\",\"certname\",\"$CN\"]" | jq length)" 1
check "node_state inactive lists it" "$(q /pdb/query/v4/nodes '["=","node_state","inactive"]' | jq -r '.[].certname')" "$CN"
puppet node status "${P[@]}" "$CN" > "$OUT_DIR/status-2.log" 2>&1
case "$(sed -n 2p "$OUT_DIR/status-2.log")" in
  "Deactivated at "*) pass "puppet node status: $(sed -n 2p "$OUT_DIR/status-2.log")" ;;
  *) fail "puppet node status after deactivate: $(cat "$OUT_DIR/status-2.log")" ;;
esac

run second
for _ in $(seq 50); do [ "$(q /pdb/query/v4/reports "[\"=\",\"certname\",\"$CN\"]" | jq length)" = 2 ] && break; sleep 0.1; done
listed "after a newer run" 1 2

puppet node deactivate "${P[@]}" "$CN" > "$OUT_DIR/deactivate-2.log" 2>&1
check "second deactivate exit code" "$?" 0
for _ in $(seq 30); do
  [ "$(q /pdb/query/v4/nodes '["=","node_state","any"]' | jq length)" = 0 ] && break
  sleep 1
done
check "purged after node-purge-ttl: nodes (any state)" "$(q /pdb/query/v4/nodes '["=","node_state","any"]' | jq length)" 0
check "purged: its reports" "$(q /pdb/query/v4/reports "[\"=\",\"certname\",\"$CN\"]" | jq length)" 0
check "purged: its events" "$(q /pdb/query/v4/events "[\"=\",\"certname\",\"$CN\"]" | jq length)" 0
grep -q 'msg="purged inactive nodes"' "$OUT_DIR/reportdb.log" && pass "the purge is logged" || fail "no purge log line"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
