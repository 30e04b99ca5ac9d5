#!/usr/bin/env python3
"""table.py LABEL=queries.json ... : p50 / p95 per query side by side, then the concurrent phase."""
import json, sys
cols = []
for a in sys.argv[1:]:
    label, path = a.split("=", 1)
    cols.append((label, json.load(open(path))))
names = [q["name"] for q in cols[0][1]["queries"]]
print("| query | " + " | ".join(l for l, _ in cols) + " |")
print("|---|" + "---:|" * len(cols))
for n in names:
    cells = []
    for _, j in cols:
        q = next((q for q in j["queries"] if q["name"] == n), None)
        cells.append("%.1f / %.1f" % (q["p50_ms"], q["p95_ms"]) if q else "")
    print("| %s | %s |" % (n, " | ".join(cells)))
cells = []
for _, j in cols:
    c = j.get("concurrent") or {}
    cells.append("%.1f req/s, p99 %.0f ms" % (c["requests_per_s"], c["lat_ms"]["p99"]) if c.get("requests_per_s") else "")
print("| concurrent (8 conns) | %s |" % " | ".join(cells))
