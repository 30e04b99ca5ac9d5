#!/usr/bin/env bash
# http-processor.sh
#
# Puppet's `http` report processor against reportdb and against
# puppet-summary (github.com/skx/puppet-summary: Go and SQLite, the same
# processor's target), side by side on the same reports and machine.
#
# The reports are N Puppet 7.23 report dumps, exactly what the processor
# POSTs: the kit's fleet.py writes Puppet's report JSON (--format puppet:
# formats 10 to 12, agents 5.5 to 8, 100 to 400 resources a run, about
# 150 KB of YAML), and Puppet 7.23 itself, as a Puppet server loads an
# agent's report, reads each with
# Puppet::Transaction::Report.from_data_hash and writes report.to_yaml
# (Psych). Generated once into $WORK/http-processor/reports-N (minutes: the
# Ruby side takes about 0.1 s a report), reused after.
#
# Each round starts each server on a fresh store (reportdb serve on an
# empty embedded store, --report-ttl 0 --node-ttl 0; puppet-summary serve
# with a new SQLite file and report directory), POSTs every report once
# over CONNS keep-alive connections (POST /reports/upload, resp. /upload,
# Content-Type application/x-yaml, as the processor sends them), and reads
# the server process's CPU time (utime + stime) and peak RSS (VmHWM) from
# /proc; the order of the servers alternates from round to round. Before
# the rounds every report goes through both of reportdb's YAML paths (the
# fast one and the YAML library's), which must agree.
#
# Writes bench/results/http-processor.txt (overwritten). docs/performance.md
# quotes:
#   bench/http-processor.sh
#
#   N=10000          reports
#   CONNS=8          connections
#   ROUNDS=2         rounds (each: both servers)
#   CHECK=1          the equivalence check first (0: skip it)
#   QUIET_LOAD=1.0   before each round, wait up to QUIET_WAIT=1200 s for the
#                    1-minute load average to fall below this (the results
#                    note it either way)
#   REPORTDB=PATH    reportdb's binary (default: built from this checkout)
#   BASELINE=PATH    another reportdb binary, measured as reportdb-base in
#                    each round too (an earlier build, for a before/after)
#   PUPPET_SUMMARY=PATH  puppet-summary's binary; default:
#                    `go install github.com/skx/puppet-summary@latest` into
#                    $WORK/http-processor/bin, else built from a checkout in
#                    PUPPET_SUMMARY_SRC when the module proxy will not serve it
#   PORT=18760
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_shared
N=${N:-10000}
CONNS=${CONNS:-8}
ROUNDS=${ROUNDS:-2}
CHECK=${CHECK:-1}
QUIET_LOAD=${QUIET_LOAD:-1.0}
QUIET_WAIT=${QUIET_WAIT:-1200}
PORT=${PORT:-18760}
HP=$WORK/http-processor
mkdir -p "$HP/bin" "$HP/run"
result=$RESULTS/http-processor.txt
log() { echo "http-processor.sh: $*" >&2; }
for tool in ruby python3 go curl; do
  command -v "$tool" >/dev/null || { log "missing dependency: $tool"; exit 2; }
done
ruby -rpuppet -e 'exit(Puppet.version.start_with?("7.") ? 0 : 1)' 2>/dev/null || { log "needs Puppet 7 (ruby -rpuppet)"; exit 2; }

server_pid=""
cleanup() {
  if [[ -n "$server_pid" ]]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
}
trap cleanup EXIT

# --------------------------------------------------------------- the reports
reports=$HP/reports-$N
if [[ ! -f "$reports/.complete" ]]; then
  log "generating $N reports into $reports"
  rm -rf "$reports" "$HP/fleet-$N"
  mkdir -p "$reports"
  python3 "$BENCH/fleet.py" --nodes "$N" --runs 1 --format puppet --out "$HP/fleet-$N/" --quiet
  cat > "$HP/to_yaml.rb" <<'EOF'
# to_yaml.rb OUT < LIST: each report JSON of LIST (one path a line) as
# Puppet 7 writes it for its http report processor: to_yaml of the report
# that from_data_hash reads, as a Puppet server reads an agent's report.
require 'json'
require 'tmpdir'
require 'puppet'
Dir.mktmpdir do |tmp|
  Puppet.initialize_settings(['--confdir', tmp, '--vardir', tmp, '--codedir', tmp, '--logdir', tmp, '--rundir', tmp])
end
out = ARGV[0]
STDIN.each_line do |path|
  path = path.chomp
  report = Puppet::Transaction::Report.from_data_hash(JSON.parse(File.read(path)))
  File.write(File.join(out, File.basename(path, '.json') + '.yaml'), report.to_yaml)
end
EOF
  ls "$HP/fleet-$N/reports/"*.json > "$HP/fleet-$N/list"
  pids=()
  for part in 0 1; do
    awk -v p="$part" 'NR % 2 == p' "$HP/fleet-$N/list" | ruby "$HP/to_yaml.rb" "$reports" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  [[ $(ls "$reports" | wc -l) -eq $N ]] || { log "expected $N reports in $reports"; exit 1; }
  ruby -rpuppet -e 'print Puppet.version' > "$reports/.puppet-version"
  rm -rf "$HP/fleet-$N"
  touch "$reports/.complete"
