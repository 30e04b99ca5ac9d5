#!/usr/bin/env python3
"""supersession-estimate.py - sizes of a "next timestamp" (supersession) design for
event-counts with distinct_resources=true, measured on a fleet file.

    supersession-estimate.py FLEET.jsonl.gz [--windows 20] [--seed 1]

FLEET is what ../shared/bench/fleet.py writes (--out FILE.jsonl.gz or .jsonl,
or - for stdin): one report per line, either "store report" wire format v8
(certname, resources[].events[]) or Puppet's own report JSON (host,
resource_statuses{}.events[]).  Events are derived as the server stores them
(wire/events.go): a skipped resource is one synthetic "skipped" event at the
resource's timestamp (property and name null), otherwise one event per
submitted event; events of one report identical in every identity field are
collapsed.  Timestamps are truncated to milliseconds (UTC).

Definitions.  key = (certname, resource_type, resource_title, property, name).
group = (key, t): all events of a key at one timestamp t.  For each group,
n = the smallest timestamp of the same key strictly greater than t (INF if
none in the file).  An event at t is the newest of its key in [S, E] iff
S <= t <= E and n > E.  The "pair rollup" holds counts per
(w, tb = floor(t/w)*w, nb = floor(n/1h)*1h or INF, status, resource_type,
resource_title) for w in {1 h, 5 min}.

Printed:
  a. totals per UTC day of event timestamp: reports (by start_time day, and
     reports with >= 1 event that day), events, distinct keys, groups;
  b. pair rollup: distinct rows per width, per UTC day of tb, rows/events;
     also with nb at 5-minute resolution instead of 1 hour;
  c. distribution of n - t over groups (INF, <= 1 h, <= 1 day, > 1 day);
  d. arrival order: reports in file order, per key the two newest stored
     timestamps (ts, prev); every arriving group (per report, per key, its t,
     in ascending t within the report) is classified as new key, t > ts,
     t == ts, prev < t < ts (prev absent counts as -infinity), t == prev, or
     t < prev (the slow path: it needs the key's older history);
  e. for --windows windows [S, E], S = E - 24 h, E uniform (fixed --seed) in
     [first event + 24 h, last event - 2 h]: events with t in
     [S, ceil_5min(S)) (start edge), events with t in [floor_5min(E+1), E]
     (end edge), groups with n in [floor_1h(E+1), E+1) (hour bucket of n
     ambiguous for E); min / median / max of each;
  f. for the same windows, the hour rows (w = 1 h, nb = 1 h) with tb in the
     window's whole hours: all, those a reader counts as they are (nb after
     E's hour, or INF) and those with nb in E's hour (ambiguous).

Memory is proportional to the number of keys and groups (one dict entry per
group holding packed per-status counts); the file is streamed line by line.
Python 3 stdlib only; single process.
"""

import argparse
import bisect
import calendar
import gzip
import json
import random
import statistics
import sys
import time

HOUR = 3600000
MIN5 = 300000
DAY = 86400000
INF = None  # n of a group with no later timestamp

STATUS_BITS = 24
STATUS_MASK = (1 << STATUS_BITS) - 1

# --------------------------------------------------------------------------
# timestamps

_hour_cache = {}


def parse_ts(s):
    """ISO-8601 'YYYY-MM-DDTHH:MM:SS[.fff...][Z|+hh:mm|-hh:mm]' -> epoch ms (truncated)."""
    hk = s[:13]
    base = _hour_cache.get(hk)
    if base is None:
        base = calendar.timegm((int(s[0:4]), int(s[5:7]), int(s[8:10]), int(s[11:13]), 0, 0, 0, 0, 0))
        _hour_cache[hk] = base
    sec = base + int(s[14:16]) * 60 + int(s[17:19])
    ms = 0
    i = 19
    if len(s) > 19 and s[19] in ".,":
        j = 20
        while j < len(s) and s[j].isdigit():
            j += 1
        ms = int((s[20:j] + "000")[:3])
        i = j
    tz = s[i:]
    if tz and tz not in ("Z", "z"):
        sign = -1 if tz[0] == "-" else 1
        tz = tz[1:].replace(":", "")
        off = int(tz[:2]) * 3600 + (int(tz[2:4]) if len(tz) >= 4 else 0) * 60
        sec -= sign * off
    return sec * 1000 + ms


