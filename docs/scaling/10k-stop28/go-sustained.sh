#!/usr/bin/env bash
# stop 28: sustained.sh on the 14-day database that import-defaults.sh
# loaded (s10k_14d_def: no probe has written to it), two rounds with
# shared_buffers 4GB / max_wal_size 8GB (days 30, 31), then two with
# PostgreSQL's defaults, 128MB / 1GB (days 32, 33; restarted between).
# Leaves PostgreSQL on its defaults (ALTER SYSTEM RESET).
#   go-sustained.sh BINARY   (R: results under /work/data-10k/results-stop28,
#                             sustained by default; DAY: the first day, 30)
# Run at stop 28 with 235454a (stopped in its first 14-day session: its
# compaction took minutes, fixed by d37c4f1), then with d37c4f1:
# R=sustained-d37c4f1 MONTH=02 DAY=01 (February 1, 2 tuned, 3, 4 defaults).
set -u
[[ -x "${1:-}" ]] || { echo "usage: $0 BINARY" >&2; exit 2; }
cd "$(dirname "$0")/../../.."
PG=postgres://postgres@127.0.0.1:5432
R0=/work/data-10k/results-stop28/${R:-sustained}; DAY=${DAY:-30}
pgset() {
  psql -qAt $PG/postgres -c "ALTER SYSTEM SET shared_buffers = '$1'" -c "ALTER SYSTEM SET max_wal_size = '$2'"
  pg_ctlcluster 15 main restart; sleep 2
}
pgset 4GB 8GB
R=$R0/tuned DAY=$DAY ROUNDS=2 DB14=s10k_14d_def docs/scaling/10k-stop28/sustained.sh "$1"
pgset 128MB 1GB
R=$R0/defaults DAY=$((10#$DAY + 2)) ROUNDS=2 DB14=s10k_14d_def docs/scaling/10k-stop28/sustained.sh "$1"
psql -qAt $PG/postgres -c "ALTER SYSTEM RESET shared_buffers" -c "ALTER SYSTEM RESET max_wal_size"
pg_ctlcluster 15 main restart
date -u +%FT%TZ > $R0/done
