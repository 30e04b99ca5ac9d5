#!/usr/bin/env python3
"""fleet-days.py - nested N-day windows of one fleet, generated in one pass.

    fleet-days.py --nodes 1000 --days 1,7,14 --outdir DIR [--fleet-py PATH]

Generates the fleet of the reference kit's bench/fleet.py for the longest
window (max(days) x 24h of runs every --interval minutes, ending at --end),
and writes, for every D in --days, DIR/fleet-<NODES>n-<D>d.jsonl.gz with the
runs that start in the last D days, plus its manifest
(DIR/fleet-<NODES>n-<D>d.jsonl.gz.manifest.json, the format queries.py
reads).

Why not `fleet.py --runs D*48` for each D: fleet.py seeds run k of a node by
its index from the start of the window, so the 1-day fleet's last day is
statistically like, but not the same as, the 14-day fleet's last day (other
events, other waves, other provisioned/decommissioned nodes). Here the D-day
file is exactly what a server keeping D days of the longest fleet would hold:
the same latest reports, the same last-hour failures, the same last day, so
the queries of the mix ask the same questions and get the same answers on
every window, and only the amount of older history differs.

The longest window's file is byte-identical to
`fleet.py --nodes N --runs max(days)*48 --out FILE.jsonl.gz`, and its manifest
has the same truth. In every window's manifest, sample_nodes are those of the
longest window (nodes present from its first run to its last), so queries.py
picks the same "one node" everywhere; reports and the latest-report truths
are the window's own.

Files that already exist (with their manifest) are kept: if every requested
window exists, nothing is generated. Partial output is written under
temporary names and renamed at the end.
"""

import argparse
import gzip
import importlib.util
import io
import json
import os
import sys
import time


