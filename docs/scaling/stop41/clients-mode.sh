#!/bin/bash
# clients-mode.sh BIN MODE: the real clients against serve --acknowledge MODE on PostgreSQL (db clmode)
B=$1; M=$2; PORT=8190
runuser -u postgres -- psql -qAt -c "DROP DATABASE IF EXISTS clmode WITH (FORCE)" -c "CREATE DATABASE clmode" >/dev/null 2>&1
rm -rf /tmp/clm; mkdir -p /tmp/clm
REPORTDB_ACKNOWLEDGE=$M $B serve --listen 127.0.0.1:$PORT --data-dir /tmp/clm/data --database postgres://postgres@127.0.0.1:5432/clmode > /tmp/clm/log 2>&1 &
SP=$!; sleep 3
PDB_CHECK_NODES=1 bash /work/shared/clients/run-all.sh http://127.0.0.1:$PORT > /tmp/clm/clients.txt 2>&1
echo "rc $?"
kill $SP; wait $SP 2>/dev/null
tail -5 /tmp/clm/clients.txt