def iso(ms):
    s, m = divmod(int(ms), 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(s)) + ".%03dZ" % m


def day_of(ms):
    return time.strftime("%Y-%m-%d", time.gmtime(ms // 1000))


def floor_to(x, w):
    return (x // w) * w


def ceil_to(x, w):
    return -((-x) // w) * w


# --------------------------------------------------------------------------
# report -> events


def _vtext(v):
    return v if isinstance(v, str) else json.dumps(v, sort_keys=True, separators=(",", ":"))


def report_events(rep):
    """Returns (certname, start_ms or None, [(rtype, title, property, name, status, t)])."""
    if "payload" in rep and isinstance(rep["payload"], dict):  # a wrapped command
        rep = rep["payload"]
    out = []
    seen = set()

    def add(rtype, title, prop, name, status, t, ident):
        if ident in seen:
            return
        seen.add(ident)
        out.append((rtype, title, prop, name, status, t))

    def add_resource(r, rtype, title, skipped_ts, events, ts_key, old_key, new_key):
        # one resource: a skipped one is one synthetic "skipped" event at
        # the resource's time, otherwise its events
        f, ln = r.get("file"), r.get("line")
        if r.get("skipped"):
            t = parse_ts(skipped_ts)
            add(rtype, title, None, None, "skipped", t,
                (rtype, title, None, t, "skipped", "null", "null", None, None, f, ln))
            return
        for e in events:
            t = parse_ts(e[ts_key])
            prop, name, status = e.get("property"), e.get("name"), e["status"]
            add(rtype, title, prop, name, status, t,
                (rtype, title, prop, t, status, _vtext(e.get(old_key)), _vtext(e.get(new_key)),
                 e.get("message"), name, f, ln))

    if "resources" in rep:  # wire v8
        certname = rep["certname"]
        st = rep.get("start_time")
        for r in rep.get("resources") or ():
            add_resource(r, r["resource_type"], r["resource_title"], r.get("timestamp"), r.get("events") or (),
                         "timestamp", "old_value", "new_value")
    elif "resource_statuses" in rep:  # Puppet's report JSON
        certname = rep["host"]
        st = rep.get("time")
        for r in (rep.get("resource_statuses") or {}).values():
            evs = r.get("events") or ()
            if not evs and not r.get("skipped"):
                continue
            add_resource(r, r["resource_type"], r["title"], r.get("time"), evs,
                         "time", "previous_value", "desired_value")
    else:
        raise ValueError("neither wire v8 (resources) nor Puppet report (resource_statuses)")
    return certname, (parse_ts(st) if isinstance(st, str) else None), out


# --------------------------------------------------------------------------


def open_input(path):
    if path == "-":
        return sys.stdin
    if path.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, "r", encoding="utf-8")


def pct(a, b):
    return "%6.2f%%" % (100.0 * a / b) if b else "     -"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("fleet", help="FILE.jsonl.gz | FILE.jsonl | -")
    ap.add_argument("--windows", type=int, default=20, help="number of 24 h windows for (e) (20)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the windows' end instants (1)")
    args = ap.parse_args()
    t_start = time.time()

    key_ids = {}        # key tuple -> kid
    kid_rt = []         # kid -> rt id
    rt_ids = {}         # (resource_type, resource_title) -> rt id
    status_ids = {}     # status -> index
    groups = []         # kid -> {t: packed per-status counts}
    top_ts = []         # kid -> newest stored timestamp
    top_prev = []       # kid -> second newest stored timestamp (None if absent)
    arr = {"new key": 0, "t > ts": 0, "t == ts": 0, "prev < t < ts": 0, "t == prev": 0, "t < prev (slow)": 0}
    reports = 0
    reports_by_start_day = {}
    reports_with_ev_day = {}
    events_total = 0

    fh = open_input(args.fleet)
    for line in fh:
        if not line.strip():
            continue
        rep = json.loads(line)
        certname, start_ms, evs = report_events(rep)
        del rep
        reports += 1
        if start_ms is not None:
            d = day_of(start_ms)
            reports_by_start_day[d] = reports_by_start_day.get(d, 0) + 1
        rep_groups = {}  # kid -> {t: packed}
        ev_days = set()
        for rtype, title, prop, name, status, t in evs:
            k = (certname, rtype, title, prop, name)
            kid = key_ids.get(k)
            if kid is None:
                kid = len(kid_rt)
                key_ids[k] = kid
                rt = rt_ids.get((rtype, title))
                if rt is None:
                    rt = len(rt_ids)
                    rt_ids[(rtype, title)] = rt
                kid_rt.append(rt)
                groups.append({})
                top_ts.append(None)
                top_prev.append(None)
            si = status_ids.get(status)
            if si is None:
                si = len(status_ids)
                status_ids[status] = si
            g = rep_groups.setdefault(kid, {})
            g[t] = g.get(t, 0) + (1 << (si * STATUS_BITS))
            ev_days.add(t // DAY)
            events_total += 1
        for dd in ev_days:
            d = day_of(dd * DAY)
            reports_with_ev_day[d] = reports_with_ev_day.get(d, 0) + 1
        for kid, tg in rep_groups.items():
            gd = groups[kid]
            for t in sorted(tg):
                # classify against the stored state, then store
                ts, prev = top_ts[kid], top_prev[kid]
                if ts is None:
                    arr["new key"] += 1
                    top_ts[kid] = t
                elif t > ts:
                    arr["t > ts"] += 1
                    top_prev[kid], top_ts[kid] = ts, t
                elif t == ts:
                    arr["t == ts"] += 1
                elif prev is None or t > prev:
                    arr["prev < t < ts"] += 1
                    top_prev[kid] = t
                elif t == prev:
                    arr["t == prev"] += 1
                else:
                    arr["t < prev (slow)"] += 1
                gd[t] = gd.get(t, 0) + tg[t]
    if fh is not sys.stdin:
        fh.close()
    t_read = time.time() - t_start
    del top_ts, top_prev

    n_keys = len(kid_rt)
    n_status = max(1, len(status_ids))
    n_rt = max(1, len(rt_ids))
    status_names = sorted(status_ids, key=status_ids.get)
    if events_total == 0:
        print("no events")
        return

    # ---- pass over groups --------------------------------------------------
    t_min = min(min(gd) for gd in groups if gd)
    t_max = max(max(gd) for gd in groups if gd)
    T0 = floor_to(t_min, DAY)
    configs = [("w=1h  nb=1h", HOUR, HOUR), ("w=5m  nb=1h", MIN5, HOUR),
               ("w=1h  nb=5m", HOUR, MIN5), ("w=5m  nb=5m", MIN5, MIN5)]
    nb_size = {res: (t_max - T0) // res + 2 for res in (HOUR, MIN5)}
    row_sets = [set() for _ in configs]

    days = {}  # day index -> [events, groups, keys]
    dt_bins = {"INF": [0, 0], "<= 1 h": [0, 0], "1 h < . <= 1 day": [0, 0], "> 1 day": [0, 0]}
    finite_dt = []
    g_t = []          # group t (sorted later, with events per group)
    g_n = []          # finite n of groups
    n_groups = 0
    for kid, gd in enumerate(groups):
        rt = kid_rt[kid]
        tl = sorted(gd)
        kdays = set()
        for i, t in enumerate(tl):
            n = tl[i + 1] if i + 1 < len(tl) else INF
            packed = gd[t]
            sts = []
            ne = 0
            si = 0
            while packed:
                c = packed & STATUS_MASK
                if c:
                    sts.append(si)
                    ne += c
                packed >>= STATUS_BITS
                si += 1
            n_groups += 1
            di = t // DAY
            dv = days.get(di)
            if dv is None:
                dv = days[di] = [0, 0, 0]
            dv[0] += ne
            dv[1] += 1
            kdays.add(di)
            g_t.append((t, ne))
            if n is INF:
                b = "INF"
            else:
                dt = n - t
                finite_dt.append(dt)
                g_n.append(n)
                b = "<= 1 h" if dt <= HOUR else ("1 h < . <= 1 day" if dt <= DAY else "> 1 day")
            dt_bins[b][0] += 1
            dt_bins[b][1] += ne
            for ci, (_, w, res) in enumerate(configs):
                tbi = (t - T0) // w
                nbi = 0 if n is INF else (n - T0) // res + 1
                base = (tbi * nb_size[res] + nbi) * n_status
                s = row_sets[ci]
                for si in sts:
                    s.add((base + si) * n_rt + rt)
        for di in kdays:
            days[di][2] += 1
        groups[kid] = None  # free as we go
    del groups

    rows_by_day = []
    for ci, (_, w, res) in enumerate(configs):
        per = {}
        div = nb_size[res] * n_status * n_rt
        for r in row_sets[ci]:
            di = (T0 + (r // div) * w) // DAY
            per[di] = per.get(di, 0) + 1
        rows_by_day.append((len(row_sets[ci]), per))
        if ci == 0:
            # (tb index, nb index) of the hour rows, for (f)
            div0 = n_status * n_rt
            rows0 = sorted(divmod(r // div0, nb_size[res]) for r in row_sets[ci])
        row_sets[ci] = None

    # ---- windows --------------------------------------------------------------
    g_t.sort()
    gt_keys = [t for t, _ in g_t]
    cum = [0]
    for _, ne in g_t:
        cum.append(cum[-1] + ne)
    del g_t
    g_n.sort()

    def events_in(a, b):  # t in [a, b)
        return cum[bisect.bisect_left(gt_keys, b)] - cum[bisect.bisect_left(gt_keys, a)]

    def n_in(a, b):  # n in [a, b)
        return bisect.bisect_left(g_n, b) - bisect.bisect_left(g_n, a)

    rng = random.Random(args.seed)
    lo, hi = t_min + DAY, t_max - 2 * HOUR
    lo_note = "first event + 24 h"
    if lo > hi:
        lo, lo_note = t_min, "first event (data spans < 26 h)"
    wins = []
    for _ in range(args.windows):
        E = rng.randint(lo, hi)
        S = E - DAY
        start_edge = events_in(S, ceil_to(S, MIN5))
        end_edge = events_in(floor_to(E + 1, MIN5), E + 1)
        hb = floor_to(E + 1, HOUR)
        amb = n_in(hb, E + 1)
        amb_bucket = n_in(hb, hb + HOUR)
        # (f) the hour rows (w=1h, nb=1h) a reader of the whole hours of
        # the window touches: tb in them and nb after E's hour (certainly
        # n > E) or in it (ambiguous: n may be <= E)
        tlo, thi = (ceil_to(S, HOUR) - T0) // HOUR, (floor_to(E + 1, HOUR) - T0) // HOUR
        nbE = (floor_to(E + 1, HOUR) - T0) // HOUR + 1
        i0 = bisect.bisect_left(rows0, (tlo, -1))
        i1 = bisect.bisect_left(rows0, (thi, -1))
        sure = sum(1 for tb, nb in rows0[i0:i1] if nb == 0 or nb > nbE)
        ambr = sum(1 for tb, nb in rows0[i0:i1] if nb == nbE)
        wins.append((S, E, start_edge, end_edge, amb, amb_bucket, i1 - i0, sure, ambr))

    # ---- output ---------------------------------------------------------------
    import resource
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    elapsed = time.time() - t_start
    out = []
    p = out.append
    p("supersession-estimate: %s" % args.fleet)
    p("  reports %d, events %d, keys %d, groups %d, (resource_type, resource_title) %d, statuses %s"
      % (reports, events_total, n_keys, n_groups, len(rt_ids), ",".join(status_names)))
    p("  event timestamps %s .. %s" % (iso(t_min), iso(t_max)))
    p("  read %.1fs, total %.1fs, peak RSS %.0f MB" % (t_read, elapsed, rss_mb))
    p("")
    p("a. totals per UTC day of event timestamp")
    p("  %-10s %10s %10s %10s %10s %10s" % ("day", "reports*", "rep w/ ev", "events", "keys", "groups"))
    for di in sorted(days):
        d = day_of(di * DAY)
        ev, gr, ks = days[di]
        p("  %-10s %10d %10d %10d %10d %10d" % (d, reports_by_start_day.get(d, 0), reports_with_ev_day.get(d, 0), ev, ks, gr))
    p("  %-10s %10d %10s %10d %10d %10d" % ("all", reports, "", events_total, n_keys, n_groups))
    p("  (* reports by day of start_time; 'rep w/ ev' = reports with >= 1 event that day;")
    p("   keys per day = keys with >= 1 event that day; groups per day by t)")
    p("")
    p("b. pair rollup rows (w, tb, nb, status, resource_type, resource_title), per UTC day of tb")
    hdr = "  %-10s %10s" % ("day", "events")
    for name, _, _ in configs:
        hdr += " | %-11s %9s" % (name, "rows/ev")
    p(hdr)
    for di in sorted(days):
        ev = days[di][0]
        line = "  %-10s %10d" % (day_of(di * DAY), ev)
        for total, per in rows_by_day:
            r = per.get(di, 0)
            line += " | %11d %9.4f" % (r, r / ev if ev else 0)
        p(line)
    line = "  %-10s %10d" % ("all", events_total)
    for total, per in rows_by_day:
        line += " | %11d %9.4f" % (total, total / events_total)
    p(line)
    p("  (nb = floor(n/res)*res or INF; 'nb=5m' is the same rollup with nb at 5-minute resolution)")
    p("")
    p("c. time to supersession n - t, over groups (events in those groups alongside)")
    p("  %-18s %10s %8s %10s %8s" % ("n - t", "groups", "share", "events", "share"))
    for b in ("INF", "<= 1 h", "1 h < . <= 1 day", "> 1 day"):
        g, e = dt_bins[b]
        p("  %-18s %10d %8s %10d %8s" % (b, g, pct(g, n_groups), e, pct(e, events_total)))
    c1 = dt_bins["<= 1 h"][0]
    c2 = c1 + dt_bins["1 h < . <= 1 day"][0]
    p("  cumulative: n - t <= 1 h %s, <= 1 day %s, > 1 day %s, INF %s of groups"
      % (pct(c1, n_groups).strip(), pct(c2, n_groups).strip(), pct(dt_bins["> 1 day"][0], n_groups).strip(),
         pct(dt_bins["INF"][0], n_groups).strip()))
    if finite_dt:
        finite_dt.sort()
        q = lambda f: finite_dt[min(len(finite_dt) - 1, int(f * len(finite_dt)))] / 60000.0
        p("  finite n - t in minutes: p10 %.1f, p50 %.1f, p90 %.1f, p99 %.1f, max %.1f"
          % (q(0.1), q(0.5), q(0.9), q(0.99), finite_dt[-1] / 60000.0))
    p("")
    p("d. arrival order (file order; per report, per key, per timestamp)")
    tot = sum(arr.values())
    for k in ("new key", "t > ts", "t == ts", "prev < t < ts", "t == prev", "t < prev (slow)"):
        p("  %-18s %10d %8s" % (k, arr[k], pct(arr[k], tot)))
    p("  %-18s %10d" % ("arrivals", tot))
    p("")
    p("e. edges of %d windows [S, E], S = E - 24 h, E uniform in [%s, last event - 2 h], seed %d"
      % (len(wins), lo_note, args.seed))
    p("  %-24s %-24s %8s %8s %8s %8s" % ("S", "E", "start", "end", "amb", "bucket"))
    for S, E, a, b, c, d, *_ in sorted(wins, key=lambda w: w[1]):
        p("  %-24s %-24s %8d %8d %8d %8d" % (iso(S), iso(E), a, b, c, d))
    cols = [("start edge: events, t in [S, ceil_5min(S))", 2),
            ("end edge: events, t in [floor_5min(E+1), E]", 3),
            ("amb: groups, n in [floor_1h(E+1), E+1)", 4),
            ("bucket: groups, n in [floor_1h(E+1), +1 h)", 5)]
    for name, i in cols:
        v = [w[i] for w in wins]
        p("  %-46s min %7d  median %9.1f  max %7d" % (name, min(v), statistics.median(v), max(v)))
    p("")
    p("f. hour rows (w=1h, nb=1h) in the whole hours of the same windows: all of them, those with")
    p("   nb after E's hour or INF (counted as they are), those with nb in E's hour (ambiguous)")
    for name, i in (("rows with tb in the window's whole hours", 6), ("of them nb > hour(E) or INF", 7),
                    ("of them nb = hour(E)", 8)):
        v = [w[i] for w in wins]
        p("  %-46s min %7d  median %9.1f  max %7d" % (name, min(v), statistics.median(v), max(v)))
    print("\n".join(out))


if __name__ == "__main__":
    main()
