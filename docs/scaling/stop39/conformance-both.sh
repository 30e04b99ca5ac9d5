#!/bin/bash
# (stop 39) used for the conformance runs of this stop; the servers listen on 8180 (embedded) and 8181 (PostgreSQL, database conf)
# conformance-both.sh BIN: conformance on a fresh embedded store and a fresh PostgreSQL database
BIN=${1:-/work/bin/reportdb}
set -u
pkill -f "listen 127.0.0.1:818[01]" ; sleep 0.3
rm -rf /tmp/conf-sqlite; mkdir -p /tmp/conf-sqlite
$BIN serve --listen 127.0.0.1:8180 --data-dir /tmp/conf-sqlite --report-ttl 0 > /tmp/conf-sqlite.log 2>&1 &
psql -h 127.0.0.1 -U postgres -qc "DROP DATABASE IF EXISTS conf WITH (FORCE)" -c "CREATE DATABASE conf" 2>/dev/null
rm -rf /tmp/conf-pg; mkdir -p /tmp/conf-pg
$BIN serve --listen 127.0.0.1:8181 --data-dir /tmp/conf-pg --database postgres://postgres@127.0.0.1:5432/conf --report-ttl 0 > /tmp/conf-pg.log 2>&1 &
sleep 3
echo -n "sqlite: "; python3 /work/shared/conformance/run.py http://127.0.0.1:8180 2>&1 | tail -3 | tr '\n' ' '; echo
echo -n "postgres: "; python3 /work/shared/conformance/run.py http://127.0.0.1:8181 2>&1 | tail -3 | tr '\n' ' '; echo
pkill -f "listen 127.0.0.1:818[01]"
