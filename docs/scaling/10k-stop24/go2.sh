#!/usr/bin/env bash
# stop 24, second part: the 14 d / 1 d ratio on the databases go.sh
# imported, queries.py -k 20 after 3 unmeasured runs, the windows
# alternated in each round: NEW two rounds, then OLD two.
#   go2.sh NEW_BINARY OLD_BINARY
set -u
[[ -x "${1:-}" && -x "${2:-}" ]] || { echo "usage: $0 NEW_BINARY OLD_BINARY" >&2; exit 2; }
cd "$(dirname "$0")/../../.."
D=/work/data-10k; R=$D/results-stop24; mkdir -p $R
days() { scripts/days-10k.sh $R "$@"; } # days NAME BINARY WINDOWS K ROUNDS DURATION SKIP_IMPORT
days ratio-new-1 $1 "1 14" 20 2 0 1
days ratio-old-1 $2 "1 14" 20 2 0 1
date -u +%FT%TZ > $R/go2-done
