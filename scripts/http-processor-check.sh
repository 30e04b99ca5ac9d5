#!/usr/bin/env bash
# http-processor-check.sh [BASE_URL]
#
# Runs the REAL Puppet (7.x, `puppet apply`) with its `http` report processor
# (reports = store,http; reporturl = BASE_URL/reports/upload, then /upload)
# and checks through the query API that the reports arrived in reportdb.
# The `store` processor runs beside it, so the YAML Puppet POSTed is kept
# ($OUT_DIR/reports/<run>/<certname>/*.yaml) and compared with what was stored.
#
# Without BASE_URL the script builds reportdb from this checkout and starts
# it on a free loopback port with an empty data directory (stopped at the
# end). Nothing under the system's /etc/puppet is read or written: confdir,
# vardir, codedir, logdir and rundir live in a temporary work directory.
#
# Environment: OUT_DIR (default: a temporary directory, printed), KEEP_WORK=1.
# Prints PASS:/FAIL: lines and "N passed, N failed"; exit status 0 only if
# nothing failed.
set -u
set -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
for tool in puppet jq curl go; do
  command -v "$tool" >/dev/null || { echo "missing dependency: $tool" >&2; exit 2; }
done

WORK=$(mktemp -d -t reportdb-httpcheck.XXXXXX)
OUT_DIR=${OUT_DIR:-$WORK/out}
mkdir -p "$OUT_DIR/logs" "$OUT_DIR/reports"
SERVER_PID=
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null; fi
  if [ "${KEEP_WORK:-0}" = 1 ]; then echo "work dir kept: $WORK"; else rm -rf "$WORK/conf" "$WORK/var" "$WORK/code" "$WORK/root" "$WORK/data" "$WORK/reportdb"; fi
}
trap cleanup EXIT

