#!/usr/bin/env python3
"""iodiff.py BEFORE AFTER: the difference of two run-all.sh iostats dumps.

Prints the WAL written between them (records, full-page images, bytes) and,
per table with any change, the heap and index blocks read (from outside
shared buffers) and hit, and the rows inserted, updated and HOT-updated;
heaviest first."""
import sys


def load(path):
    wal, tables = None, {}
    for line in open(path):
        f = line.split()
        if not f:
            continue
        if f[0] == "wal":
            wal = [int(x) for x in f[1:4]]
        elif f[0] == "table":
            tables[f[1]] = [int(x) for x in f[2:]]
    return wal, tables


def main():
    (w0, t0), (w1, t1) = load(sys.argv[1]), load(sys.argv[2])
    if w0 and w1:
        d = [b - a for a, b in zip(w0, w1)]
        print("WAL: %d records, %d full-page images, %.1f MB" % (d[0], d[1], d[2] / 1e6))
    rows = []
    for name, after in t1.items():
        before = t0.get(name, [0] * len(after))
        d = [b - a for a, b in zip(before, after)]
        if any(d):
            rows.append((d[0] + d[2], name, d))
    print("%-28s %10s %10s %10s %10s %9s %9s %9s" % ("table", "heap read", "heap hit", "idx read", "idx hit",
                                                      "ins", "upd", "hot upd"))
    for _, name, d in sorted(rows, reverse=True):
        print("%-28s %10d %10d %10d %10d %9d %9d %9d" % ((name,) + tuple(d)))


if __name__ == "__main__":
    main()
