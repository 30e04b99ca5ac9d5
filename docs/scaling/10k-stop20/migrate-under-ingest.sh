#!/usr/bin/env bash
# stop 20: migration 0011 (NEW_BINARY's) applied to the 14-day
# database while a server (3d18a7b, which has 0011 recorded) ingests newer
# reports, against the same ingest without a migration. The database is
# set back to before 0011 (old timestamp-only index, version 11
# forgotten) once the server is up.
#   migrate-under-ingest.sh OLD_BINARY NEW_BINARY OUT DURING AFTER
# DURING, AFTER: probe files (fleet.py --nodes 10000 --runs 3 --end ...),
# new to the database each time. Stop 20 ran it twice:
#   OLD=3d18a7b NEW=84e095f (concurrent build), probe-10000n-3runs-16-{0900,1030}, OUT results/migrate
#   OLD=3d18a7b NEW=3d18a7b (0011 in one transaction), probe-10000n-3runs-16-{1200,1330},
#   OUT results/migrate-transactional
set -u
old=$1; new=$2; out=$3; during=$4; after=$5
PG=postgres://postgres@127.0.0.1:5432/s10k_14d
mkdir -p $out; rm -rf /tmp/mig-state; mkdir -p /tmp/mig-state
$old serve --listen 127.0.0.1:18700 --database $PG --report-ttl 0 \
  --data-dir /tmp/mig-state/data --spool-dir /tmp/mig-state/spool > $out/server.log 2>&1 &
pid=$!
for i in $(seq 120); do curl -sf http://127.0.0.1:18700/pdb/meta/v1/version >/dev/null && break; sleep 1; done
for i in $(seq 600); do
  curl -sf http://127.0.0.1:18700/metrics | grep -q '^reportdb_fleet_state_loaded_timestamp_seconds [1-9]' && break
  sleep 0.2
done
# back to before 0011, the server already up (it would apply 0011 itself)
psql -qAt $PG -c "DROP INDEX resource_events_timestamp" \
  -c "CREATE INDEX resource_events_timestamp ON resource_events (timestamp)" \
  -c "DELETE FROM reportdb_schema_migrations WHERE version = 11" > $out/setback.txt 2>&1
# ingest with the migration running meanwhile
python3 ../shared/bench/ingest.py http://127.0.0.1:18700 --fleet $during \
  --concurrency 8 --json-out $out/ingest-during.json > $out/ingest-during.txt 2>&1 &
ing=$!
sleep 2
/usr/bin/time -v $new migrate --database $PG > $out/migrate.txt 2>&1
wait $ing
# the same ingest without a migration
python3 ../shared/bench/ingest.py http://127.0.0.1:18700 --fleet $after \
  --concurrency 8 --json-out $out/ingest-after.json > $out/ingest-after.txt 2>&1
kill $pid; wait $pid
psql -qAt $PG -c "SELECT version FROM reportdb_schema_migrations WHERE version = 11" \
  -c "SELECT x.indnkeyatts, x.indisvalid FROM pg_index x WHERE x.indexrelid = 'resource_events_timestamp'::regclass" > $out/after.txt
