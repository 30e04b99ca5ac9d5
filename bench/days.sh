#!/usr/bin/env bash
# days.sh DATABASE_URL
#
# Does every query of the reference kit's query mix (bench/queries.py) cost
# the same whether 1, 7 or 14 days of reports are kept? For each D in DAYS,
# this loads the last D days of one fleet (NODES nodes, a run every 30
# minutes) into a fresh PostgreSQL database with `reportdb import` (its peak
# memory sampled), serves it, runs queries.py against it in ROUNDS rounds
# that alternate the windows, and records p50/p95 per query, the concurrent
# mix, the database size per report and the import rate.
#
# Writes bench/results/days-<NODES>n.json (the date, machine, commit, and per
# window the import, sizes, every query's median p50/p95 over the rounds and
# each round's p50), overwritten by the next run; the raw output (server logs,
# each round's queries.py JSON) stays in $REPORTDB_BENCH_WORK/days-<NODES>n.
# `bench/plot-days.py bench/results/days-10000n.json --out docs/p50-days-10k.svg`
# draws it.
#
# The figures of docs/performance.md (10,000 nodes, 1 and 14 days):
#   NODES=10000 DAYS="1 14" K=30 ROUNDS=6 DURATION=30 bench/days.sh postgres://postgres@127.0.0.1:5432/s10k
#
#   DATABASE_URL  PostgreSQL URL whose database name is a prefix: the D-day
#                 fleet goes into <name>_<D>d (dropped and re-created), e.g.
#                 postgres://postgres@127.0.0.1:5432/days -> days_1d,
#                 days_7d, days_14d. The user must be allowed to create
#                 databases (CHECKPOINT wants a superuser; skipped if not).
#
# Environment:
#   DAYS="1 7 14"   windows to measure (the fleet is generated once for the
#                   longest; see fleet-days.py: the windows nest exactly)
#   NODES=1000      fleet size (10000: ~6.7M reports for 14 days, 4.6 GB gzipped)
#   DATA=$REPORTDB_BENCH_WORK/fleets   where fleet files are generated and
#                   kept (reused when present: 1000 nodes x 14 days is ~0.5 GB gz)
#   REPORTDB=PATH   the reportdb binary to measure; default: built from SRC
#   SRC=DIR         a checkout to build the binary from (default: this one)
#   PORT=18620      where the server listens while its queries run
#   K=20 WARMUP=3   queries.py: measured and unmeasured runs per query
#   ROUNDS=3        query rounds; each round measures every window in turn
#                   (1, 7, 14, 1, 7, 14, ...); the summary keeps, per query and
#                   window, the median over rounds of p50 and of p95
#   DURATION=15     queries.py: seconds of its concurrent phase (8
#                   connections), in round 1 only (0 = skip)
#   IMPORT_FLAGS    extra flags for `reportdb import` (e.g. "--writers 2")
#   SERVE_FLAGS     extra flags for `reportdb serve`
#   SKIP_IMPORT=1   keep the databases as they are (already loaded by this
#                   binary) and only measure the queries again
#   LABEL           a name for this measurement (default: the binary's version)
#
# The reports have fixed dates (2026-01-15): the server runs with --report-ttl 0.
# Nothing else should run on the machine while this measures; the load
# averages before and after each phase are recorded so that a noisy run can
# be recognised.
set -euo pipefail
url=${1:-}
[[ -n "$url" ]] || { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2; exit 2; }
. "$(dirname "$0")/lib.sh"
need_shared
DAYS=${DAYS:-1 7 14}
NODES=${NODES:-1000}
DATA=${DATA:-$WORK/fleets}
SRC=${SRC:-$ROOT}
PORT=${PORT:-18620}
K=${K:-20}
WARMUP=${WARMUP:-3}
DURATION=${DURATION:-15}
ROUNDS=${ROUNDS:-3}
SKIP_IMPORT=${SKIP_IMPORT:-0}
QUERIES_PY=$BENCH/queries.py
FLEET_PY=$BENCH/fleet.py
results=$WORK/days-${NODES}n
mkdir -p "$results" "$DATA"
result=$RESULTS/days-${NODES}n.json

