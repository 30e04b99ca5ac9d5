#!/usr/bin/env python3
"""dashboard-timing.py URL [--runs N] - server time and size of each dashboard page.

Picks sample pages from the server's own API (a busy node, its latest report,
the most frequently failing resource), loads each page --warmup times, then
--runs times over one keep-alive connection, and prints p50/p90 of the time to
the last byte (loopback: that is the server time plus a few tens of
microseconds) and the HTML size. Also times /metrics. Python stdlib only.

Writes the table to stdout and to bench/results/dashboard-timing.txt (--out),
after the date, the machine, the commit and what the server holds.
"""
import argparse, datetime, http.client, json, os, platform, statistics, subprocess, sys, time, urllib.parse


class Tee:
    def __init__(self, *files):
        self.files = files

    def write(self, s):
        for f in self.files:
            f.write(s)

    def flush(self):
        for f in self.files:
            f.flush()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=2)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--out", default=os.path.join(here, "results", "dashboard-timing.txt"))
    a = ap.parse_args()
    sys.stdout = Tee(sys.stdout, open(a.out, "w"))
    commit = subprocess.run(["git", "-C", here, "describe", "--always", "--dirty"],
                            capture_output=True, text=True).stdout.strip() or "unknown"
    print("# Dashboard pages: time to the last byte and size (dashboard-timing.py)")
    print("date:    " + datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"))
    print("machine: %d CPUs, %s" % (os.cpu_count(), platform.platform()))
    print("code:    checkout %s (the server measured is at %s)" % (commit, a.url))
    u = urllib.parse.urlparse(a.url)
    conn = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=300)

    def get(path, headers=None):
        conn.request("GET", path, headers=headers or {})
        r = conn.getresponse()
        body = r.read()
        return r.status, body

    def api(q, **params):
        params["query"] = json.dumps(q)
        st, body = get("/pdb/query/v4?" + urllib.parse.urlencode(params))
        if st != 200:
            sys.exit(f"API {st}: {body[:300]!r}")
        return json.loads(body)

    print("holds:   %s nodes" % api(["from", "nodes", ["extract", [["function", "count"]]]])[0]["count"])
    print()
    newest = api(["from", "reports", ["extract", ["certname", "hash", "producer_timestamp"]]],
                 order_by=json.dumps([{"field": "producer_timestamp", "order": "desc"}]), limit=1)[0]
    node = newest["certname"]
    failed = api(["from", "reports", ["extract", ["hash", "certname"], ["=", "status", "failed"]]],
                 order_by=json.dumps([{"field": "producer_timestamp", "order": "desc"}]), limit=1)
    rep = failed[0]["hash"] if failed else newest["hash"]
    ev = api(["from", "events", ["extract", ["resource_type", "resource_title"], ["=", "status", "failure"]]],
             order_by=json.dumps([{"field": "timestamp", "order": "desc"}]), limit=1)
    res = ev[0] if ev else {"resource_type": "File", "resource_title": "/etc/motd"}
    q = urllib.parse.quote
    pages = [
        "/ui/",
        "/ui/nodes",
        "/ui/nodes?status=failed",
        "/ui/nodes?status=changed&sort=time&order=desc",
        "/ui/nodes?q=web&page=3",
        "/ui/nodes?q=" + q("^db0[0-9]") + "&regex=1",
        "/ui/nodes?page=150",
        "/ui/node/" + q(node, safe=""),
        "/ui/report/" + rep,
        "/ui/resource?" + urllib.parse.urlencode({"type": res["resource_type"], "title": res["resource_title"]}),
        "/ui/events",
        "/ui/events?status=failure",
        "/ui/events?status=failure&page=20",
        "/ui/events?type=Service&since=24h",
        "/metrics",
    ]
    print(f"{'page':70} {'p50 ms':>8} {'p90 ms':>8} {'max ms':>8} {'KB':>8}  (runs={a.runs})")
    for p in pages:
        size = 0
        for _ in range(a.warmup):
            st, body = get(p)
            if st != 200:
                print(f"{p}: {st} {body[:200]!r}")
                break
        ts = []
        for _ in range(a.runs):
            t0 = time.perf_counter()
            st, body = get(p)
            ts.append((time.perf_counter() - t0) * 1000)
            size = len(body)
        ts.sort()
        p90 = ts[min(len(ts) - 1, int(len(ts) * 0.9))]
        print(f"{p[:70]:70} {statistics.median(ts):8.1f} {p90:8.1f} {ts[-1]:8.1f} {size/1024:8.1f}")


if __name__ == "__main__":
    main()
