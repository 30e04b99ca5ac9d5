#!/usr/bin/env python3
"""plot-days.py - query latency against days of reports kept, as an SVG.

    plot-days.py RESULTS.json [MORE_RESULTS.json...] --out FILE.svg [--metric p50|p95]
    plot-days.py RESULTS.json [MORE...] --table          (a Markdown table instead)

RESULTS.json is what bench/days.sh wrote (bench/results/days-<N>n.json). One line
per query of the bench mix: x = days kept, y = latency in ms (log scale).
With several result directories (e.g. before and after a change), the first is
drawn solid and the others dashed / dotted, same colour per query, so each
query's before and after sit side by side. Python standard library only.
"""

import argparse
import html
import json
import math
import os
import sys

# 20 distinguishable colours (Tableau 20, darker shades first)
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94",
           "#f7b6d2", "#c7c7c7", "#dbdb8d", "#9edae5"]
DASHES = ["", "6,4", "2,3", "8,3,2,3"]
MARKERS = ["circle", "square", "triangle", "diamond"]


def load(d):
    p = d if d.endswith(".json") else os.path.join(d, "summary.json")
    with open(p) as f:
        return json.load(f)


def series(summary, metric):
    """{query: [(days, ms), ...]} in the mix's order."""
    out = {}
    for run in summary["runs"]:
        for q in run["queries"]:
            out.setdefault(q["name"], []).append((run["days"], q[metric + "_ms"], q["ok"]))
    return out


def marker(kind, x, y, colour):
    r = 3.2
    if kind == "circle":
        return '<circle cx="%.1f" cy="%.1f" r="%.1f" fill="%s"/>' % (x, y, r, colour)
    if kind == "square":
        return '<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>' % (x - r, y - r, 2 * r, 2 * r, colour)
    if kind == "triangle":
        return '<path d="M%.1f,%.1f L%.1f,%.1f L%.1f,%.1f Z" fill="%s"/>' % (
            x, y - r - 0.8, x - r - 0.5, y + r, x + r + 0.5, y + r, colour)
    return '<path d="M%.1f,%.1f L%.1f,%.1f L%.1f,%.1f L%.1f,%.1f Z" fill="%s"/>' % (
        x, y - r - 1, x + r + 1, y, x, y + r + 1, x - r - 1, y, colour)


def svg(summaries, metric, title):
    sets = [series(s, metric) for s in summaries]
    names = []
    for st in sets:
        for n in st:
            if n not in names:
                names.append(n)
    # colours and legend in the order of the first set's values at the most days
    # kept, slowest first, so that the legend reads like the right edge of the plot
    last = {n: max(sets[0].get(n, [(0, 0, True)]))[1] or 0 for n in names}
    names.sort(key=lambda n: -last[n])
    days = sorted({d for st in sets for pts in st.values() for d, _, _ in pts})
    vals = [v for st in sets for pts in st.values() for _, v, _ in pts if v and v > 0]
    lo = 10 ** math.floor(math.log10(min(vals)))
    hi = 10 ** math.ceil(math.log10(max(vals)))
    if hi <= lo:
        hi = lo * 10

    W, H = 980, 560
    L, R, T, B = 70, 300, 46, 56          # plot margins; the legend sits right
    pw, ph = W - L - R, H - T - B
    span = (max(days) - min(days)) or 1
    xmin, xmax = min(days) - 0.04 * span, max(days) + 0.04 * span

    def X(d):
        return L + (d - xmin) / float(xmax - xmin) * pw

    def Y(v):
        return T + ph - (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo)) * ph

    o = []
    o.append('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
             'font-family="Helvetica, Arial, sans-serif" font-size="12">' % (W, H, W, H))
    o.append('<rect width="100%" height="100%" fill="white"/>')
    o.append('<text x="%d" y="24" font-size="15" font-weight="bold">%s</text>' % (L, html.escape(title)))
    # grid: decades and 2x/5x
    e = int(round(math.log10(lo)))
    while 10 ** e <= hi * 1.0001:
        for mult in (1, 2, 5):
            v = mult * 10 ** e
            if v < lo * 0.9999 or v > hi * 1.0001:
                continue
            y = Y(v)
            major = mult == 1
            o.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="%s" stroke-width="1"/>' % (
                L, y, L + pw, y, "#cccccc" if major else "#eeeeee"))
            lab = ("%g" % v) if v >= 1 else ("%.3g" % v)
            o.append('<text x="%d" y="%.1f" text-anchor="end" fill="%s">%s</text>' % (
                L - 6, y + 4, "#333" if major else "#999", lab))
        e += 1
    for d in days:
        x = X(d)
        o.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#dddddd"/>' % (x, T, x, T + ph))
        o.append('<text x="%.1f" y="%d" text-anchor="middle">%d</text>' % (x, T + ph + 18, d))
    o.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#333"/>' % (L, T, pw, ph))
    o.append('<text x="%.1f" y="%d" text-anchor="middle">days of reports kept</text>' % (L + pw / 2, H - 14))
    o.append('<text transform="translate(18,%.1f) rotate(-90)" text-anchor="middle">%s latency, ms (log scale)</text>'
             % (T + ph / 2, metric))

    for si, st in enumerate(sets):
        dash = DASHES[si % len(DASHES)]
        mk = MARKERS[si % len(MARKERS)]
        for qi, n in enumerate(names):
            pts = [(d, v, ok) for d, v, ok in st.get(n, []) if v and v > 0]
            if not pts:
                continue
            c = PALETTE[qi % len(PALETTE)]
            path = " ".join("%s%.1f,%.1f" % ("M" if i == 0 else "L", X(d), Y(v)) for i, (d, v, _) in enumerate(pts))
            o.append('<path d="%s" fill="none" stroke="%s" stroke-width="2"%s><title>%s</title></path>' % (
                path, c, (' stroke-dasharray="%s"' % dash) if dash else "", html.escape(n)))
            for d, v, ok in pts:
                o.append('<g><title>%s, %d days: %s %.2f ms%s</title>%s</g>' % (
                    html.escape(n), d, metric, v, "" if ok else " (FAILED)", marker(mk, X(d), Y(v), c)))
                if not ok:
                    o.append('<text x="%.1f" y="%.1f" fill="#d62728" font-weight="bold">!</text>' % (X(d) + 5, Y(v) - 4))

    # legend: queries (colour), then result sets (line style)
    lx, ly = L + pw + 18, T + 4
    for qi, n in enumerate(names):
        c = PALETTE[qi % len(PALETTE)]
        y = ly + qi * 18
        o.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="3"/>' % (lx, y, lx + 22, y, c))
        o.append('<text x="%d" y="%d">%s</text>' % (lx + 28, y + 4, html.escape(n)))
    if len(summaries) > 1:
        y0 = ly + len(names) * 18 + 12
        for si, s in enumerate(summaries):
            y = y0 + si * 18
            dash = DASHES[si % len(DASHES)]
            o.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333" stroke-width="2"%s/>' % (
                lx, y, lx + 22, y, (' stroke-dasharray="%s"' % dash) if dash else ""))
            o.append(marker(MARKERS[si % len(MARKERS)], lx + 11, y, "#333"))
            o.append('<text x="%d" y="%d">%s</text>' % (lx + 28, y + 4, html.escape(s.get("label") or "set %d" % si)))
    o.append("</svg>")
    return "\n".join(o) + "\n"


