#!/usr/bin/env bash
# upstream-e2e.sh [SHARED_DIR]
#
# End to end: reportdb in front of a REAL PuppetDB 7.12.1 (--upstream).
#   1. a throwaway PostgreSQL cluster (../shared/bench/pg-scratch.sh) and a
#      private PuppetDB on it (../shared/bench/puppetdb-instance.sh, HTTP);
#   2. reportdb built from this checkout, HTTPS (pki of ../shared/clients) and
#      HTTP, --upstream http://<that PuppetDB>;
#   3. the REAL Puppet 7.23 (`puppet apply`) with the puppetdb terminus for
#      facts (puppetdb_apply), catalogs (storeconfigs) and reports, pointed at
#      reportdb only;
#   4. checks: Puppet runs without errors; facts and catalog are in PuppetDB,
#      the report only in reportdb; through reportdb, facts, the merged node
#      and Puppetboard (../shared/clients/puppetboard/run.sh) show the facts:
#      its facts page, inventory and the node page's facts panel.
# Everything it starts is stopped at the end. Installs what it needs with apt
# (root). Prints PASS:/FAIL: lines and "N passed, N failed"; exit 0 only if
# nothing failed. Environment: OUT_DIR (default: inside the work directory,
# removed at the end unless KEEP_WORK=1), PG_PORT (default 5521), PDB_PORT
# (default: a free port).
set -u
set -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SHARED=${1:-${REPORTDB_SHARED:-$(cd "$ROOT/.." && pwd)/shared}}
[ -d "$SHARED/bench" ] && [ -d "$SHARED/clients" ] || { echo "upstream-e2e: $SHARED (bench, clients) is not on this machine; NOT run"; exit 0; }