base=${url%%\?*}; params=""; [[ "$url" == *\?* ]] && params="?${url#*\?}"
prefix=${base##*/}
server_url=${base%/*}
admin="$server_url/postgres$params"
[[ -n "$prefix" && "$prefix" =~ ^[A-Za-z0-9_]+$ ]] || { echo "days-scaling: the database name '$prefix' must be [A-Za-z0-9_]+" >&2; exit 2; }
dburl() { echo "$server_url/${prefix}_${1}d$params"; }

export PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning"
log() { echo "days-scaling: $*" >&2; }
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

# ---- the binary
commit="" describe=""
if [[ -z "${REPORTDB:-}" ]]; then
  commit=$(cd "$SRC" && git rev-parse HEAD 2>/dev/null || echo unknown)
  describe=$(cd "$SRC" && git describe --always --dirty 2>/dev/null || echo "$commit")
  REPORTDB="$DATA/reportdb-$describe"
  log "building $REPORTDB from $SRC"
  (cd "$SRC" && go build -o "$REPORTDB" ./cmd/reportdb)
fi
REPORTDB=$(readlink -f "$REPORTDB")
version=$("$REPORTDB" version 2>/dev/null | head -1 || true)
LABEL=${LABEL:-${version:-reportdb}${describe:+ $describe}}
log "measuring $REPORTDB ($LABEL)"

# ---- the fleet: every window from one generation
days_csv=$(echo $DAYS | tr ' ' ',')
t0=$(now); gen_l0=$(loadavg)
python3 "$ROOT/bench/fleet-days.py" --nodes "$NODES" --days "$days_csv" --outdir "$DATA" --fleet-py "$FLEET_PY"
gen_secs=$(since "$t0"); gen_l1=$(loadavg)
log "fleet ready in ${gen_secs}s (0 when reused)"

server_pid=""
stop_server() {
  if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid"
    for _ in $(seq 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
  fi
  server_pid=""
}
trap stop_server EXIT

for d in $DAYS; do
  out="$results/days-$d"; mkdir -p "$out"
  fleet="$DATA/fleet-${NODES}n-${d}d.jsonl.gz"
  db=$(dburl "$d"); dbname="${prefix}_${d}d"
  phases="$out/phases.txt"
  # with SKIP_IMPORT=1 the import phase of an earlier run in this directory is kept
  if [[ "$SKIP_IMPORT" == 1 && -f "$phases" ]]; then grep '^import ' "$phases" > "$phases.new" || true; else : > "$phases.new"; fi
  { echo "generate $gen_secs $gen_l0 $gen_l1"; cat "$phases.new"; } > "$phases"; rm -f "$phases.new"

  # ---- import into a fresh database
  if [[ "$SKIP_IMPORT" != 1 ]]; then
    log "$d days: (re)creating $dbname"
    psql -qAt "$admin" -c "DROP DATABASE IF EXISTS \"$dbname\" WITH (FORCE)" >/dev/null
    psql -qAt "$admin" -c "CREATE DATABASE \"$dbname\"" >/dev/null
    log "$d days: importing $fleet"
    t0=$(now); l0=$(loadavg)
    # shellcheck disable=SC2086
    "$REPORTDB" import --database "$db" --progress lines --progress-interval 30s ${IMPORT_FLAGS:-} "$fleet" \
      > "$out/import.log" 2> "$out/import.progress" &
    ipid=$!
    # the import's peak memory (VmHWM, kB), sampled until it exits
    while kill -0 "$ipid" 2>/dev/null; do
      awk '/^VmHWM/ {print $2}' "/proc/$ipid/status" 2>/dev/null > "$out/import.vmhwm.new" && [[ -s "$out/import.vmhwm.new" ]] &&
        mv "$out/import.vmhwm.new" "$out/import.vmhwm"
      sleep 2
    done
    wait "$ipid" || { log "import failed:"; cat "$out/import.log" "$out/import.progress" >&2; exit 1; }
    echo "import $(since "$t0") $l0 $(loadavg)" >> "$phases"
    cat "$out/import.log" >&2
  fi
  # the same settling as the kit's compare.sh before its queries
  psql -qAt "$db" -c "ANALYZE" >/dev/null
  psql -qAt "$db" -c "CHECKPOINT" >/dev/null 2>&1 || log "CHECKPOINT not allowed; skipped"
  psql -qAt "$db" -c "SELECT pg_database_size(current_database())" > "$out/db_bytes"
  # sizes per table, partitions counted with their partitioned table, indexes and TOAST included
  psql -qAt -F $'\t' "$db" -c "
    SELECT coalesce(pg_partition_root(c.oid), c.oid)::regclass::text, sum(pg_total_relation_size(c.oid))
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'
      AND c.relkind IN ('r', 'm')
    GROUP BY 1 ORDER BY 2 DESC" > "$out/relations.tsv"
  rm -f "$out"/queries-*.json "$out"/queries-*.txt "$out"/queries-*.err "$out"/queries-*.rc "$out"/server-*.log
done

# ---- the query mix: ROUNDS rounds, each over every window in turn, so that a
# burst of load elsewhere on the machine hits one round, not one window
for r in $(seq "$ROUNDS"); do
  for d in $DAYS; do
    out="$results/days-$d"
    fleet="$DATA/fleet-${NODES}n-${d}d.jsonl.gz"
    db=$(dburl "$d")
    state="$DATA/state-$d"; rm -rf "$state"; mkdir -p "$state"
    # shellcheck disable=SC2086
    "$REPORTDB" serve --listen "127.0.0.1:$PORT" --database "$db" --report-ttl 0 --node-ttl 0 \
      --data-dir "$state/data" --spool-dir "$state/spool" ${SERVE_FLAGS:-} > "$out/server-$r.log" 2>&1 &
    server_pid=$!
    for _ in $(seq 600); do grep -q "reportdb listening" "$out/server-$r.log" && break; kill -0 "$server_pid" || break; sleep 0.1; done
    grep -q "reportdb listening" "$out/server-$r.log" || { log "server did not start:"; cat "$out/server-$r.log" >&2; exit 1; }
    # The server loads the fleet state (the dashboard's and the metrics'
    # counts: the nodes' latest reports, and the hourly counts of the
    # retained days) in the background as it starts; the mix measures the
    # queries once that is done, as they run at any other time. How long
    # the load took goes to phases.txt ("fleetload SECONDS").
    t0=$(now)
    for _ in $(seq 1200); do
      loaded=$(curl -s "http://127.0.0.1:$PORT/metrics" | awk '/^reportdb_fleet_state_loaded_timestamp_seconds / {print $2}')
      [[ -n "$loaded" && "$loaded" != 0 ]] && break
      sleep 0.25
    done
    echo "fleetload-$r $(since "$t0")" >> "$out/phases.txt"

    dur=$DURATION; ((r == 1)) || dur=0   # the concurrent phase only in the first round
    log "$d days, round $r/$ROUNDS: queries.py -k $K --warmup $WARMUP -d $dur"
    t0=$(now); l0=$(loadavg)
    qrc=0
    python3 "$QUERIES_PY" "http://127.0.0.1:$PORT" --fleet "$fleet" -k "$K" --warmup "$WARMUP" -d "$dur" \
      --json-out "$out/queries-$r.json" --label "$LABEL ${d}d round $r" > "$out/queries-$r.txt" 2> "$out/queries-$r.err" || qrc=$?
    echo "queries-$r $(since "$t0") $l0 $(loadavg)" >> "$out/phases.txt"
    cat "$out/queries-$r.txt" >&2
    grep -E "WARNING|unexpected|FAIL( |$)" "$out/queries-$r.err" >&2 || true
    echo "$qrc" > "$out/queries-$r.rc"
    stop_server
  done
done

# ---- summary.json / summary.csv
commit=${commit:-$(cd "$ROOT" && git describe --always --dirty 2>/dev/null || echo unknown)}
python3 - "$results" "$DATA" "$NODES" "$LABEL" "$REPORTDB" "$commit" "$DAYS" "$ROUNDS" "$result" <<'EOF'
import datetime, json, os, platform, re, statistics, sys
results, data, nodes, label, binary, commit, days, rounds, result = sys.argv[1:]
days = [int(d) for d in days.split()]
rounds = int(rounds)
runs = []
machine = None
for d in days:
    out = os.path.join(results, "days-%d" % d)
    man = json.load(open(os.path.join(data, "fleet-%sn-%dd.jsonl.gz.manifest.json" % (nodes, d))))
    qs = [json.load(open(os.path.join(out, "queries-%d.json" % r))) for r in range(1, rounds + 1)]
    machine = machine or qs[0].get("machine")
    phases = {}
    for line in open(os.path.join(out, "phases.txt")):
        f = line.split()
        phases[f[0]] = {"seconds": round(float(f[1]), 2), "load_before": [float(x) for x in f[2:5]],
                        "load_after": [float(x) for x in f[5:8]]}
    imp = None
    ip = os.path.join(out, "import.log")
    if os.path.exists(ip):
        txt = open(ip).read()
        m = re.search(r"(?:imported|read) (\d+) reports? .* in (\S+) \((\d+) reports/s\)", txt)
        st = re.search(r"stored:\s+(\d+)", txt)
        if m:
            imp = {"reports": int(m.group(1)), "stored": int(st.group(1)) if st else None,
                   "elapsed": m.group(2), "reports_per_s": int(m.group(3)),
                   "events_per_s": round(man["truth"]["events"] / phases["import"]["seconds"])
                   if "import" in phases else None}
        hw = os.path.join(out, "import.vmhwm")
        if os.path.exists(hw):
            imp["peak_rss_mb"] = round(int(open(hw).read().strip()) / 1000)
    dbb = int(open(os.path.join(out, "db_bytes")).read().strip())
    rels = [dict(zip(("relation", "bytes"), (l.split("\t")[0], int(l.split("\t")[1]))))
            for l in open(os.path.join(out, "relations.tsv")) if l.strip()]
    reports = qs[0]["target_reports"]
    queries = []
    for i, first in enumerate(qs[0]["queries"]):
        per = [q["queries"][i] for q in qs]
        assert all(p["name"] == first["name"] for p in per)
        x = {k: first[k] for k in ("name", "rows", "bytes", "expect", "digest")}
        x["p50_ms"] = statistics.median(p["p50_ms"] for p in per)
        x["p95_ms"] = statistics.median(p["p95_ms"] for p in per)
        x["max_ms"] = max(p["max_ms"] for p in per)
        x["min_ms"] = min(p["min_ms"] for p in per)
        x["rounds_p50_ms"] = [round(p["p50_ms"], 3) for p in per]
        x["rounds_p95_ms"] = [round(p["p95_ms"], 3) for p in per]
        x["ok"] = all(p["ok"] for p in per)
        x["problems"] = [pr for p in per for pr in p["problems"]][:5]
        x["same_rows_every_round"] = len({p["digest"] for p in per}) == 1
        queries.append(x)
    run = {
        "days": d, "label": label, "reports": reports, "fleet_reports": man["truth"]["reports"],
        "events": man["truth"]["events"], "db_bytes": dbb,
        "db_bytes_per_report": round(dbb / reports, 1) if reports else None,
        "relations": rels, "import": imp, "phases": phases, "rounds": rounds,
        "queries_all_ok": all(q["all_ok"] for q in qs),
        "queries": queries,
        "concurrent": qs[0].get("concurrent"),
    }
    json.dump(run, open(os.path.join(out, "run.json"), "w"), indent=1)
    runs.append(run)
summary = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "machine": machine, "kernel": platform.release(), "commit": commit, "label": label,
           "binary": os.path.basename(binary), "nodes": int(nodes), "days": days, "rounds": rounds,
           "runs": [{k: v for k, v in r.items() if k != "relations"} | {"largest_relations": r["relations"][:6]}
                    for r in runs]}
json.dump(summary, open(result, "w"), indent=1)
print("days: wrote %s (raw output in %s)" % (result, results), file=sys.stderr)
EOF
