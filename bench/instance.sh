#!/usr/bin/env bash
# instance.sh start|stop|restart|pid PORT [--database URL] [--fresh]
#
# Runs a reportdb for the reference kit's benchmark harness (bench/compare.sh,
# driven by compare-medium.sh):
# built from this checkout into $STATE/reportdb (or the binary
# $REPORTDB_BENCH_BIN, to measure another build), listening on 127.0.0.1:PORT,
# with its embedded store in $STATE/data or the PostgreSQL database URL.
# --fresh (with start/restart) empties the store first (drops and recreates the
# PostgreSQL database as the postgres superuser, or removes the data directory).
# Retention and node expiry are disabled (--report-ttl 0 --node-ttl 0):
# benchmark fleets have fixed dates.
#   STATE defaults to ${TMPDIR:-/tmp}/reportdb-bench-PORT. The server reads the REPORTDB_*
#   settings of the environment (REPORTDB_ACKNOWLEDGE=spool, say).
set -euo pipefail
cmd=${1:-}; port=${2:-}
[[ -n "$cmd" && -n "$port" ]] || { echo "usage: $0 start|stop|restart|pid PORT [--database URL] [--fresh]" >&2; exit 2; }
shift 2
db=""; fresh=0
while (($#)); do
  case "$1" in
    --database) db=$2; shift 2;;
    --fresh) fresh=1; shift;;
    *) echo "unknown argument $1" >&2; exit 2;;
  esac
done
STATE=${REPORTDB_BENCH_STATE:-${TMPDIR:-/tmp}/reportdb-bench-$port}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$STATE"

pid() { [[ -f "$STATE/pid" ]] && kill -0 "$(cat "$STATE/pid")" 2>/dev/null && cat "$STATE/pid"; }

stop() {
  local p
  if p=$(pid); then kill "$p"; for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done; fi
  rm -f "$STATE/pid"
}

start() {
  if [[ -n "${REPORTDB_BENCH_BIN:-}" ]]; then
    cp "$REPORTDB_BENCH_BIN" "$STATE/reportdb"
  else
    (cd "$ROOT" && go build -o "$STATE/reportdb" ./cmd/reportdb)
  fi
  if ((fresh)); then
    if [[ -n "$db" ]]; then
      local name=${db##*/}; name=${name%%\?*}
      runuser -u postgres -- psql -qAt -p "${PGPORT:-5432}" -c "DROP DATABASE IF EXISTS \"$name\" WITH (FORCE)" >/dev/null
      runuser -u postgres -- psql -qAt -p "${PGPORT:-5432}" -c "CREATE DATABASE \"$name\"" >/dev/null
      # and the spool: reports left in it would be delivered into the new database
      rm -rf "$STATE/data/spool"
    else
      rm -rf "$STATE/data"
    fi
  fi
  local args=(serve --listen "127.0.0.1:$port" --report-ttl 0 --node-ttl 0)
  # the data directory also holds the spool (one per instance), also with --database
  args+=(--data-dir "$STATE/data")
  if [[ -n "$db" ]]; then args+=(--database "$db"); fi
  : > "$STATE/log"
  nohup "$STATE/reportdb" "${args[@]}" >>"$STATE/log" 2>&1 &
  echo $! > "$STATE/pid"
  for _ in $(seq 300); do grep -q "reportdb listening" "$STATE/log" && return 0; sleep 0.1; done
  cat "$STATE/log" >&2; exit 1
}

case "$cmd" in
  start) start;;
  stop) stop;;
  restart) stop; start;;
  pid) pid;;
  *) echo "unknown command $cmd" >&2; exit 2;;
esac