PASSED=0; FAILED=0
pass() { PASSED=$((PASSED + 1)); echo "PASS: $*"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL: $*"; }
check() { # check DESCRIPTION ACTUAL EXPECTED
  if [ "$2" = "$3" ]; then pass "$1 ($2)"; else fail "$1: got '$2', want '$3'"; fi
}

BASE_URL=${1:-}
if [ -z "$BASE_URL" ]; then
  (cd "$ROOT" && go build -o "$WORK/reportdb" ./cmd/reportdb) || { echo "building reportdb failed" >&2; exit 2; }
  PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "$WORK/reportdb" serve --listen "127.0.0.1:$PORT" --data-dir "$WORK/data" --report-ttl 0 --node-ttl 0 \
    > "$OUT_DIR/logs/reportdb.log" 2>&1 &
  SERVER_PID=$!
  BASE_URL=http://127.0.0.1:$PORT
  for _ in $(seq 100); do curl -fsS "$BASE_URL/pdb/meta/v1/version" >/dev/null 2>&1 && break; sleep 0.1; done
  curl -fsS "$BASE_URL/pdb/meta/v1/version" >/dev/null || { echo "reportdb did not start:"; cat "$OUT_DIR/logs/reportdb.log"; exit 2; }
  echo "== reportdb (pid $SERVER_PID) on $BASE_URL, data in $WORK/data, log $OUT_DIR/logs/reportdb.log"
fi
BASE_URL=${BASE_URL%/}
RUN_ID=$(date -u +%m%d%H%M%S)$((RANDOM % 1000))
CN=httpcheck-$RUN_ID.example.test
echo "== $(puppet --version | sed 's/^/puppet /') -> $BASE_URL, certname $CN, output $OUT_DIR"

# ------------------------------------------------------- private puppet setup
mkdir -p "$WORK/conf" "$WORK/code/environments/production/manifests" "$WORK/root"
cat > "$WORK/code/environments/production/manifests/site.pp" <<EOF
node default {
  notify { "hello from the http report processor": }
  file { "$WORK/root/managed.conf": ensure => file, content => "run \${facts['httpcheck_run']}\n" }
  exec { 'failing-step': command => '/bin/false' }
  file { "$WORK/root/after-fail": ensure => file, require => Exec['failing-step'] }
  file { "$WORK/root/noop-me": ensure => file, noop => true }
}
EOF

# puppet_run LABEL REPORTURL_PATH RUN [extra puppet args]
puppet_run() {
  local label=$1 path=$2 run=$3; shift 3
  cat > "$WORK/conf/puppet.conf" <<EOF
[main]
environmentpath = $WORK/code/environments
report = true
reports = store,http
reporturl = $BASE_URL$path
reportdir = $OUT_DIR/reports/$label
storeconfigs = false
certificate_revocation = false
EOF
  echo "-- puppet apply: $label (reporturl $BASE_URL$path${*:+, $*})"
  FACTER_httpcheck_run=$run puppet apply --confdir "$WORK/conf" --vardir "$WORK/var" --codedir "$WORK/code" \
    --logdir "$WORK/var/log" --rundir "$WORK/var/run" --certname "$CN" --color=false \
    --detailed-exitcodes --verbose "$@" "$WORK/code/environments/production/manifests/site.pp" \
    > "$OUT_DIR/logs/$label.log" 2>&1
  echo "   exit code $? (--detailed-exitcodes)"
  if grep -qE 'Unable to submit report|Report processor failed|Could not send report' "$OUT_DIR/logs/$label.log"; then
    fail "$label: Puppet could not submit the report: $(grep -E 'Unable to submit report|Report processor failed|Could not send report' "$OUT_DIR/logs/$label.log" | head -2)"
  else
    pass "$label: Puppet's http processor reported no error"
  fi
}

q() { if [ $# -gt 1 ]; then curl -fsS -G "$BASE_URL$1" --data-urlencode "$2"; else curl -fsS "$BASE_URL$1"; fi; }

# utc_ms TIME: Puppet's report time (ISO 8601, 9 digits, offset) as reportdb
# stores it (UTC, milliseconds truncated)
utc_ms() {
  local t=$1 frac
  frac=$(sed -E 's/^[^.]*\.([0-9]{3}).*/\1/' <<<"$t")
  echo "$(date -u -d "$(sed -E 's/\.[0-9]+//' <<<"$t")" +%Y-%m-%dT%H:%M:%S).${frac}Z"
}

puppet_run run1 /reports/upload 1
puppet_run run2 /upload 2
puppet_run run3-noop /reports/upload 3 --noop

# ------------------------------------------------------------------ checks
REPORTS=$(q /pdb/query/v4/reports "query=[\"=\",\"certname\",\"$CN\"]" | jq -c 'sort_by(.start_time)')
check "reports stored for $CN" "$(jq length <<<"$REPORTS")" 3

mapfile -t YAMLS < <(ls "$OUT_DIR"/reports/{run1,run2,run3-noop}/"$CN"/*.yaml 2>/dev/null)
check "YAML reports kept by the store processor" "${#YAMLS[@]}" 3
for i in 0 1 2; do
  y=${YAMLS[$i]:-/dev/null}
  # plain or quoted YAML scalars (Psych quotes a uuid such as '08f6f125-...')
  uuid=$(sed -n "s/^transaction_uuid: //p" "$y" | head -1 | sed "s/^'\(.*\)'\$/\1/; s/^\"\(.*\)\"\$/\1/")
  status=$(sed -n "s/^status: //p" "$y" | head -1 | sed "s/^'\(.*\)'\$/\1/; s/^\"\(.*\)\"\$/\1/")
  r=$(jq -c --arg u "$uuid" '.[] | select(.transaction_uuid == $u)' <<<"$REPORTS")
  check "run $((i + 1)): report with the YAML's transaction_uuid stored" "$(jq -r '.transaction_uuid // "none"' <<<"${r:-{\}}")" "$uuid"
  check "run $((i + 1)): status as in the YAML" "$(jq -r '.status // "none"' <<<"${r:-{\}}")" "$status"
  check "run $((i + 1)): start_time = the YAML's time (ms)" "$(jq -r '.start_time // "none"' <<<"${r:-{\}}")" \
    "$(utc_ms "$(sed -n "s/^time: '\(.*\)'$/\1/p" "$y" | head -1)")"
  check "run $((i + 1)): producer_timestamp present" "$(jq -r '.producer_timestamp | type' <<<"${r:-{\}}")" string
done
check "statuses (runs 1-3)" "$(jq -r '[.[].status] | join(",")' <<<"$REPORTS")" "failed,failed,unchanged"
check "noop flags (runs 1-3)" "$(jq -r '[.[].noop] | map(tostring) | join(",")' <<<"$REPORTS")" "false,false,true"

HASH1=$(jq -r '.[0].hash' <<<"$REPORTS")
EV1=$(q /pdb/query/v4/events "query=[\"=\",\"report\",\"$HASH1\"]")
echo "-- run 1 events: $(jq -c 'sort_by(.resource_title) | map({status, resource_type, resource_title, property, old_value, new_value})' <<<"$EV1")"
check "run 1: failure event (Exec[failing-step] returns)" \
  "$(jq -r '.[] | select(.status == "failure") | "\(.resource_type)[\(.resource_title)] \(.property) \(.old_value) -> \(.new_value)"' <<<"$EV1")" \
  'Exec[failing-step] returns notrun -> ["0"]'
check "run 1: skipped event (file requiring the failed exec)" \
  "$(jq -r '.[] | select(.status == "skipped") | .resource_title' <<<"$EV1")" "$WORK/root/after-fail"
check "run 1: noop event (file with noop => true)" \
  "$(jq -r '.[] | select(.status == "noop") | "\(.resource_title) \(.property) \(.old_value) -> \(.new_value)"' <<<"$EV1")" \
  "$WORK/root/noop-me ensure absent -> file"
check "run 1: success events (notify, managed.conf created)" \
  "$(jq -r '[.[] | select(.status == "success") | .resource_type] | sort | join(",")' <<<"$EV1")" "File,Notify"
check "run 1: logs stored" "$(q "/pdb/query/v4/reports/$HASH1/logs" | jq 'length > 0')" true
check "run 1: metrics stored" "$(q "/pdb/query/v4/reports/$HASH1/metrics" | jq '[.[] | select(.category == "resources" and .name == "total")] | length')" 1

HASH2=$(jq -r '.[1].hash' <<<"$REPORTS")
EV2=$(q /pdb/query/v4/events "query=[\"=\",\"report\",\"$HASH2\"]")
check "run 2 (/upload): managed.conf content changed" \
  "$(jq -r '.[] | select(.property == "content") | .status' <<<"$EV2")" success

HASH3=$(jq -r '.[2].hash' <<<"$REPORTS")
EV3=$(q /pdb/query/v4/events "query=[\"=\",\"report\",\"$HASH3\"]")
check "run 3 (--noop): no success events" "$(jq '[.[] | select(.status == "success")] | length' <<<"$EV3")" 0
check "run 3 (--noop): noop_pending" "$(jq -r '.[2].noop_pending' <<<"$REPORTS")" true

if [ -n "$SERVER_PID" ]; then
  echo "-- what reportdb logged for the submissions:"
  grep -E 'path=/(reports/)?upload' "$OUT_DIR/logs/reportdb.log" | sed 's/^/   /' | head -5
fi
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
