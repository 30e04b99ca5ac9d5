#!/usr/bin/env bash
# stop 23, third part. go2.sh ran its ingest probes (day 16) into the
# 14-day database before this; newer reports there change what the mix
# asks (the nodes' latest reports; distinct_resources then falls back to
# the scan), so the 14-day window is imported again by NEW first (round
# new2, with the concurrent phase), then, on clean data: the 14 d / 1 d
# ratio for NEW with six rounds (default PostgreSQL settings:
# shared_buffers 128 MB), and six more with shared_buffers = 4GB (ALTER
# SYSTEM, PostgreSQL restarted; reset and restarted again afterwards).
#   go3.sh NEW_BINARY
set -u
[[ -x "${1:-}" ]] || { echo "usage: $0 NEW_BINARY" >&2; exit 2; }
cd "$(dirname "$0")/../../.."
D=/work/data-10k; R=$D/results-stop23; mkdir -p $R
PG=postgres://postgres@127.0.0.1:5432
days() { scripts/days-10k.sh $R "$@"; } # days NAME BINARY WINDOWS K ROUNDS DURATION SKIP_IMPORT
restart() { pg_ctlcluster --skip-systemctl-redirect 15 main restart; sleep 2; }
days new2-import14 $1 14 5 1 30 0
days ratio6-new $1 "1 14" 20 6 0 1
psql -qAt $PG/postgres -c "ALTER SYSTEM SET shared_buffers = '4GB'"; restart
psql -qAt $PG/postgres -c "SHOW shared_buffers" > $R/sb4g-setting
days ratio6-sb4g $1 "1 14" 20 6 0 1
psql -qAt $PG/postgres -c "ALTER SYSTEM RESET shared_buffers"; restart
psql -qAt $PG/postgres -c "SHOW shared_buffers" >> $R/sb4g-setting
date -u +%FT%TZ > $R/go3-done
