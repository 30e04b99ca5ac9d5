#!/usr/bin/env bash
# stop 26: the report keys (migration 0016) at 10,000 nodes x 1 and 14
# days (scripts/fleet-days.py --nodes 10000 --days 1,14 --outdir
# /work/data-10k): import both windows with IMPORT (the 14-day one with
# the concurrent phase, 30 s); then the 14 d / 1 d ratio, queries.py -k 20
# after 3 unmeasured runs, the windows alternated in each round, the
# concurrent phase (30 s) at both windows in the first round of each set:
# NEW two rounds, OLD two, NEW two more; then the ingest probes of stop 22
# (docs/scaling/10k-stop22/probes.sh: 3 files of 3 runs of every node in
# the day after the fleet's, each into an empty database and the 14-day
# one, the order alternated) with NEW.
#   go.sh IMPORT_BINARY NEW_BINARY OLD_BINARY
#         (SKIP_IMPORTS=1: keep the databases; SKIP_PROBES=1: no probes)
set -u
[[ -x "${1:-}" && -x "${2:-}" && -x "${3:-}" ]] || { echo "usage: $0 IMPORT_BINARY NEW_BINARY OLD_BINARY" >&2; exit 2; }
cd "$(dirname "$0")/../../.."
D=/work/data-10k; R=$D/results-stop26; mkdir -p $R
days() { scripts/days-10k.sh $R "$@"; } # days NAME BINARY WINDOWS K ROUNDS DURATION SKIP_IMPORT
if [[ -z "${SKIP_IMPORTS:-}" && ! -e $R/import14-done ]]; then
  days import1 $1 1 5 1 0 0
  days import14 $1 14 5 1 30 0
fi
days ratio-new $2 "1 14" 20 2 30 1
days ratio-old $3 "1 14" 20 2 30 1
days ratio-new2 $2 "1 14" 20 2 30 1
if [[ -z "${SKIP_PROBES:-}" ]]; then
  R=$R DB14=s10k_14d DAY=${DAY:-16} docs/scaling/10k-stop22/probes.sh $2
fi
date -u +%FT%TZ > $R/go-done
