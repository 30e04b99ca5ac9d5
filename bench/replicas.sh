#!/usr/bin/env bash
# replicas.sh [BINARY]
#
# What a PostgreSQL read replica (--read-database) moves away from the
# primary, measured on ONE machine: the replica runs on the same CPUs as
# the primary, so it cannot add capacity, only move the query work to
# another postmaster. The driver
#   1. creates its own primary cluster on PRIMARY_PORT and a streaming hot
#      standby of it on STANDBY_PORT (initdb, pg_basebackup -R -X stream,
#      hot_standby_feedback = on; Debian binaries in PG_BINDIR, run as the
#      postgres user when root; data under $REPORTDB_BENCH_WORK/replicas-pg,
#      stopped and removed on exit; the shared cluster on 5432 is not
#      touched);
#   2. imports the medium fleet (fleet.py --scale medium, 23,696 reports)
#      into the primary (database reportdb_base) with `reportdb import` and
#      waits for the standby to replay it; every run starts from a copy of it
#      (CREATE DATABASE reportdb TEMPLATE reportdb_base, replayed by the
#      standby too), so that each run finds the same database;
#   3. runs reportdb in two configurations:
#        A  --database primary                        (0 replicas)
#        B  --database primary --read-database standby (1 replica)
#      first each with ingest alone (no queries: the baseline), then ROUNDS
#      interleaved rounds A B A B of DURATION seconds in which the bench's
#      concurrent query mix (queries.py -k 1 --warmup 0 -c 8 -d DURATION
#      --engine python, as in ack-under-load.sh, with the whole mix) runs
#      while a probe fleet is ingested at INGEST_CONC connections;
#   4. measures per run: ingest reports/s and ack p50/p99; the mix's
#      queries/s and p50/p99; the read time reportdb spent on each server
#      (delta of reportdb_database_query_seconds_total by role) and the
#      share on the primary; PostgreSQL's own pg_stat_database.active_time
#      and xact_commit of the database on the primary and on the standby;
#      the CPU seconds of each postmaster and its processes (utime + stime
#      from /proc, exited backends through the postmaster's cutime/cstime),
#      of reportdb, and of the whole machine; the replica's lag and
#      rotation, sampled every second from /metrics.
#
# The probe fleet is new reports of the same 1,000 nodes (fleet.py --seed
# PROBE_SEED), dated after the medium fleet (from PROBE_START on), generated
# in files of PROBE_RUNS runs into $REPORTDB_BENCH_WORK/fleets as needed;
# every run posts the same reports from the first on. Ingest is
# closed loop: INGEST_CONC connections post as fast as the server
# acknowledges (--acknowledge commit: a report is stored when acknowledged)
# for DURATION seconds, with the kit's ingest.py code (its prepare and
# submitter threads, preloaded before the clock starts, stopped at the
# deadline). The windowed queries (1 day, 14 days before the medium fleet's
# end) do not see the probe reports, the latest-report ones do.
#
# Writes bench/results/replicas.txt: a table per round and a summary; the
# raw output (server logs, each run's JSON) stays in
# $REPORTDB_BENCH_WORK/replicas.
#
#   bench/replicas.sh                  # DURATION=60 ROUNDS=2, ~10 minutes
#   DURATION=10 ROUNDS=1 bench/replicas.sh /tmp/reportdb   # a quick check
#
# Environment:
#   DURATION=60  ROUNDS=2  INGEST_CONC=8  QUERY_CONC=8
#   PRIMARY_PORT=5450  STANDBY_PORT=5451  PORT=18800 (reportdb)
#   PG_BINDIR=/usr/lib/postgresql/15/bin  PG_CONF="k=v;k=v" (both clusters)
#   FLEET=$REPORTDB_BENCH_WORK/fleet-medium.jsonl.gz (generated when absent)
#   PROBE_SEED=2  PROBE_START=2026-01-16T00:00:00Z  PROBE_RUNS=24
#   INGEST_MAX_RATE=1500 (reports/s preloaded for the first run; later runs
#                 preload 1.5x the ingest-alone rate, or more when a run was faster)
#   MAX_REPLICA_LAG=5s  SERVE_FLAGS (extra flags for every reportdb serve)
#   KEEP=1       leave the clusters' data directories in place
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_shared
DURATION=${DURATION:-60}; ROUNDS=${ROUNDS:-2}
INGEST_CONC=${INGEST_CONC:-8}; QUERY_CONC=${QUERY_CONC:-8}
PRIMARY_PORT=${PRIMARY_PORT:-5450}; STANDBY_PORT=${STANDBY_PORT:-5451}; PORT=${PORT:-18800}
PG_BINDIR=${PG_BINDIR:-/usr/lib/postgresql/15/bin}
FLEET=${FLEET:-$WORK/fleet-medium.jsonl.gz}
PROBE_SEED=${PROBE_SEED:-2}; PROBE_START=${PROBE_START:-2026-01-16T00:00:00Z}; PROBE_RUNS=${PROBE_RUNS:-24}
PROBE_NODES=1000
INGEST_MAX_RATE=${INGEST_MAX_RATE:-1500}
MAX_REPLICA_LAG=${MAX_REPLICA_LAG:-5s}
DATA=$WORK/fleets; mkdir -p "$DATA"
OUT=$WORK/replicas; rm -rf "$OUT"; mkdir -p "$OUT"
PGW=$WORK/replicas-pg
result=$RESULTS/replicas.txt
PDIR=$PGW/primary; SDIR=$PGW/standby
PURL=postgres://postgres@127.0.0.1:$PRIMARY_PORT/reportdb?sslmode=disable
SURL=postgres://postgres@127.0.0.1:$STANDBY_PORT/reportdb?sslmode=disable
BURL=postgres://postgres@127.0.0.1:$PRIMARY_PORT/reportdb_base?sslmode=disable # the imported fleet, copied for each run
URL=http://127.0.0.1:$PORT
log() { echo "replicas.sh $(date -u +%T): $*" >&2; }

