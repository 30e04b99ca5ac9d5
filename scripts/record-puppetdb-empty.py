#!/usr/bin/env python3
"""record-puppetdb-empty.py URL > httpapi/testdata/puppetdb-empty.json

Records how a real PuppetDB 7.12.1 (loaded with the conformance corpus:
reports only, no facts, catalogs or resources) answers the endpoints of the
data reportdb does not store, and the Jolokia metrics Puppetboard reads.
httpapi's TestPuppetDBEmptyAnswers replays every probe against reportdb
loaded with the same corpus and asserts the same status, Content-Type,
X-Records and body.

Probes PuppetDB answers with a 500 (a bug there) are not recorded: reportdb
answers those as a correct server would (asserted separately in Go).
"""
import json
import sys
import urllib.error
import urllib.parse
import urllib.request

NODE = "web03.prod.example.com"
ENV = "production"
ENTITIES = ["facts", "fact-names", "fact-paths", "fact-contents", "inventory", "resources",
            "catalogs", "edges", "packages", "package-inventory", "factsets",
            "catalog-inputs", "catalog-input-contents"]


def probes():
    for e in ENTITIES:
        yield ("GET", e, {})
        yield ("GET", e, {"include_total": "true"})
        yield ("GET", e, {"query": '["=","certname","x"]', "limit": "10", "offset": "0"})
        yield ("GET", e, {"query": '["=","nosuch","x"]'})
        yield ("GET", e, {"query": '["extract",["nosuch"]]'})
        yield ("GET", e, {"order_by": '[{"field":"nosuch"}]'})
        yield ("GET", e, {"query": "not json"})
        yield ("POST", e, {"query": ["=", "certname", "x"]})
        if e != "fact-names":
            yield ("GET", e, {"query": '["extract",[["function","count"]]]'})
    yield ("GET", "producers", {})
    yield ("GET", "producers", {"query": '["=","nosuch","x"]'})
    yield ("GET", "producers/puppet.example.com", {})
    yield ("GET", "producers/nosuch", {})
    yield ("GET", "resources", {"query": '["extract",[["function","count"]],["=","environment","%s"]]' % ENV})
    yield ("GET", "resources", {"query": '["and",["=","type","Class"],["=","tag","x"],["=","parameters.ensure","present"]]'})
    yield ("GET", "facts", {"query": '["extract",[["function","count"],"name"],["=","certname","x"],["group_by","name"]]'})
    yield ("GET", "facts", {"query": '["and",["=","name","os"],["~","value","x"]]'})
    yield ("GET", "facts", {"order_by": '[{"field":"value"}]'})
    yield ("GET", "fact-names", {"query": '["=","name","os"]'})
    yield ("GET", "fact-paths", {"query": '["~","path","^os"]'})
    yield ("GET", "inventory", {"query": '["and",["=","facts.os.family","Debian"],["=","trusted.certname","x"]]'})
    yield ("GET", "inventory", {"query": '["extract",["certname","facts.os"]]'})
    yield ("GET", "factsets", {"query": '[">","timestamp","2025-01-01T00:00:00Z"]'})
    yield ("GET", "catalogs", {"query": '["=","edges","x"]'})
    yield ("GET", "facts/os", {})
    yield ("GET", "facts/os/Debian", {})
    yield ("GET", "facts/os", {"query": '["=","nosuch","x"]'})
    yield ("GET", "resources/File", {})
    yield ("GET", "resources/File/x", {"include_total": "true"})
    yield ("GET", "package-inventory/" + NODE, {})
    for sub in ["facts", "facts/os", "facts/os/Debian", "resources", "resources/File", "resources/File/x"]:
        yield ("GET", "nodes/%s/%s" % (NODE, sub), {})
        yield ("GET", "nodes/nosuch/%s" % sub, {})
    yield ("GET", "nodes/%s/facts" % NODE, {"query": '["=","nosuch","x"]'})
    for sub in ["facts", "resources"]:
        yield ("GET", "environments/%s/%s" % (ENV, sub), {})
        yield ("GET", "environments/nosuch/%s" % sub, {})
    for p in ["catalogs/%s" % NODE, "catalogs/nosuch", "catalogs/%s/edges" % NODE,
              "catalogs/%s/resources" % NODE, "factsets/%s" % NODE, "factsets/%s/facts" % NODE]:
        yield ("GET", p, {})
    root = [
        '["from","facts"]',
        '["from","facts",["=","name","os"]]',
        '["from","facts",["extract",[["function","count"]]]]',
        '["from","facts",["=","nosuch","x"]]',
        '["from","resources",["extract",[["function","count"]],["=","environment","production"]]]',
        '["from","inventory",["=","facts.os.family","Debian"]]',
        '["from","catalogs"]',
        '["from","fact_contents",["=","nosuch",1]]',
        'facts{name="os"}',
        'facts[count()]{}',
        'facts{nosuch=1}',
        'inventory[certname]{facts.os.family = "Debian"}',
        'resources{type="Class" and title="Main"}',
        'catalogs{}',
        'nodes[certname]{facts{name="os" and value="Debian"}}',
        'reports[hash]{certname in facts[certname]{name="os"}}',
    ]
    for q in root:
        yield ("GET", "", {"query": q})


def fetch(base, method, path, params):
    url = base + "/pdb/query/v4" + ("/" + path if path else "")
    data = None
    headers = {"Accept": "application/json"}
    if method == "GET":
        if params:
            url += "?" + urllib.parse.urlencode(params)
    else:
        data = json.dumps(params).encode()
        headers["Content-Type"] = "application/json"
    req = urllib.request.Request(url, data=data, headers=headers, method=method)

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *a, **k):
            return None
    opener = urllib.request.build_opener(NoRedirect)
    try:
        r = opener.open(req, timeout=30)
        status, hdrs, body = r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        status, hdrs, body = e.code, e.headers, e.read()
    return status, hdrs, body.decode("utf-8")


def main():
    base = sys.argv[1].rstrip("/")
    out = []
    for method, path, params in probes():
        status, hdrs, body = fetch(base, method, path, params)
        if status >= 500:
            print("skipped (PuppetDB %d): %s %s %s" % (status, method, path, params), file=sys.stderr)
            continue
        rec = {"method": method, "path": path, "params": params, "status": status,
               "content_type": hdrs.get("Content-Type"), "body": body}
        if hdrs.get("X-Records") is not None:
            rec["x_records"] = hdrs.get("X-Records")
        out.append(rec)
    json.dump({"puppetdb": "7.12.1", "recorded_with": "scripts/record-puppetdb-empty.py",
               "corpus": "../shared/conformance corpus loaded", "probes": out}, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
