# lib.sh: sourced by the bench drivers.
#
#   ROOT     the repository
#   SHARED   the PuppetDB reference kit (bench tools, clients, conformance
#            corpus, PuppetDB 7.12.1 scripts): $REPORTDB_SHARED, by default
#            the shared/ folder beside the repository
#   BENCH    $SHARED/bench (fleet.py, ingest.py, queries.py, compare.sh, ...)
#   PG       the PostgreSQL server the drivers create their databases on:
#            $REPORTDB_BENCH_PG, by default postgres://postgres@127.0.0.1:5432
#   RESULTS  bench/results: one current file per driver, overwritten when
#            re-measured
#   WORK     where a run keeps its raw output (server logs, per-round JSON):
#            $REPORTDB_BENCH_WORK, by default ${TMPDIR:-/tmp}/reportdb-bench;
#            never in the repository
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SHARED=${REPORTDB_SHARED:-$(cd "$ROOT/.." && pwd)/shared}
BENCH=$SHARED/bench
PG=${REPORTDB_BENCH_PG:-postgres://postgres@127.0.0.1:5432}
RESULTS=$ROOT/bench/results
WORK=${REPORTDB_BENCH_WORK:-${TMPDIR:-/tmp}/reportdb-bench}
mkdir -p "$RESULTS" "$WORK"

need_shared() {
  [[ -d "$BENCH" ]] || { echo "$(basename "$0"): the reference kit is not at $SHARED (set REPORTDB_SHARED)" >&2; exit 2; }
}

# header TITLE [BINARY]: the lines every results file starts with: what was
# measured, when, on which machine, with which code.
header() {
  local bin=${2:-} commit
  commit=$(cd "$ROOT" && git describe --always --dirty 2>/dev/null || echo unknown)
  echo "# $1"
  echo "date:    $(date -u +%FT%TZ)"
  echo "machine: $(nproc) CPUs ($(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)), $(awk '/MemTotal/ {printf "%.1f GB", $2 / 1048576}' /proc/meminfo), $(uname -sr)"
  if [[ -n "$bin" ]]; then
    echo "code:    $("$bin" version 2>/dev/null | head -1 || echo "$bin") (checkout $commit)"
  else
    echo "code:    $commit"
  fi
  if command -v psql >/dev/null 2>&1; then
    echo "postgres: $(psql -qAt "$PG/postgres" -c "SELECT current_setting('server_version') || ', shared_buffers ' || current_setting('shared_buffers') || ', max_wal_size ' || current_setting('max_wal_size')" 2>/dev/null || echo "not reachable at $PG")"
  fi
  echo
}

# build: a reportdb binary from this checkout into $WORK, its path on stdout
build() {
  (cd "$ROOT" && go build -buildvcs=true -o "$WORK/reportdb" ./cmd/reportdb)
  echo "$WORK/reportdb"
}