if [[ -n "${1:-}" ]]; then BIN=$1; else log "building reportdb"; BIN=$(build); fi
[[ -x "$PG_BINDIR/initdb" ]] || { echo "no PostgreSQL binaries in $PG_BINDIR (set PG_BINDIR)" >&2; exit 2; }
for p in "$PRIMARY_PORT" "$STANDBY_PORT" "$PORT"; do
  if ss -Hltn "sport = :$p" | grep -q .; then echo "port $p is in use (set PRIMARY_PORT, STANDBY_PORT, PORT)" >&2; exit 2; fi
done

as_pg() { if [[ $(id -u) == 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi; }
psql_p() { psql -qAtX "postgres://postgres@127.0.0.1:$PRIMARY_PORT/${DB:-reportdb}?sslmode=disable" "$@"; }
psql_s() { psql -qAtX "postgres://postgres@127.0.0.1:$STANDBY_PORT/${DB:-reportdb}?sslmode=disable" "$@"; }

# ---- teardown: only what this script started
spid=; qpid=; ipid=; lpid=
cleanup() {
  local rc=$?
  for p in $lpid $qpid $ipid $spid; do kill "$p" 2>/dev/null || true; done
  for p in $lpid $qpid $ipid $spid; do wait "$p" 2>/dev/null || true; done
  for d in "$SDIR" "$PDIR"; do
    [[ -f $d/postmaster.pid ]] && as_pg "$PG_BINDIR/pg_ctl" -D "$d" -m fast -w stop >/dev/null 2>&1 || true
  done
  [[ "${KEEP:-0}" == 1 ]] || rm -rf "$PGW"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- helpers in Python: CPU and counter snapshots, the timed ingest, the summary
cat > "$OUT/rr.py" <<'EOF'
import glob, json, os, statistics, subprocess, sys, threading, time, urllib.request

TCK = os.sysconf("SC_CLK_TCK")

def stat(pid):
    with open("/proc/%d/stat" % pid) as f:
        s = f.read()
    v = s[s.rindex(")") + 2:].split()  # fields from the 3rd (state) on
    return int(v[1]), [int(x) for x in v[11:15]]  # ppid, utime stime cutime cstime

def tree_cpu(root):
    """CPU seconds of root and its live descendants (utime+stime) and of
    the processes they reaped (cutime+cstime: the postmaster's exited
    backends, the driver's finished commands)."""
    kids, info = {}, {}
    for d in glob.glob("/proc/[0-9]*"):
        try:
            pid = int(d[6:]); pp, t = stat(pid)
        except (OSError, ValueError):
            continue
        info[pid] = t; kids.setdefault(pp, []).append(pid)
    if root not in info:
        return None
    tot, todo = 0, [root]
    while todo:
        p = todo.pop(); t = info[p]
        tot += sum(t)
        todo.extend(kids.get(p, ()))
    return tot / TCK

def machine():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    # user nice system idle iowait irq softirq steal: busy without idle, iowait and steal
    return {"busy": (v[0] + v[1] + v[2] + v[5] + v[6]) / TCK, "steal": v[7] / TCK}

def metrics(url):
    r = {}
    with urllib.request.urlopen(url + "/metrics", timeout=30) as f:
        for line in f.read().decode().splitlines():
            for name, key in (("reportdb_database_queries_total{", "queries"), ("reportdb_database_query_seconds_total{", "seconds")):
                if line.startswith(name):
                    role = line.split('role="', 1)[1].split('"', 1)[0]
                    r.setdefault(role, {"queries": 0, "seconds": 0.0})[key] += float(line.rsplit(" ", 1)[1])
    return r

def pgstat(url):
    out = subprocess.run(["psql", "-qAtX", url, "-c",
        "SELECT active_time / 1000, xact_commit, xact_rollback FROM pg_stat_database WHERE datname = current_database()"],
        capture_output=True, text=True, check=True).stdout.strip().split("|")
    return {"active_s": float(out[0]), "xact_commit": int(out[1]), "xact_rollback": int(out[2])}

def snap(args):
    """snap OUT.json key=value...: cpu=PRIMARY_PID,STANDBY_PID,REPORTDB_PID,DRIVER_PID metrics=URL pg=PURL,SURL"""
    out, r = args[0], {"t": time.time()}
    if os.path.exists(out):
        r = json.load(open(out))
    for a in args[1:]:
        k, v = a.split("=", 1)
        if k == "cpu":
            p, s, d, me = (int(x) for x in v.split(","))
            # driver: this script's processes (reportdb, the load generators, psql, curl)
            r["cpu"] = {"primary": tree_cpu(p), "standby": tree_cpu(s), "reportdb": tree_cpu(d) if d else None,
                        "driver": tree_cpu(me), **machine()}
        elif k == "metrics":
            r["metrics"] = metrics(v)
        elif k == "pg":
            p, s = v.split(",")
            r["pg"] = {"primary": pgstat(p), "standby": pgstat(s)}
    json.dump(r, open(out, "w"), indent=1)

def ingest(args):
    """ingest BENCH URL OFFSET MAXN CONC DURATION READY GO JSON FILE:COUNT...
    the kit's ingest.py submitters for DURATION seconds from GO's creation,
    on reports OFFSET..OFFSET+MAXN of the probe files, preloaded first."""
    bench, url, offset, maxn, conc, duration, ready, go, jout = args[:9]
    offset, maxn, conc, duration = int(offset), int(maxn), int(conc), float(duration)
    sys.path.insert(0, bench)
    import benchlib as bl, ingest as ig
    items, skip = [], offset
    for fc in args[9:]:
        f, n = fc.rsplit(":", 1); n = int(n)
        if skip >= n:
            skip -= n; continue
        for i, line in enumerate(bl.iter_fleet_lines(f)):
            if i < skip:
                continue
            items.append(ig.prepare(line, True, 6))
            if len(items) >= maxn:
                break
        skip = 0
        if len(items) >= maxn:
            break
    open(ready, "w").close()
    while not os.path.exists(go):
        time.sleep(0.05)

    class Timed(ig.Feeder):
        def next(self):
            if time.perf_counter() >= self.deadline:
                return None, None
            return super().next()
    feeder = Timed(items=items)
    t0 = time.perf_counter(); feeder.deadline = t0 + duration
    res = ig.run_threads(bl.Target(url), feeder, conc, t0)
    secs = time.perf_counter() - t0
    ok = [r for r in res if r[3] == 200]
    lat = [r[2] * 1000 for r in ok]
    out = {"offset": offset, "preloaded": len(items), "submitted": len(res), "accepted": len(ok),
           "errors": len(res) - len(ok), "exhausted": len(res) >= len(items), "seconds": round(secs, 3),
           "reports_per_s": round(len(ok) / secs, 2),
           "ack_ms": {"p50": bl.pct(lat, 50), "p90": bl.pct(lat, 90), "p99": bl.pct(lat, 99), "max": max(lat) if lat else None}}
    json.dump(out, open(jout, "w"), indent=1)

def d(a, b, *path):
    for k in path:
        a = (a or {}).get(k); b = (b or {}).get(k)
    if a is None or b is None:
        return None
    return b - a

def run_figures(out, name):
    """the figures of one run from its before/after snapshots and tools' JSON"""
    b = json.load(open("%s/%s/before.json" % (out, name))); a = json.load(open("%s/%s/after.json" % (out, name)))
    ing = json.load(open("%s/%s/ingest.json" % (out, name)))
    f = {"name": name, "ingest_rps": ing["reports_per_s"], "ingested": ing["accepted"], "ack_p50": ing["ack_ms"]["p50"],
         "ack_p99": ing["ack_ms"]["p99"], "ingest_errors": ing["errors"], "exhausted": ing["exhausted"]}
    qf = "%s/%s/queries.json" % (out, name)
    c = json.load(open(qf))["concurrent"] if os.path.exists(qf) else None
    if c:
        f.update(qps=c["requests_per_s"], q_p50=c["lat_ms"]["p50"], q_p99=c["lat_ms"]["p99"],
                 q_bad=c["non200"] + sum(c["errors"].values()) if c["errors"] else c["non200"])
    wall = a["t"] - b["t"]
    f["wall"] = wall
    for role in ("primary", "replica"):
        f["rdb_%s_s" % role] = d(b.get("metrics", {}).get(role, {"seconds": 0}), a.get("metrics", {}).get(role), "seconds") or 0.0
        f["rdb_%s_n" % role] = d(b.get("metrics", {}).get(role, {"queries": 0}), a.get("metrics", {}).get(role), "queries") or 0
    tot = f["rdb_primary_s"] + f["rdb_replica_s"]
    f["rdb_share_primary"] = f["rdb_primary_s"] / tot if tot else None
    for srv in ("primary", "standby"):
        f["pg_%s_active" % srv] = d(b["pg"], a["pg"], srv, "active_s")
        f["pg_%s_xact" % srv] = d(b["pg"], a["pg"], srv, "xact_commit")
        f["cpu_%s" % srv] = d(b["cpu"], a["cpu"], srv)
    f["cpu_reportdb"] = d(b["cpu"], a["cpu"], "reportdb")
    f["cpu_clients"] = d(b["cpu"], a["cpu"], "driver") - f["cpu_reportdb"]
    f["cpu_other"] = d(b["cpu"], a["cpu"], "busy") - f["cpu_primary"] - f["cpu_standby"] - f["cpu_reportdb"] - f["cpu_clients"]
    f["busy_cores"] = d(b["cpu"], a["cpu"], "busy") / wall
    lagf = "%s/%s/lag.txt" % (out, name)
    if os.path.exists(lagf):
        s = [l.split() for l in open(lagf) if len(l.split()) == 2]
        f["lag_max"] = max((float(x[0]) for x in s), default=None)
        f["out_of_rotation"] = sum(1 for x in s if x[1] != "1"); f["lag_samples"] = len(s)
    f["slow_queries"], f["log_problems"] = (int(x) for x in open("%s/%s/log_problems" % (out, name)).read().split())
    return f

def fmt(v, p=1):
    if v is None:
        return "-"
    if isinstance(v, float):
        return "%.*f" % (p, v)
    return str(v)

def summary(args):
    out, rounds = args[0], int(args[1])
    alone = {c: run_figures(out, "alone-" + c) for c in "AB"}
    runs = {(r, c): run_figures(out, "r%d-%s" % (r, c)) for r in range(1, rounds + 1) for c in "AB"}
    cols = [("ingest rep/s", "ingest_rps", 0), ("ack p50 ms", "ack_p50", 1), ("ack p99 ms", "ack_p99", 1),
            ("queries/s", "qps", 0), ("q p50 ms", "q_p50", 1), ("q p99 ms", "q_p99", 1),
            ("rdb s primary", "rdb_primary_s", 1), ("rdb s replica", "rdb_replica_s", 1), ("share primary", "rdb_share_primary", 3),
            ("PG active s primary", "pg_primary_active", 1), ("PG active s standby", "pg_standby_active", 1),
            ("PG xacts primary", "pg_primary_xact", 0), ("PG xacts standby", "pg_standby_xact", 0),
            ("CPU s primary", "cpu_primary", 1), ("CPU s standby", "cpu_standby", 1), ("CPU s reportdb", "cpu_reportdb", 1),
            ("CPU s load generators", "cpu_clients", 1), ("CPU s rest of machine", "cpu_other", 1), ("busy cores", "busy_cores", 2), ("replica lag max s", "lag_max", 2), ("out of rotation s", "out_of_rotation", 0),
            ("query errors", "q_bad", 0), ("ingest errors", "ingest_errors", 0), ("slow queries logged", "slow_queries", 0),
            ("other log warn/error", "log_problems", 0)]
    def table(title, rows):
        print(title)
        w = max(len(c[0]) for c in cols)
        print("  %-*s" % (w, "") + "".join("%14s" % h for h, _ in rows))
        for label, key, p in cols:
            print("  %-*s" % (w, label) + "".join("%14s" % fmt(f.get(key), p) for _, f in rows))
        for _, f in rows:
            if f.get("exhausted"):
                print("  WARNING %s: the preloaded probe reports ran out before the end (raise INGEST_MAX_RATE)" % f["name"])
        print()
    table("== ingest alone (no queries), %s" % "one run per configuration", [("A: 0 repl.", alone["A"]), ("B: 1 repl.", alone["B"])])
    for r in range(1, rounds + 1):
        table("== round %d: queries + ingest" % r, [("A: 0 repl.", runs[(r, "A")]), ("B: 1 repl.", runs[(r, "B")])])

    def tot(c, key):
        return sum(runs[(r, c)][key] or 0 for r in range(1, rounds + 1))
    def mean(c, key):
        v = [runs[(r, c)][key] for r in range(1, rounds + 1) if runs[(r, c)].get(key) is not None]
        return statistics.mean(v) if v else None
    print("== summary (%d round%s; sums and means over the rounds)" % (rounds, "s" if rounds > 1 else ""))
    share = {}
    for c in "AB":
        p, rp = tot(c, "rdb_primary_s"), tot(c, "rdb_replica_s")
        share[c] = p / (p + rp) if p + rp else None
    print("share of reportdb's query time on the primary:  0 replicas %s   1 replica %s" % (
        fmt(share["A"] * 100 if share["A"] is not None else None) + " %", fmt(share["B"] * 100 if share["B"] is not None else None) + " %"))
    print("  (read transactions: A %d on the primary; B %d on the primary, %d on the replica)" % (
        tot("A", "rdb_primary_n"), tot("B", "rdb_primary_n"), tot("B", "rdb_replica_n")))
    out_s, samples = tot("B", "out_of_rotation"), tot("B", "lag_samples")
    lagmax = max((runs[(r, "B")].get("lag_max") or 0) for r in range(1, rounds + 1))
    print("  (B: the replica was out of rotation %d of %d seconds sampled, its replay up to %.0f s behind the primary"
          " with max-replica-lag %s: the primary answered the reads meanwhile)" % (out_s, samples, lagmax, os.environ.get("MAX_REPLICA_LAG", "5s")))
    # PostgreSQL's side: the primary's active time and commits also hold the ingest's writes
    for c in "AB":
        pa, sa, ing = tot(c, "pg_primary_active"), tot(c, "pg_standby_active"), tot(c, "ingested")
        print("PostgreSQL, %s: primary active %.1f s (%.2f ms an ingested report), %d commits; standby active %.1f s, %d commits"
              % ("0 replicas" if c == "A" else "1 replica ", pa, 1000 * pa / ing if ing else 0, tot(c, "pg_primary_xact"),
                 sa, tot(c, "pg_standby_xact")))
    cp = {c: (tot(c, "cpu_primary"), tot(c, "cpu_standby")) for c in "AB"}
    print("share of the two clusters' CPU on the primary:  0 replicas %s %%   1 replica %s %%" % tuple(
        fmt(100 * cp[c][0] / sum(cp[c]) if sum(cp[c]) else None) for c in "AB"))
    print("  (active time is the statements' wall-clock time: with both CPUs busy, waiting for a CPU counts too, so the")
    print("  CPU seconds are the work; ingest alone, primary active a report: A %.2f ms, B %.2f ms; the standby's commits"
          " are reportdb's reads there plus its lag checks, one a second)" % tuple(
              1000 * (alone[c]["pg_primary_active"] or 0) / alone[c]["ingested"] if alone[c]["ingested"] else 0 for c in "AB"))
    print("ingest reports/s:  queries on the primary (A) %s   queries on the replica (B) %s   no queries: A %s, B %s" % (
        fmt(mean("A", "ingest_rps"), 0), fmt(mean("B", "ingest_rps"), 0), fmt(alone["A"]["ingest_rps"], 0), fmt(alone["B"]["ingest_rps"], 0)))
    print("ack p99 ms:        A %s   B %s   no queries: A %s, B %s" % (
        fmt(mean("A", "ack_p99")), fmt(mean("B", "ack_p99")), fmt(alone["A"]["ack_p99"]), fmt(alone["B"]["ack_p99"])))
    print("query mix:         A %s q/s (p50 %s ms, p99 %s ms)   B %s q/s (p50 %s ms, p99 %s ms)" % (
        fmt(mean("A", "qps"), 0), fmt(mean("A", "q_p50")), fmt(mean("A", "q_p99")),
        fmt(mean("B", "qps"), 0), fmt(mean("B", "q_p50")), fmt(mean("B", "q_p99"))))
    for c in "AB":
        print("CPU s a run, %s: primary %s, standby %s, reportdb %s, load generators %s, rest %s; machine busy %s of %d cores" % (
            "0 replicas" if c == "A" else "1 replica ", fmt(mean(c, "cpu_primary")), fmt(mean(c, "cpu_standby")),
            fmt(mean(c, "cpu_reportdb")), fmt(mean(c, "cpu_clients")), fmt(mean(c, "cpu_other")), fmt(mean(c, "busy_cores"), 2), os.cpu_count()))
    print()
    print("One machine: the primary, the standby, reportdb and the load generators share the same %d CPUs," % os.cpu_count())
    print("so the replica cannot add capacity; it only moves the reads' work from the primary's")
    print("postmaster to the standby's. The figures show what moves, not what a replica on its own")
    print("machine would add. The standby replays the primary's WAL in both configurations.")
    json.dump({"alone": alone, "rounds": {"%d-%s" % k: v for k, v in runs.items()}}, open(out + "/figures.json", "w"), indent=1)

if __name__ == "__main__":
    {"snap": snap, "ingest": ingest, "summary": summary}[sys.argv[1]](sys.argv[2:])
EOF
rr() { python3 "$OUT/rr.py" "$@"; }

# ---- 1. the clusters
pg_start() { # pg_start DIR: start the cluster and wait until it accepts connections
  as_pg "$PG_BINDIR/pg_ctl" -D "$1" -l "$1/server.log" -w -t 120 start >/dev/null
}
log "primary on $PRIMARY_PORT, standby on $STANDBY_PORT, in $PGW"
rm -rf "$PGW"; mkdir -p "$PGW"
if [[ $(id -u) == 0 ]]; then chown postgres:postgres "$PGW"; fi
as_pg "$PG_BINDIR/initdb" -D "$PDIR" -U postgres --auth-local=trust --auth-host=trust \
  --encoding=UTF8 --locale=C.UTF-8 >/dev/null
{
  echo "listen_addresses = '127.0.0.1'"
  echo "port = $PRIMARY_PORT"
  echo "unix_socket_directories = '$PGW'"
  echo "max_connections = 300"
  echo "logging_collector = off"
  echo "cluster_name = 'replicas-primary'"
  if [[ -n "${PG_CONF:-}" ]]; then printf '%s\n' "$PG_CONF" | tr ';' '\n'; fi
} | as_pg tee -a "$PDIR/postgresql.conf" >/dev/null
pg_start "$PDIR"
DB=postgres psql_p -c "CREATE DATABASE reportdb_base" >/dev/null
as_pg "$PG_BINDIR/pg_basebackup" -h 127.0.0.1 -p "$PRIMARY_PORT" -U postgres -D "$SDIR" -R -X stream -c fast
{
  echo "port = $STANDBY_PORT"
  echo "hot_standby = on"
  echo "hot_standby_feedback = on"
  echo "cluster_name = 'replicas-standby'"
} | as_pg tee -a "$SDIR/postgresql.conf" >/dev/null
pg_start "$SDIR"
[[ $(DB=postgres psql_s -c "SELECT pg_is_in_recovery()") == t ]] || { echo "the standby is not in recovery" >&2; exit 1; }
ppid_pg() { head -1 "$1/postmaster.pid"; }
PPID_P=$(ppid_pg "$PDIR"); PPID_S=$(ppid_pg "$SDIR")

caught_up() { # wait until the standby has replayed all the primary has written
  local target DB=postgres
  target=$(psql_p -c "SELECT pg_current_wal_lsn()")
  for _ in $(seq 1200); do
    [[ $(psql_s -c "SELECT pg_wal_lsn_diff(pg_last_wal_replay_lsn(), '$target') >= 0") == t ]] && return 0
    sleep 0.5
  done
  echo "the standby did not catch up in 10 minutes" >&2; return 1
}

# ---- 2. the medium fleet
if [[ ! -s "$FLEET" ]]; then log "generating $FLEET"; python3 "$BENCH/fleet.py" --scale medium --out "$FLEET" --quiet; fi
log "importing $(basename "$FLEET") into the primary"
t0=$(date +%s)
"$BIN" import --database "$BURL" --progress lines --progress-interval 30s "$FLEET" > "$OUT/import.log" 2>&1 \
  || { cat "$OUT/import.log" >&2; exit 1; }
import_s=$(( $(date +%s) - t0 ))
DB=postgres psql_p -c CHECKPOINT >/dev/null
t0=$(date +%s); caught_up; replay_s=$(( $(date +%s) - t0 ))
base_reports=$(DB=reportdb_base psql_s -c "SELECT count(*) FROM reports")
base_size=$(DB=reportdb_base psql_p -c "SELECT pg_size_pretty(pg_database_size('reportdb_base'))")
log "imported in ${import_s}s, the standby caught up ${replay_s}s later ($base_reports reports there, $base_size)"
reset_db() { # a fresh copy of the imported fleet as reportdb, on the standby too
  DB=postgres PGOPTIONS="-c client_min_messages=warning" psql_p -c "DROP DATABASE IF EXISTS reportdb WITH (FORCE)" -c "CREATE DATABASE reportdb TEMPLATE reportdb_base" >/dev/null
  psql_p -c CHECKPOINT >/dev/null
  caught_up
}

# ---- probe files: PROBE_RUNS runs of the 1,000 nodes each, consecutive windows
probe_files=()   # FILE:COUNT
probe_total=0
ensure_probe() { # ensure_probe N: probe files holding at least N reports
  local k end f n
  while (( probe_total < $1 )); do
    k=${#probe_files[@]}
    end=$(date -u -d "$PROBE_START + $(( (k + 1) * PROBE_RUNS * 30 )) minutes" +%FT%TZ)
    f=$DATA/probe-s$PROBE_SEED-${PROBE_NODES}n-${PROBE_RUNS}r-${end//:/}.jsonl.gz
    if [[ ! -s $f || ! -s $f.manifest.json ]]; then
      log "generating probe file $(basename "$f")"
      python3 "$BENCH/fleet.py" --nodes "$PROBE_NODES" --runs "$PROBE_RUNS" --seed "$PROBE_SEED" --end "$end" --out "$f" --quiet
    fi
    n=$(python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['truth']['reports'])" "$f.manifest.json")
    probe_files+=("$f:$n"); probe_total=$((probe_total + n))
  done
}
max_rate=$INGEST_MAX_RATE

# ---- 3. a run
serve() { # serve CONFIG DIR: reportdb on the primary (A) or with the standby (B); pid in $spid
  local args=(serve --listen "127.0.0.1:$PORT" --database "$PURL" --report-ttl 0 --node-ttl 0
    --data-dir "$2/data" --max-replica-lag "$MAX_REPLICA_LAG")
  [[ $1 == B ]] && args+=(--read-database "$SURL")
  # shellcheck disable=SC2086
  "$BIN" "${args[@]}" ${SERVE_FLAGS:-} > "$2/server.log" 2>&1 &
  spid=$!
  for _ in $(seq 300); do curl -sf "$URL/pdb/meta/v1/version" >/dev/null && break; sleep 0.2; done
  for _ in $(seq 1500); do
    curl -sf "$URL/metrics" | grep -q '^reportdb_fleet_state_loaded_timestamp_seconds [1-9]' && return 0
    sleep 0.2
  done
  echo "reportdb did not load its fleet state" >&2; cat "$2/server.log" >&2; return 1
}
run() { # run NAME CONFIG MODE(mix|alone)
  local name=$1 cfg=$2 mode=$3 dir=$OUT/$1 maxn
  mkdir -p "$dir"
  maxn=$(( max_rate * DURATION + 1000 ))
  ensure_probe "$maxn"
  log "$name: config $cfg, $mode, ${DURATION}s (preloading $maxn probe reports)"
  reset_db
  psql_p -c "SELECT count(*) FROM reports" > "$dir/reports_before"
  serve "$cfg" "$dir"
  python3 "$OUT/rr.py" ingest "$BENCH" "$URL" 0 "$maxn" "$INGEST_CONC" "$DURATION" "$dir/ready" "$dir/go" "$dir/ingest.json" \
    "${probe_files[@]}" 2> "$dir/ingest.err" &
  ipid=$!
  while [[ ! -e $dir/ready ]]; do kill -0 $ipid 2>/dev/null || { cat "$dir/ingest.err" >&2; return 1; }; sleep 0.2; done
  if [[ $mode == mix ]]; then
    python3 "$BENCH/queries.py" "$URL" --fleet "$FLEET" -k 1 --warmup 0 -c "$QUERY_CONC" -d "$DURATION" --engine python \
      --json-out "$dir/queries.json" > "$dir/queries.txt" 2> "$dir/queries.err" &
    qpid=$!
    until grep -q "concurrent phase" "$dir/queries.err" 2>/dev/null; do
      kill -0 $qpid 2>/dev/null || { cat "$dir/queries.err" >&2; return 1; }; sleep 0.05
    done
  fi
  rr snap "$dir/before.json" "cpu=$PPID_P,$PPID_S,$spid,$$" "metrics=$URL" "pg=$PURL,$SURL"
  touch "$dir/go"
  if [[ $cfg == B ]]; then
    (while :; do curl -s "$URL/metrics" | awk '/^reportdb_database_replica_lag_seconds/ { l = $2 }
       /^reportdb_database_replica_in_rotation/ { r = $2 } END { print l, r }'; sleep 1; done) > "$dir/lag.txt" &
    lpid=$!
  fi
  wait $ipid || { cat "$dir/ingest.err" >&2; return 1; }; ipid=
  if [[ -n $qpid ]]; then wait $qpid || true; qpid=; fi
  rr snap "$dir/after.json" "cpu=$PPID_P,$PPID_S,$spid,$$" "metrics=$URL"
  if [[ -n $lpid ]]; then kill $lpid; wait $lpid 2>/dev/null || true; lpid=; fi
  curl -s "$URL/status/v1/services/reportdb-databases" > "$dir/databases.json" || true
  kill $spid; wait $spid || true; spid=
  sleep 1 # the backends' statistics are flushed when they exit
  rr snap "$dir/after.json" "pg=$PURL,$SURL"
  # slow-query warnings, and every other warning or error
  echo "$(grep -c 'msg="slow query"' "$dir/server.log" || true) $(grep -iE 'level=(warn|error)|[0-9] (WARN|ERROR) |panic' "$dir/server.log" | grep -vc 'msg="slow query"' || true)" > "$dir/log_problems"
  local rate
  rate=$(python3 -c "import json, sys; print(int(json.load(open(sys.argv[1]))['reports_per_s']))" "$dir/ingest.json")
  if [[ $name == alone-* ]] || (( rate * 3 / 2 > max_rate )); then max_rate=$(( rate * 3 / 2 > 200 ? rate * 3 / 2 : 200 )); fi
  psql_p -c "SELECT count(*) FROM reports" > "$dir/reports_after"
  log "$name: $rate reports/s ingested$( [[ $mode == mix ]] && grep -o 'concurrent.*' "$dir/queries.txt" | sed 's/^/, /')"
}

start_date=$(date -u +%FT%TZ); start_s=$(date +%s); load0=$(cut -d' ' -f1-3 /proc/loadavg)
run alone-A A alone
run alone-B B alone
for r in $(seq "$ROUNDS"); do
  run "r$r-A" A mix
  run "r$r-B" B mix
done
end_date=$(date -u +%FT%TZ); elapsed=$(( $(date +%s) - start_s )); load1=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- 5. the results
{
  PG="postgres://postgres@127.0.0.1:$PRIMARY_PORT" header "Read replicas on one machine: the query mix and ingest with 0 and 1 PostgreSQL hot standby (replicas.sh)" "$BIN"
  echo "clusters: a primary on :$PRIMARY_PORT and a streaming hot standby of it on :$STANDBY_PORT (pg_basebackup -R -X stream, asynchronous, hot_standby_feedback on), both on this machine"
  echo "fleet:    $(basename "$FLEET") ($base_reports reports, $base_size) imported into the primary in ${import_s}s (the standby caught up ${replay_s}s later);"
  echo "          each run starts from a copy of it (CREATE DATABASE ... TEMPLATE, replayed by the standby) and adds what it ingests"
  echo "          (reports at the end of each run: $(for d in "$OUT"/*/reports_after; do echo -n "$(basename "$(dirname "$d")") $(cat "$d"), "; done | sed 's/, $//'))"
  echo "probe:    fleet.py --nodes $PROBE_NODES --seed $PROBE_SEED, files of $PROBE_RUNS runs from $PROBE_START, the same reports in every run"
  echo "runs:     $start_date to $end_date ($((elapsed / 60)) min; load average $load0 before, $load1 after); ${DURATION}s each:"
  echo "          ingest alone in A then B, then $ROUNDS round$( ((ROUNDS > 1)) && echo s) A B"
  echo "          A = reportdb serve --database primary; B = the same with --read-database standby --max-replica-lag $MAX_REPLICA_LAG"
  echo "load:     queries.py -k 1 --warmup 0 -c $QUERY_CONC -d $DURATION --engine python (the whole mix) while the probe fleet is posted at $INGEST_CONC connections"
  echo "          (the kit's ingest.py code, closed loop, --acknowledge commit); ingest alone: the same posting without queries"
  echo "measured: rdb s = reportdb_database_query_seconds_total by role (the reads reportdb timed); PG active s / xacts ="
  echo "          pg_stat_database.active_time / xact_commit of the database on each server (on the primary they include the"
  echo "          ingest's writes; active_time is the client backends' statement time only, no parallel workers, WAL"
  echo "          sender or replay, so it is below the CPU); reportdb's read time also holds the time rows spend in reportdb;"
  echo "          CPU s = utime+stime of each postmaster's processes (exited ones through cutime/cstime), of reportdb, of the"
  echo "          load generators (this script's other processes); rest of machine = the machine's busy time (/proc/stat,"
  echo "          without steal) less all those: other work on the machine; lag sampled once a second from /metrics"
  echo
  rr summary "$OUT" "$ROUNDS"
} > "$OUT/replicas.txt"
cp "$OUT/replicas.txt" "$result"
cat "$result"
log "wrote $result"