def table(summaries):
    lines = []
    for s in summaries:
        runs = s["runs"]
        days = [r["days"] for r in runs]
        lines.append("%s, %d nodes — p50 / p95 ms per days kept" % (s.get("label", ""), s.get("nodes", 0)))
        lines.append("")
        lines.append("| query | " + " | ".join("%d d" % d for d in days) + " | %d d / %d d (p50) |" % (days[-1], days[0]))
        lines.append("|---|" + "---:|" * len(days) + "---:|")
        names = [q["name"] for q in runs[0]["queries"]]
        for n in names:
            cells = []
            p50 = []
            for r in runs:
                q = next((x for x in r["queries"] if x["name"] == n), None)
                if q is None:
                    cells.append("–")
                    p50.append(None)
                    continue
                flag = "" if q["ok"] and (q["expect"] is None or q["expect"]["ok"]) else " ⚠"
                cells.append("%s / %s%s" % (fmt(q["p50_ms"]), fmt(q["p95_ms"]), flag))
                p50.append(q["p50_ms"])
            ratio = ("%.1f×" % (p50[-1] / p50[0])) if p50[0] and p50[-1] else "–"
            lines.append("| %s | %s | %s |" % (n, " | ".join(cells), ratio))
        lines.append("")
        lines.append("| days | reports | events | DB size | bytes/report | import | import rate |")
        lines.append("|---:|---:|---:|---:|---:|---:|---:|")
        for r in runs:
            imp = r.get("import") or {}
            sec = r["phases"].get("import", {}).get("seconds")
            lines.append("| %d | %d | %d | %.0f MB | %.0f | %s | %s |" % (
                r["days"], r["reports"], r["events"], r["db_bytes"] / 1e6, r["db_bytes_per_report"] or 0,
                ("%.0f s" % sec) if sec else "–",
                ("%d reports/s" % imp["reports_per_s"]) if imp.get("reports_per_s") else "–"))
        lines.append("")
    return "\n".join(lines)


def fmt(v):
    return "%.1f" % v if v < 100 else "%.0f" % v


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", nargs="+", help="results files of days.sh (or directories holding a summary.json)")
    ap.add_argument("--out", help="SVG file to write")
    ap.add_argument("--metric", choices=["p50", "p95"], default="p50")
    ap.add_argument("--title")
    ap.add_argument("--table", action="store_true", help="print a Markdown table of p50/p95 per query per days")
    args = ap.parse_args()
    summaries = [load(d) for d in args.results]
    if args.table:
        print(table(summaries))
    if args.out:
        title = args.title or "reportdb on PostgreSQL, %d nodes: %s of each bench query vs days kept" % (
            summaries[0].get("nodes", 0), args.metric)
        with open(args.out, "w") as f:
            f.write(svg(summaries, args.metric, title))
        print("plot-days: wrote %s" % args.out, file=sys.stderr)
    if not args.table and not args.out:
        ap.error("give --out FILE.svg and/or --table")


if __name__ == "__main__":
    main()