need=()
command -v puppet >/dev/null || need+=(puppet)
[ -f /usr/lib/ruby/vendor_ruby/puppet/indirector/facts/puppetdb_apply.rb ] || need+=(puppet-terminus-puppetdb)
[ -f /usr/share/puppetdb/puppetdb.jar ] || need+=(puppetdb)
command -v jq >/dev/null || need+=(jq)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
if [ ${#need[@]} -gt 0 ]; then
  echo "== apt-get install ${need[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y "${need[@]}" >/dev/null || { echo "installing ${need[*]} failed"; exit 2; }
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
WORK=$(mktemp -d -t reportdb-upstream.XXXXXX)
chmod 755 "$WORK" # the scratch cluster runs as user postgres
OUT_DIR=${OUT_DIR:-$WORK/out}
mkdir -p "$OUT_DIR"
PG_PORT=${PG_PORT:-5521}
PDB_PORT=${PDB_PORT:-$(free_port)}
PDB_DB=reportdb_upstream_e2e
export PDB_BENCH_STATE=$WORK/puppetdb PDB_PGPORT=$PG_PORT PDB_HEAP=${PDB_HEAP:-768m} PDB_POOL_SIZE=4
export PGSCRATCH_DIR=$WORK/pg
RDB_PID=
cleanup() {
  [ -n "$RDB_PID" ] && { kill "$RDB_PID" 2>/dev/null; wait "$RDB_PID" 2>/dev/null; }
  "$SHARED/bench/puppetdb-instance.sh" stop "$PDB_PORT" "$PDB_DB" >/dev/null 2>&1
  "$SHARED/bench/pg-scratch.sh" stop "$PG_PORT" >/dev/null 2>&1
  if [ "${KEEP_WORK:-0}" = 1 ]; then echo "work dir kept: $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

PASSED=0; FAILED=0
pass() { PASSED=$((PASSED + 1)); echo "PASS: $*"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL: $*"; }
check() { if [ "$2" = "$3" ]; then pass "$1 ($2)"; else fail "$1: got '$2', want '$3'"; fi; }

echo "== PostgreSQL (scratch, port $PG_PORT) and PuppetDB 7.12.1 (http://127.0.0.1:$PDB_PORT)"
"$SHARED/bench/pg-scratch.sh" start "$PG_PORT" || exit 2
"$SHARED/bench/puppetdb-instance.sh" start "$PDB_PORT" "$PDB_DB" --fresh > "$OUT_DIR/puppetdb-start.log" 2>&1 \
  || { tail -20 "$OUT_DIR/puppetdb-start.log"; exit 2; }
PDB=http://127.0.0.1:$PDB_PORT

echo "== reportdb --upstream $PDB"
(cd "$ROOT" && go build -o "$WORK/reportdb" ./cmd/reportdb) || exit 2
PKI=$SHARED/clients/pki
HTTPS_PORT=$(free_port); HTTP_PORT=$(free_port)
"$WORK/reportdb" serve --listen "127.0.0.1:$HTTP_PORT" --tls-listen "127.0.0.1:$HTTPS_PORT" \
  --tls-cert "$PKI/server.pem" --tls-key "$PKI/server_key.pem" --tls-ca "$PKI/ca.pem" \
  --data-dir "$WORK/data" --report-ttl 0 --node-ttl 0 --upstream "$PDB" > "$OUT_DIR/reportdb.log" 2>&1 &
RDB_PID=$!
RDB=http://127.0.0.1:$HTTP_PORT
for _ in $(seq 100); do curl -fsS "$RDB/pdb/meta/v1/version" >/dev/null 2>&1 && break; sleep 0.1; done

echo "== puppet apply with the puppetdb terminus (facts, catalog, report) -> https://127.0.0.1:$HTTPS_PORT"
CN=upstream-e2e-$(date -u +%H%M%S).example.test
SSL=$WORK/conf/ssl
mkdir -p "$SSL/certs" "$SSL/private_keys" "$WORK/code/environments/production/manifests" "$WORK/var"
cp "$PKI/ca.pem" "$SSL/certs/ca.pem"; cp "$PKI/client.pem" "$SSL/certs/$CN.pem"; cp "$PKI/client_key.pem" "$SSL/private_keys/$CN.pem"
chmod 600 "$SSL/private_keys/$CN.pem"
cat > "$WORK/conf/puppet.conf" <<EOF
[main]
ssldir = $SSL
environmentpath = $WORK/code/environments
certificate_revocation = false
storeconfigs = true
storeconfigs_backend = puppetdb
report = true
reports = puppetdb
EOF
cat > "$WORK/conf/routes.yaml" <<EOF
apply:
  facts:
    terminus: facter
    cache: puppetdb_apply
EOF
cat > "$WORK/conf/puppetdb.conf" <<EOF
[main]
server_urls = https://127.0.0.1:$HTTPS_PORT
soft_write_failure = false
EOF
cat > "$WORK/code/environments/production/manifests/site.pp" <<EOF
node default {
  file { '$WORK/var/managed.txt': ensure => file, content => "managed by puppet\n" }
  notify { 'upstream-e2e': message => 'reportdb in front of PuppetDB' }
}
EOF
puppet apply --confdir "$WORK/conf" --vardir "$WORK/var" --codedir "$WORK/code" --logdir "$WORK/var/log" \
  --rundir "$WORK/var/run" --certname "$CN" --environment production --color=false --detailed-exitcodes --verbose \
  "$WORK/code/environments/production/manifests/site.pp" > "$OUT_DIR/puppet.log" 2>&1
rc=$?
if [ "$rc" = 0 ] || [ "$rc" = 2 ]; then pass "puppet apply exit code $rc"; else fail "puppet apply exit code $rc (see $OUT_DIR/puppet.log)"; fi
# (Facter cannot read /proc/1/environ in an unprivileged container: not a run error)
errors=$(grep '^Error' "$OUT_DIR/puppet.log" | grep -vc '/proc/1/environ')
check "puppet apply: no Error lines" "$errors" 0
for c in 'replace[ _]facts' 'replace[ _]catalog' 'store[ _]report'; do
  if grep -Eq "'$c' command for $CN submitted" "$OUT_DIR/puppet.log"; then pass "terminus submitted $c"; else fail "terminus did not submit $c"; fi
done
grep -E '^(Error|Warning)' "$OUT_DIR/puppet.log" | grep -v /proc/1/environ | head -5 | sed 's/^/     /'

q() { curl -sS -G "$1" --data-urlencode "query=$2"; }
# PuppetDB processes commands asynchronously
for _ in $(seq 120); do
  [ "$(q "$PDB/pdb/query/v4/catalogs" "[\"=\",\"certname\",\"$CN\"]" | jq length)" = 1 ] && \
  [ "$(q "$PDB/pdb/query/v4/factsets" "[\"=\",\"certname\",\"$CN\"]" | jq length)" = 1 ] && break
  sleep 1
done
check "PuppetDB holds the catalog" "$(q "$PDB/pdb/query/v4/catalogs" "[\"=\",\"certname\",\"$CN\"]" | jq length)" 1
nfacts=$(q "$PDB/pdb/query/v4/facts" "[\"=\",\"certname\",\"$CN\"]" | jq length)
[ "${nfacts:-0}" -gt 10 ] && pass "PuppetDB holds the facts ($nfacts)" || fail "PuppetDB facts: $nfacts"
check "PuppetDB holds no report" "$(q "$PDB/pdb/query/v4/reports" "[\"=\",\"certname\",\"$CN\"]" | jq length)" 0
check "reportdb holds the report" "$(q "$RDB/pdb/query/v4/reports" "[\"=\",\"certname\",\"$CN\"]" | jq length)" 1
check "facts through reportdb = PuppetDB's" "$(q "$RDB/pdb/query/v4/facts" "[\"=\",\"certname\",\"$CN\"]" | jq length)" "$nfacts"
check "inventory through reportdb" "$(q "$RDB/pdb/query/v4" "inventory[certname]{certname = \"$CN\"}" | jq -r '.[0].certname')" "$CN"
# `puppet apply` submits its facts with trusted.certname = null (no Puppet server
# vouches for the node), and Puppetboard's inventory builds a node link from it
# (it fails the same way on PuppetDB itself). Send the same facts again as a
# Puppet server does, trusted.certname set, through reportdb to the upstream.
# milliseconds: PuppetDB keeps the newer of two factsets, and puppet apply's
# (seconds before) carries milliseconds; truncated to the second, this one
# was older whenever both fell in the same second (CI at 6cab9de: sent
# 08:47:32.000Z, PuppetDB held 08:47:32.256Z)
now=$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)
curl -sS "$PDB/pdb/query/v4/factsets/$CN" | jq -c --arg cn "$CN" --arg now "$now" \
  '{certname: $cn, environment: .environment, producer_timestamp: $now, producer: "puppet.example.test",
    values: ((.facts.data | map({key: .name, value: .value}) | from_entries) + {trusted: {authenticated: "remote", certname: $cn, extensions: {}, hostname: ($cn | split(".")[0]), domain: ($cn | split(".")[1:] | join("."))}})}' \
  > "$WORK/facts.json"
code=$(curl -sS -o "$OUT_DIR/replace-facts.out" -w '%{http_code}' -X POST -H 'Content-Type: application/json' --data-binary @"$WORK/facts.json" \
  "$RDB/pdb/cmd/v1?command=replace_facts&version=5&certname=$CN&producer-timestamp=$now")
check "replace facts (Puppet server shape) through reportdb" "$code" 200
# PuppetDB applies commands from its queue, asynchronously
for _ in $(seq 60); do
  [ "$(q "$PDB/pdb/query/v4/facts" "[\"and\",[\"=\",\"certname\",\"$CN\"],[\"=\",\"name\",\"trusted\"]]" | jq -r '.[0].value.certname')" = "$CN" ] && break
  sleep 1
done
got=$(q "$PDB/pdb/query/v4/facts" "[\"and\",[\"=\",\"certname\",\"$CN\"],[\"=\",\"name\",\"trusted\"]]" | jq -r '.[0].value.certname')
check "PuppetDB got them" "$got" "$CN"
if [ "$got" != "$CN" ]; then
  # what PuppetDB holds and whether it is still working through its queue
  echo "     sent producer_timestamp $now; PuppetDB's factset: $(curl -sS "$PDB/pdb/query/v4/factsets/$CN" | jq -c '{producer_timestamp, timestamp}')"
  echo "     PuppetDB status: $(curl -sS "$PDB/status/v1/services/puppetdb-status" | jq -c '.status | {queue_depth, maintenance_mode}')"
  echo "     reportdb's answer to the command: $(cat "$OUT_DIR/replace-facts.out")"
fi
node=$(curl -sS "$RDB/pdb/query/v4/nodes/$CN")
check "merged node: facts_timestamp set" "$(jq -r '.facts_timestamp != null' <<<"$node")" true
check "merged node: catalog_environment" "$(jq -r .catalog_environment <<<"$node")" production
check "merged node: latest report" "$(jq -r .latest_report_status <<<"$node")" changed
check "nodes filter on a fact field and a report field" \
  "$(q "$RDB/pdb/query/v4/nodes" "[\"and\",[\"=\",\"catalog_environment\",\"production\"],[\"=\",\"latest_report_status\",\"changed\"]]" | jq -r '.[].certname')" "$CN"

if [ -x "$SHARED/clients/puppetboard/run.sh" ]; then
  echo "== Puppetboard against reportdb"
  "$SHARED/clients/puppetboard/run.sh" "$RDB" --now real --out "$OUT_DIR/puppetboard" > "$OUT_DIR/puppetboard.log" 2>&1
  pbrc=$?
  tail -1 "$OUT_DIR/puppetboard.log" | sed 's/^/     /'
  check "Puppetboard: counted pages (exit status)" "$pbrc" 0
  grep -q 'CRASHES' "$OUT_DIR/puppetboard.log" && fail "a Puppetboard page crashes" || pass "no Puppetboard page crashes"
  rows() { grep -E "^NONREPORT +$1" "$OUT_DIR/puppetboard.log" | grep -o "$2 [0-9]*" | grep -o '[0-9]*$'; }
  n=$(rows "node $CN facts panel" "facts table rows"); [ "${n:-0}" -gt 10 ] && pass "Puppetboard node page facts panel: $n facts" || fail "Puppetboard node facts panel: '${n:-}' rows"
  n=$(rows inventory rows); [ "${n:-0}" -ge 1 ] && pass "Puppetboard inventory: $n rows" || fail "Puppetboard inventory: '${n:-}' rows"
  grep -Eq '^NONREPORT +facts +HTTP 200 .*renders fine' "$OUT_DIR/puppetboard.log" && pass "Puppetboard facts page renders" || fail "Puppetboard facts page"
fi
echo "== puppet node deactivate through reportdb: recorded here, forwarded to PuppetDB"
P=(--confdir "$WORK/conf" --vardir "$WORK/var" --codedir "$WORK/code" --logdir "$WORK/var/log" --rundir "$WORK/var/run" --certname "$CN" --color=false)
puppet node deactivate "${P[@]}" "$CN" > "$OUT_DIR/deactivate.log" 2>&1
check "puppet node deactivate exit code" "$?" 0
# PuppetDB applies commands from its queue, asynchronously
for _ in $(seq 60); do
  [ "$(curl -sS "$PDB/pdb/query/v4/nodes/$CN" | jq -r '.deactivated != null')" = true ] && break
  sleep 1
done
pdb_deact=$(curl -sS "$PDB/pdb/query/v4/nodes/$CN" | jq -r .deactivated)
[ "$pdb_deact" != null ] && pass "PuppetDB: deactivated $pdb_deact" || fail "PuppetDB did not deactivate $CN"
check "reportdb's merged node: deactivated as PuppetDB's" "$(curl -sS "$RDB/pdb/query/v4/nodes/$CN" | jq -r .deactivated)" "$pdb_deact"
check "reportdb /nodes leaves it out" "$(q "$RDB/pdb/query/v4/nodes" "[\"=\",\"certname\",\"$CN\"]" | jq length)" 0
check "PuppetDB /nodes leaves it out" "$(q "$PDB/pdb/query/v4/nodes" "[\"=\",\"certname\",\"$CN\"]" | jq length)" 0
check "reportdb root from reports leaves it out (its own record)" "$(q "$RDB/pdb/query/v4" "reports[certname]{certname = \"$CN\"}" | jq length)" 0
check "reportdb /reports keeps its report" "$(q "$RDB/pdb/query/v4/reports" "[\"=\",\"certname\",\"$CN\"]" | jq length)" 1
puppet node status "${P[@]}" "$CN" > "$OUT_DIR/status.log" 2>&1
check "puppet node status through reportdb" "$(sed -n 2p "$OUT_DIR/status.log")" "Deactivated at $pdb_deact"

echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
