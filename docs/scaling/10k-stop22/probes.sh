#!/usr/bin/env bash
# stop 22: ingest into the migrated 14-day database (s10kn_14d) against an
# empty one with NEW, as stop 20's probes (10k-stop20/go8.sh): files of 3
# runs of every node in a new day (2026-01-16), each into an empty database
# (created before the first) and the 14-day one, one server per probe, the
# order alternated; both databases receive the same reports into the same
# day partition, empty before the first file. Server RSS sampled every 2 s.
#   probes.sh BINARY        (DB14=s10kn_14d: the loaded database; R: where
#                            results go (stop 23: results-stop23); TAG: a
#                            prefix for this set's result names)
set -u
[[ -x "${1:-}" ]] || { echo "usage: $0 NEW_BINARY" >&2; exit 2; }
cd "$(dirname "$0")/../../.."
D=/work/data-10k; R=${R:-$D/results-stop22}; mkdir -p $R
PG=postgres://postgres@127.0.0.1:5432
PB=$1
DB14=${DB14:-s10kn_14d}; TAG=${TAG:-}; DAY=${DAY:-16} # DAY: the new day (January 2026)
for end in 01:30 03:00 04:30; do
  f=$D/probe-10000n-3runs-$DAY-${end/:/}.jsonl.gz
  [[ -e $f ]] || python3 ../shared/bench/fleet.py --nodes 10000 --runs 3 --end 2026-01-${DAY}T$end:00Z \
    --out $f >> $R/probe-fleet.log 2>&1
done
psql -qAt $PG/postgres -c "DROP DATABASE IF EXISTS probe_empty" -c "CREATE DATABASE probe_empty"
. docs/scaling/10k-stop22/probe-lib.sh
n=0
for end in 0130 0300 0430; do
  n=$((n+1))
  f=$D/probe-10000n-3runs-$DAY-$end.jsonl.gz
  case $n in 2) order="14d empty";; *) order="empty 14d";; esac
  for w in $order; do
    case $w in empty) db=probe_empty;; 14d) db=$DB14;; esac
    probe $n-$w $db $f
  done
done
date -u +%FT%TZ > $R/probes-${TAG}done
