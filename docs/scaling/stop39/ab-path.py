#!/usr/bin/env python3
"""ab-path.py PORT[,PORT...] N PATH: one request path against several servers, interleaved (the order
reversed every other round), one keep-alive connection each, 5 warm-ups: the median latency per
server, and whether their bodies were identical (stop 39)."""
import http.client, time, statistics, sys, urllib.parse, json
ports=[int(p) for p in sys.argv[1].split(',')]; n=int(sys.argv[2]); path=sys.argv[3]
conns={p: http.client.HTTPConnection('127.0.0.1',p) for p in ports}
res={p:[] for p in ports}; body={}
for i in range(n+5):
    order = ports if i%2==0 else ports[::-1]
    for p in order:
        t=time.perf_counter(); conns[p].request('GET',path); r=conns[p].getresponse(); b=r.read(); d=time.perf_counter()-t
        body[p]=b
        if i>=5: res[p].append(d*1000)
print('  '.join('%d: p50 %.3f ms (%d B)'%(p, statistics.median(v), len(body[p])) for p,v in res.items()), 'same' if len(set(body.values()))==1 else 'DIFFERENT')