fi
sizes=$(find "$reports" -name '*.yaml' -printf '%s\n' | awk '{ s += $1; if (min == "" || $1 < min) min = $1; if ($1 > max) max = $1 } END { printf "mean %.0f KB, %.0f to %.0f KB, %.0f MB in all", s / NR / 1000, min / 1000, max / 1000, s / 1e6 }')
log "$N reports: $sizes"

# ----------------------------------------------------------------- the tools
bin=${REPORTDB:-}
if [[ -z "$bin" ]]; then
  bin=$HP/bin/reportdb
  (cd "$ROOT" && go build -buildvcs=true -o "$bin" ./cmd/reportdb)
fi
ps_bin=${PUPPET_SUMMARY:-$HP/bin/puppet-summary}
ps_version=""
if [[ -z "${PUPPET_SUMMARY:-}" ]]; then
  if GOBIN=$HP/bin go install github.com/skx/puppet-summary@latest 2>"$HP/run/ps-install.log"; then
    ps_version="github.com/skx/puppet-summary@latest ($(go version -m "$ps_bin" | awk '$1 == "mod" {print $3}'))"
  elif [[ -n "${PUPPET_SUMMARY_SRC:-}" ]]; then
    log "go install refused ($(tail -1 "$HP/run/ps-install.log")); building $PUPPET_SUMMARY_SRC"
    (cd "$PUPPET_SUMMARY_SRC" && go build -o "$ps_bin" .)
    ps_version="built from $PUPPET_SUMMARY_SRC$(cd "$PUPPET_SUMMARY_SRC" && git rev-parse --short HEAD 2>/dev/null | sed 's/^/ at /' || true)"
  else
    log "go install github.com/skx/puppet-summary@latest failed (see $HP/run/ps-install.log); set PUPPET_SUMMARY or PUPPET_SUMMARY_SRC"
    exit 2
  fi
else
  ps_version=$PUPPET_SUMMARY
fi

# hpload URL DIR CONNS: POSTs every *.yaml of DIR once over CONNS keep-alive
# connections, as Puppet's http report processor POSTs a report; prints
# "OK FAILED SECONDS P50_MS P99_MS".
mkdir -p "$HP/hpload"
cat > "$HP/hpload/main.go" <<'EOF'
package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	url, dir := os.Args[1], os.Args[2]
	conns, _ := strconv.Atoi(os.Args[3])
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	client := &http.Client{Timeout: 5 * time.Minute, Transport: &http.Transport{
		MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns, DisableCompression: true}}
	var next, ok, failed atomic.Int64
	lats := make([][]time.Duration, conns)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range conns {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(files) {
					return
				}
				body, err := os.ReadFile(files[i])
				if err != nil {
					panic(err)
				}
				t0 := time.Now()
				req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/x-yaml")
				req.Header.Set("Accept", "*/*")
				resp, err := client.Do(req)
				if err == nil {
					msg, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						err = fmt.Errorf("%s: %.200s", resp.Status, msg)
					}
				}
				lats[w] = append(lats[w], time.Since(t0))
				if err != nil {
					if failed.Add(1) <= 5 {
						fmt.Fprintf(os.Stderr, "%s: %v\n", files[i], err)
					}
					continue
				}
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	el := time.Since(start)
	all := slices.Concat(lats...)
	slices.Sort(all)
	q := func(p float64) float64 {
		if len(all) == 0 {
			return 0
		}
		return float64(all[min(len(all)-1, int(p*float64(len(all))))].Microseconds()) / 1000
	}
	fmt.Printf("%d %d %.3f %.1f %.1f\n", ok.Load(), failed.Load(), el.Seconds(), q(0.5), q(0.99))
}
EOF
printf 'module hpload\n\ngo 1.25\n' > "$HP/hpload/go.mod"
(cd "$HP/hpload" && go build -o "$HP/bin/hpload" .)

# ----------------------------------------------------------------- the runs
tck=$(getconf CLK_TCK)
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
hwm_kb() { awk '/^VmHWM/ { print $2 }' "/proc/$1/status"; }
load1() { cut -d' ' -f1 /proc/loadavg; }

wait_quiet() {
  local waited=0
  while awk -v l="$(load1)" -v q="$QUIET_LOAD" 'BEGIN { exit !(l > q) }'; do
    if (( waited >= QUIET_WAIT )); then log "load average still $(load1) after ${QUIET_WAIT}s; measuring anyway"; return; fi
    (( waited == 0 )) && log "load average $(load1) > $QUIET_LOAD: waiting (up to ${QUIET_WAIT}s)"
    sleep 30; waited=$((waited + 30))
  done
}

