#!/usr/bin/env python3
"""Queries of the medium mix (queries.py's reports_page_first,
regex_resource_title and, by name, failures_last_hour with the medium
fleet's last hour, aggregate_event_counts and latest_events_by_status) against several servers on the same database,
requests interleaved (the order reversed every other round), one
keep-alive connection each: the median latency per server.

    ab-queries.py PORT[,PORT...] N [reports_page_first,regex,failures_last_hour,
                                    aggregate_event_counts,latest_events_by_status]
"""
import http.client, time, statistics, sys, urllib.parse, json
paths = {
 'reports_page_first': '/pdb/query/v4/reports?' + urllib.parse.urlencode({'order_by': json.dumps([{"field":"end_time","order":"desc"}]), 'limit':'100','include_total':'true','offset':'0'}),
 'failures_last_hour': '/pdb/query/v4/events?' + urllib.parse.urlencode({'query': json.dumps(["and", ["=", "status", "failure"], [">", "timestamp", "2026-01-15T11:00:00.000Z"], ["<=", "timestamp", "2026-01-15T12:00:00.000Z"]]), 'order_by': json.dumps([{"field":"timestamp","order":"desc"}]), 'limit':'100'}),
 'aggregate_event_counts': '/pdb/query/v4/aggregate-event-counts?' + urllib.parse.urlencode({'query': json.dumps(["=", "latest_report?", True]), 'summarize_by': 'certname'}),
 'latest_events_by_status': '/pdb/query/v4/events?' + urllib.parse.urlencode({'query': json.dumps(["extract", [["function", "count"], "status"], ["=", "latest_report?", True], ["group_by", "status"]])}),
 'regex': '/pdb/query/v4/events?' + urllib.parse.urlencode({'query': json.dumps(["~","resource_title","^/etc/nginx/"]), 'order_by': json.dumps([{"field":"timestamp","order":"desc"}]), 'limit':'1000'}),
}
ports = [int(p) for p in sys.argv[1].split(',')]
n = int(sys.argv[2])
only = sys.argv[3].split(',') if len(sys.argv) > 3 else ['reports_page_first', 'regex']
conns = {p: http.client.HTTPConnection('127.0.0.1', p) for p in ports}
for name in only:
    res = {p: [] for p in ports}
    for i in range(n + 5):
        order = ports if i % 2 == 0 else ports[::-1]
        for p in order:
            c = conns[p]
            t = time.perf_counter()
            c.request('GET', paths[name]); r = c.getresponse(); body = r.read()
            d = time.perf_counter() - t
            if i >= 5: res[p].append(d * 1000)
    print(name, '  '.join('%d: p50 %.2f ms (%d B)' % (p, statistics.median(v), len(body)) for p, v in res.items()))
