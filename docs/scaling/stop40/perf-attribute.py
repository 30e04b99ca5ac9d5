#!/usr/bin/env python3
"""perf-attribute.py SCRIPT OUTER [INNER ...]

Shares of a perf profile's samples, from `perf script -F ip,sym` output (call
graphs recorded with -g; docs/scaling/stop38/perf-postgres.sh makes one of the
database's backends during an ingest): the share of all samples whose stack
contains OUTER, and for each INNER the share of all samples whose stack has
INNER below OUTER (called from it, at any depth). PostgreSQL's static
functions are not in its dynamic symbol table, so only exported ones
(standard_ExecutorStart, ExecInsertIndexTuples, plpgsql_exec_trigger, ...)
can be named.

  perf script -i /tmp/pc8.perf.data -F ip,sym > /tmp/pc8.script
  perf-attribute.py /tmp/pc8.script PortalRun standard_ExecutorStart plpgsql_exec_trigger
"""
import sys

samples, cur = [], []
for line in open(sys.argv[1]):
    line = line.strip()
    if not line:
        if cur:
            samples.append(cur)
            cur = []
        continue
    parts = line.split(None, 1)
    cur.append(parts[1] if len(parts) > 1 else parts[0])
if cur:
    samples.append(cur)
n = len(samples)
outer, inners = sys.argv[2], sys.argv[3:]
sub = [s for s in samples if outer in s]
print(f"{outer}: {100 * len(sub) / n:.1f}% of {n} samples")
for t in inners:
    c = sum(1 for s in sub if t in s[:s.index(outer)])
    print(f"  {t}: {100 * c / n:.2f}%")