wait_http() { # URL
  for _ in $(seq 300); do curl -fsS -o /dev/null "$1" 2>/dev/null && return 0; sleep 0.1; done
  log "no answer from $1"; return 1
}

start_server() { # NAME: starts it fresh, sets server_pid and url
  local run=$HP/run/$1
  rm -rf "$run"; mkdir -p "$run"
  case $1 in
    reportdb|reportdb-base)
      local b=$bin
      [[ $1 == reportdb-base ]] && b=$BASELINE
      "$b" serve --listen "127.0.0.1:$PORT" --data-dir "$run/data" --report-ttl 0 --node-ttl 0 >"$run/server.log" 2>&1 &
      server_pid=$!
      wait_http "http://127.0.0.1:$PORT/pdb/meta/v1/version"
      url=http://127.0.0.1:$PORT/reports/upload ;;
    puppet-summary)
      (cd "$run" && exec "$ps_bin" serve -host 127.0.0.1 -port "$PORT" -db-file "$run/ps.db" -prefix "$run/reports/") >"$run/server.log" 2>&1 &
      server_pid=$!
      wait_http "http://127.0.0.1:$PORT/"
      url=http://127.0.0.1:$PORT/upload ;;
  esac
}

stored() { # NAME: the reports the server holds
  case $1 in
    reportdb*) curl -fsS -G "http://127.0.0.1:$PORT/pdb/query/v4/reports" \
      --data-urlencode 'query=["extract",[["function","count"]]]' | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["count"])' ;;
    puppet-summary) find "$HP/run/puppet-summary/reports" -type f | wc -l ;;
  esac
}

rows=()
measure() { # ROUND NAME
  wait_quiet
  local load; load=$(load1)
  start_server "$2"
  local t0 t1 out
  t0=$(cpu_ticks "$server_pid")
  log "round $1: $2 ($url), load average $load"
  out=$("$HP/bin/hpload" "$url" "$reports" "$CONNS")
  t1=$(cpu_ticks "$server_pid")
  local hwm n
  hwm=$(hwm_kb "$server_pid")
  n=$(stored "$2")
  kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=""
  read -r ok failed secs p50 p99 <<<"$out"
  rows+=("$(awk -v r="$1" -v s="$2" -v ok="$ok" -v f="$failed" -v secs="$secs" -v ticks=$((t1 - t0)) -v tck="$tck" \
    -v hwm="$hwm" -v n="$n" -v p50="$p50" -v p99="$p99" -v la="$load" 'BEGIN {
      printf "%-5s %-15s %9.1f %13.2f %11.1f %8d %7d %9.1f %9.1f %8s", r, s, ok / secs, ticks * 1000 / tck / ok, hwm / 1024, n, f, p50, p99, la }')")
  log "${rows[-1]}"
}

check_line="skipped (CHECK=0)"
if [[ "$CHECK" == 1 ]]; then
  log "checking every report through both YAML paths"
  check_out=$(cd "$ROOT" && REPORTDB_YAML_DIR=$reports go test ./puppetreport -run '^TestYAMLFastPathFiles$' -count=1 -v 2>&1) || { echo "$check_out" | tail -20 >&2; log "the YAML paths disagree"; exit 1; }
  check_line="$(echo "$check_out" | grep -o '[0-9]* reports ([0-9]* from REPORTDB_YAML_DIR)' | head -1): the fast path took every one and gave what the YAML library's path gives (go test ./puppetreport -run TestYAMLFastPathFiles with REPORTDB_YAML_DIR)"
fi

for r in $(seq "$ROUNDS"); do
  order="reportdb puppet-summary${BASELINE:+ reportdb-base}"
  (( r % 2 )) || order=$(echo "$order" | tr ' ' '\n' | tac | tr '\n' ' ')
  for s in $order; do measure "$r" "$s"; done
done

{
  header "Puppet's http report processor: reportdb against puppet-summary" "$bin"
  echo "reports: $N Puppet $(cat "$reports/.puppet-version") to_yaml dumps (from_data_hash of fleet.py --format puppet --nodes $N --runs 1), $sizes"
  echo "load:    each report POSTed once, $CONNS keep-alive connections, Content-Type application/x-yaml (as the http processor)"
  echo "servers: reportdb serve, fresh embedded store, --report-ttl 0 --node-ttl 0 -> POST /reports/upload"
  [[ -n "${BASELINE:-}" ]] && echo "         reportdb-base: the same with $BASELINE ($("$BASELINE" version 2>/dev/null | head -1))"
  echo "         puppet-summary serve ($ps_version), fresh SQLite file and report directory -> POST /upload"
  echo "check:   $check_line"
  echo "CPU is the server process's utime + stime over the run, per report; peak RSS its VmHWM; stored what it holds after"
  echo
  printf '%-5s %-15s %9s %13s %11s %8s %7s %9s %9s %8s\n' round server reports/s "CPU ms/report" "peak RSS MB" stored failed "p50 ms" "p99 ms" "load avg"
  printf '%s\n' "${rows[@]}"
} > "$result"
cat "$result"
