import sys, time, http.client, urllib.parse, statistics
host, port = sys.argv[1].split(":")
k = int(sys.argv[2]) if len(sys.argv) > 2 else 40
q = urllib.parse.urlencode({"query": '["~","resource_title","^/etc/nginx/"]',
    "order_by": '[{"field":"timestamp","order":"desc"}]', "limit": "1000"})
path = "/pdb/query/v4/events?" + q
c = http.client.HTTPConnection(host, int(port))
lat = []
for i in range(k + 5):
    t0 = time.perf_counter()
    c.request("GET", path, headers={"Accept": "application/json"})
    r = c.getresponse(); d = r.read()
    dt = time.perf_counter() - t0
    if i >= 5: lat.append(dt * 1000)
lat.sort()
print("p50 %.2f ms  p10 %.2f  p90 %.2f  bytes %d" % (statistics.median(lat), lat[len(lat)//10], lat[len(lat)*9//10], len(d)))
