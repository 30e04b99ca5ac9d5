#!/bin/bash
# cpu.sh PORT N : e2e p50 and CPU ms/request of server and its PG backends
P=$(pgrep -f "listen 127.0.0.1:$1 "); [ -z "$P" ] && P=$(pgrep -f "listen 127.0.0.1:$1")
cpu(){ awk '{print $14+$15}' /proc/$1/stat 2>/dev/null || echo 0; }
pgs(){ t=0; for p in $(pgrep -f "postgres: 15/main: postgres"); do t=$((t+$(cpu $p))); done; echo $t; }
a=$(cpu $P); pa=$(pgs)
python3 /tmp/rx/e2e.py 127.0.0.1:$1 $2
b=$(cpu $P); pb=$(pgs)
echo "server $(( (b-a)*10*1000/($2+5) ))us/req  pg $(( (pb-pa)*10*1000/($2+5) ))us/req"
