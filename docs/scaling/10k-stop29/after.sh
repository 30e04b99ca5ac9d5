#!/usr/bin/env bash
# stop 29, run beside go.sh to fit the session: when its sustained rounds were done, go.sh was
# stopped before its control, the medium fleet was compared with PuppetDB once (after.sh part 1),
# then the control ran (part 2, go.sh step 4 as it is there). Kept as run (paths of this machine).
# --- part 1 (/tmp/after29.sh)
# after the sustained rounds: stop go.sh before its control, then the medium fleet against PuppetDB
R=/work/data-10k/results-stop29
while [[ ! -e $R/sustained/done ]]; do sleep 1; done
pkill -f "10k-stop29/go.sh"; sleep 1; pkill -f "CREATE INDEX report_keys_key"; sleep 2
P="psql -qAt -U postgres -h 127.0.0.1 s10k_14d"
$P -c "SELECT indexname FROM pg_indexes WHERE tablename='report_keys'" > $R/after-indexes.txt
$P -c "DROP INDEX IF EXISTS report_keys_key"
echo "control skipped at $(date -u +%FT%TZ)" > $R/control-skipped
sleep 20
cd /tmp/wt29c
for run in 1; do
  if [[ $(date +%H%M) > 0242 ]]; then echo "compare skipped (late)" >> $R/control-skipped; break; fi
  echo "load before run $run: $(cat /proc/loadavg)" >> /work/data-small/compare-load.txt
  REPORTDB_SHARED=/work/shared docs/scaling/compare-medium/run.sh /work/data-small/fleet-medium.jsonl.gz /work/data-small/compare/run-5059c75-$run > /work/data-small/compare-$run.log 2>&1
  /work/shared/bench/puppetdb-instance.sh stop 8092 puppetdb_bench; scripts/bench-instance.sh stop 8091
  sleep 10
done
date -u +%FT%TZ > $R/after-done
# --- part 2 (/tmp/control29.sh)
# the control of docs/scaling/10k-stop29/go.sh step 4, run after the medium compare
R=/work/data-10k/results-stop29
while [[ ! -e $R/after-done ]]; do sleep 1; done
cd /work/main
PG=postgres://postgres@127.0.0.1:5432
psql -qAt $PG/s10k_14d -c "CREATE INDEX report_keys_key ON report_keys (key, id)" -c "DROP INDEX report_keys_day_key" -c "VACUUM ANALYZE report_keys"
date -u +%FT%TZ > $R/control-start
R=$R/sustained-index0016 MONTH=02 DAY=09 ROUNDS=2 DB14=s10k_14d docs/scaling/10k-stop28/sustained.sh /work/data-10k/reportdb-5059c75
psql -qAt $PG/s10k_14d -c "CREATE INDEX report_keys_day_key ON report_keys ((id >> 32), key, id)" -c "DROP INDEX report_keys_key" -c "VACUUM ANALYZE report_keys"
date -u +%FT%TZ > $R/control-done