def load_fleet(path):
    spec = importlib.util.spec_from_file_location("fleet", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def open_gz(path):
    raw = open(path, "wb")
    # the same settings as fleet.py, so that the longest window is byte-identical
    gz = gzip.GzipFile(filename="", mode="wb", compresslevel=4, fileobj=raw, mtime=0)
    fh = io.TextIOWrapper(gz, encoding="utf-8")
    return raw, gz, fh


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, required=True)
    ap.add_argument("--days", default="1,7,14", help="comma-separated window lengths in days (1,7,14)")
    ap.add_argument("--interval", type=float, default=30.0, help="minutes between runs (30)")
    ap.add_argument("--end", default=None, help="fixed end of the window (fleet.py's default)")
    ap.add_argument("--seed", default=None, help="fleet.py's seed (its default)")
    ap.add_argument("--outdir", required=True)
    ap.add_argument("--fleet-py", default=os.environ.get("FLEET_PY", os.path.join(
        os.environ.get("REPORTDB_SHARED", os.path.join(here, "..", "..", "shared")), "bench", "fleet.py")))
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args()

    fl = load_fleet(args.fleet_py)
    end = args.end or fl.DEFAULT_END
    seed = args.seed if args.seed is not None else str(fl.DEFAULT_SEED)
    days = sorted({int(d) for d in args.days.split(",") if d.strip()})
    if not days or days[0] < 1:
        raise SystemExit("fleet-days.py: --days needs positive integers")
    per_day = 24 * 60 / args.interval
    if per_day != int(per_day):
        raise SystemExit("fleet-days.py: --interval must divide a day")
    per_day = int(per_day)
    n_runs = days[-1] * per_day
    os.makedirs(args.outdir, exist_ok=True)

    def name(d):
        return os.path.join(args.outdir, "fleet-%dn-%dd.jsonl.gz" % (args.nodes, d))

    todo = [d for d in days if not (os.path.exists(name(d)) and os.path.exists(name(d) + ".manifest.json"))]
    if not todo:
        if not args.quiet:
            print("fleet-days: reusing %s" % ", ".join(name(d) for d in days), file=sys.stderr)
        return
    if not args.quiet:
        print("fleet-days: generating %d nodes x %d runs, writing the %s-day windows" % (
            args.nodes, n_runs, ",".join(map(str, todo))), file=sys.stderr)

    t0 = time.time()
    interval_ms = int(args.interval * 60000)
    end_ms = fl.parse_time(end)
    nodes = fl.make_nodes(seed, args.nodes, n_runs, interval_ms)
    waves = fl.waves_for(seed, n_runs, nodes)
    outs = []  # (days, first run index, truth, (raw, gz, fh), tmp path)
    for d in todo:
        tmp = name(d) + ".partial"
        outs.append((d, n_runs - d * per_day, fl.Truth(), open_gz(tmp), tmp))
    order = sorted(nodes, key=lambda n: (n.splay_ms, n.idx))
    count = 0
    for k in range(n_runs):
        active = [o for o in outs if k >= o[1]]
        if not active:
            continue
        for nd in order:
            if k < nd.first_run or k > nd.last_run:
                continue
            m = fl.gen_run(nd, k, end_ms, n_runs, interval_ms, waves, "notice")
            data = json.dumps(fl.to_wire_v8(m), separators=(",", ":"))
            for o in active:
                o[2].add(m, len(data))
                o[3][2].write(data)
                o[3][2].write("\n")
            count += 1
            if not args.quiet and count % 20000 == 0:
                print("fleet-days: %d reports (%.0f/s)" % (count, count / (time.time() - t0)), file=sys.stderr)

    # sample nodes as fleet.py picks them for the longest window: nodes present
    # from its first run to its last, whose latest report (the same in every
    # window) has events
    latest = outs[-1][2].latest
    samples = []
    for nd in nodes:
        lt = latest.get(nd.certname)
        if lt and sum(lt[2].values()) > 0 and nd.last_run == n_runs - 1 and nd.first_run == 0:
            samples.append(nd.certname)
        if len(samples) >= 10:
            break
    if not samples:
        samples = [n.certname for n in nodes[:3]]

    secs = round(time.time() - t0, 2)
    for d, k0, truth, (raw, gz, fh), tmp in outs:
        fh.close()
        raw.close()
        summ = truth.summary()
        runs = d * per_day
        present = [n for n in nodes if n.last_run >= k0]
        manifest = {
            "generator": "fleet.py (window of fleet-days.py)",
            "format": "wire",
            "scale": "custom",
            "seed": seed,
            "nodes": len(present),
            "fleet_nodes": args.nodes,
            "runs_per_node": runs,
            "fleet_runs_per_node": n_runs,
            "window_days": d,
            "interval_minutes": args.interval,
            "end": fl.iso(end_ms),
            "window_start": fl.iso(end_ms - runs * interval_ms),
            "log_level": "notice",
            "sample_nodes": samples,
            "roles": {r: sum(1 for n in present if n.role == r) for r, _ in fl.ROLES},
            "catalog_size": {"min": min(len(n.catalog) for n in nodes), "max": max(len(n.catalog) for n in nodes),
                             "mean": round(sum(len(n.catalog) for n in nodes) / len(nodes), 1)},
            "noop_nodes": sum(1 for n in present if n.noop_node),
            "late_nodes": sum(1 for n in present if n.first_run > k0),
            "gone_nodes": sum(1 for n in present if n.last_run < n_runs - 1),
            "truth": summ,
            "generated_seconds": secs,
            "data": os.path.basename(name(d)),
        }
        os.replace(tmp, name(d))
        with open(name(d) + ".manifest.json", "w") as f:
            json.dump(manifest, f, indent=1, sort_keys=True)
        if not args.quiet:
            print("fleet-days: %s: %d reports, %d events (%.1f MB uncompressed)" % (
                name(d), summ["reports"], summ["events"], summ["bytes_uncompressed"] / 1e6), file=sys.stderr)
    if not args.quiet:
        print("fleet-days: %d reports generated in %.1fs" % (count, secs), file=sys.stderr)


if __name__ == "__main__":
    main()
