#!/usr/bin/env bash
# openvoxview-check.sh [REPORTDB] [SHARED_DIR]
#
# Runs the real openvoxview (voxpupuli's PuppetDB/OpenVoxDB viewer: a Go backend that serves a
# Vue UI and queries PuppetDB for it) against reportdb loaded with the conformance corpus, and
# makes every call its pages make: the backend API (/api/v1/...) as the UI calls it, and, with
# Chromium, the pages themselves in headless Chromium. Twice: reportdb as is (catalog_environment
# null) and with --catalog-environment-from-reports. See docs/openvoxview.md.
#
# openvoxview itself is not built here: give the path of its binary (built with its UI, as its
# releases are) in OPENVOXVIEW, or have `openvoxview` on PATH. Without one the check says so
# and exits 0 (OPENVOXVIEW_REQUIRED=1: exits 2).
#
#   REPORTDB    a reportdb binary (default: built from this checkout), or the URL of a running
#               reportdb (http://HOST:PORT; the corpus is loaded into it if it holds no node, and
#               the CA calls deactivate nodes in it: use a throwaway server); one run then, in the
#               mode that server is in
#   SHARED_DIR  the reference kit with conformance/ and corpus/ (default: $REPORTDB_SHARED, or
#               the shared/ folder beside the repository); Chromium is driven with its
#               clients/puppetboard/lib/cdp.py
#
# Environment: OPENVOXVIEW, OPENVOXVIEW_REQUIRED, CHROMIUM (default /usr/bin/chromium when
# installed; "none": API calls only), OUT_DIR (default: a temporary directory; per run
# openvoxview's config.yaml and log, reportdb's log, summary.json, screens/*.png).
#
# Between openvoxview and reportdb sits a recording proxy, so that each openvoxview call is
# printed with the PuppetDB requests it caused and reportdb's status for each; Puppet Server's CA
# API is a stub (the CA pages need one, and revoke/clean send `deactivate node` to PuppetDB).
# One line per call: PASS/FAIL (counted) or NOTE (not counted: an answer that is empty for a
# known reason, said on the line). Exit status 0 only when nothing failed.
set -euo pipefail
main() {
  ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  RDB=${1:-}
  SHARED=${2:-${REPORTDB_SHARED:-$(cd "$ROOT/.." && pwd)/shared}}

  OVV=${OPENVOXVIEW:-$(command -v openvoxview || true)}
  if [ -z "$OVV" ] || [ ! -x "$OVV" ]; then
    echo "openvoxview: no openvoxview binary (set OPENVOXVIEW=/path/to/openvoxview, see docs/openvoxview.md); NOT run"
    [ -n "${OPENVOXVIEW_REQUIRED:-}" ] && exit 2
    exit 0
  fi
  OVV=$(cd "$(dirname "$OVV")" && pwd)/$(basename "$OVV")
  [ -f "$SHARED/conformance/run.py" ] || { echo "openvoxview-check: no conformance kit at $SHARED (set REPORTDB_SHARED)" >&2; exit 2; }
  CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
  if [ "$CHROMIUM" = none ] || [ ! -x "$CHROMIUM" ]; then
    [ "$CHROMIUM" = none ] || echo "openvoxview: no Chromium at $CHROMIUM (apt-get install chromium): API calls only"
    CHROMIUM=
  fi

  WORK=$(mktemp -d -t reportdb-ovvcheck.XXXXXX)
  write_harness "$WORK/harness.py"
  OUT_DIR=${OUT_DIR:-$WORK/out}
  mkdir -p "$OUT_DIR"
  RPID= HPID=
  cleanup() {
    # the harness stops openvoxview and Chromium itself on SIGTERM
    if [ -n "$HPID" ]; then kill "$HPID" 2>/dev/null || true; wait "$HPID" 2>/dev/null || true; fi
    if [ -n "$RPID" ]; then kill "$RPID" 2>/dev/null || true; wait "$RPID" 2>/dev/null || true; fi
    rm -rf "$WORK/data-"* "$WORK/reportdb"
  }
  trap cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM

  start=$SECONDS
  echo "openvoxview: $OVV ($("$OVV" -version 2>/dev/null || echo 'version unknown'))"

  # run MODE URL: the harness against the reportdb at URL
  run() {
    python3 "$WORK/harness.py" --reportdb "$2" --openvoxview "$OVV" --mode "$1" --out "$OUT_DIR/$1" \
      --shared "$SHARED" --chromium "$CHROMIUM" &
    HPID=$!
    local rc=0
    wait "$HPID" || rc=$?
    HPID=
    return $rc
  }

  status=0
  case "$RDB" in
  http://*|https://*)
    RDB=${RDB%/}
    n=$(curl -sfS "$RDB/pdb/query/v4/nodes" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
    [ "$n" = 0 ] && python3 "$SHARED/conformance/run.py" "$RDB" --load-only
    mode=$(curl -sfS "$RDB/pdb/query/v4/nodes" | python3 -c 'import json,sys; print("catenv" if any(n.get("catalog_environment") for n in json.load(sys.stdin)) else "plain")')
    echo "== openvoxview against $RDB (catalog_environment: $([ "$mode" = catenv ] && echo filled || echo null))"
    run "$mode" "$RDB" || status=1
    ;;
  *)
    if [ -z "$RDB" ]; then
      (cd "$ROOT" && go build -o "$WORK/reportdb" ./cmd/reportdb)
      RDB=$WORK/reportdb
    fi
    for mode in plain catenv; do
      flag=()
      [ "$mode" = catenv ] && flag=(--catalog-environment-from-reports)
      mkdir -p "$OUT_DIR/$mode"
      log=$OUT_DIR/$mode/reportdb.log
      "$RDB" serve --listen 127.0.0.1:0 --data-dir "$WORK/data-$mode" --report-ttl 0 --node-ttl 0 "${flag[@]}" 2> "$log" &
      RPID=$!
      addr=
      for _ in $(seq 100); do
        addr=$(sed -n 's/.*addr=\(http:[^ ]*\).*/\1/p' "$log" | head -1)
        [ -n "$addr" ] && break
        kill -0 "$RPID" 2>/dev/null || break
        sleep 0.2
      done
      [ -n "$addr" ] || { cat "$log"; exit 1; }
      echo "== openvoxview against reportdb $addr ${flag[*]:-(without --catalog-environment-from-reports)}"
      python3 "$SHARED/conformance/run.py" "$addr" --load-only
      run "$mode" "$addr" || status=1
      if [ "$mode" = plain ]; then
        if grep -q 'selects nodes by catalog_environment' "$log"; then
          echo "reportdb logged its hint: $(grep -m1 'selects nodes by catalog_environment' "$log" | cut -c1-220)..."
        else
          echo "reportdb logged no catalog_environment hint"
        fi
      fi
      kill "$RPID" 2>/dev/null || true
      wait "$RPID" 2>/dev/null || true
      RPID=
    done
    ;;
  esac
  echo "openvoxview-check: $((SECONDS - start)) s, $([ $status = 0 ] && echo 'nothing failed' || echo 'FAILED'); output in $OUT_DIR"
  exit $status
}

# write_harness FILE: the Python harness (standard library only) that starts openvoxview, the
# recording proxy and the stub CA, makes the calls and checks the answers.
write_harness() {
  cat > "$1" <<'PY'
"""Drives a running openvoxview against reportdb (written and run by openvoxview-check.sh).

Between openvoxview and reportdb sits a recording proxy, so that every PuppetDB request
openvoxview sends, and reportdb's answer to it, is printed under the openvoxview call that
caused it. A stub of Puppet Server's CA API (certificate_status) answers the CA pages, so that
openvoxview's revoke and clean reach the `deactivate node` command they send to PuppetDB.

One line per openvoxview call: PASS / FAIL (counted), NOTE (not counted: a known answer, said
why). The last line is "N passed, N failed"; the exit status is 1 on any FAIL.
"""
import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STATUSES = ["failed", "changed", "unchanged", "noop"]   # the reports page's status filter


# ------------------------------------------------------------------ HTTP

class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *a, **k):
        return None


_OPENER = urllib.request.build_opener(_NoRedirect())


def http(method, url, body=None, headers=None, timeout=60):
    """(status, headers, bytes); never raises for an HTTP status."""
    if isinstance(body, (dict, list)):
        body = json.dumps(body).encode()
        headers = dict(headers or {}, **{"Content-Type": "application/json"})
    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with _OPENER.open(req, timeout=timeout) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers or {}), e.read()
    except (urllib.error.URLError, OSError) as e:
        return 0, {}, str(e).encode()


def jload(b):
    try:
        return json.loads(b)
    except (ValueError, TypeError):
        return None


def short(x, n=160):
    s = x if isinstance(x, str) else json.dumps(x, separators=(",", ":"))
    s = s.replace("\n", " ")
    return s if len(s) <= n else s[:n - 3] + "..."


def rows_of(body):
    d = jload(body)
    if isinstance(d, list):
        return "%d rows" % len(d)
    if isinstance(d, dict):
        return "object"
    return "%d bytes" % len(body)


# ------------------------------------------------------------------ the recording proxy

class Recorder:
    def __init__(self):
        self.lock = threading.Lock()
        self.items = []

    def add(self, item):
        with self.lock:
            self.items.append(item)

    def mark(self):
        with self.lock:
            return len(self.items)

    def since(self, m):
        with self.lock:
            return list(self.items[m:])


def make_proxy(target, rec):
    class Proxy(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"

        def log_message(self, *a):
            pass

        def _any(self):
            n = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(n) if n else b""
            hdr = {k: v for k, v in self.headers.items()
                   if k.lower() in ("content-type", "accept")}
            st, rh, rb = http(self.command, target + self.path, body or None, hdr)
            rec.add({"kind": "pdb", "method": self.command, "path": self.path,
                     "content_type": self.headers.get("Content-Type"),
                     "body": body.decode("utf-8", "replace"), "status": st,
                     "answer": rb[:4000].decode("utf-8", "replace"), "rows": rows_of(rb),
                     "t": time.time()})
            self.send_response(st or 502)
            for k, v in rh.items():
                if k.lower() in ("content-type", "x-records", "retry-after"):
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(rb)))
            self.end_headers()
            self.wfile.write(rb)

        do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _any

    return Proxy


# ------------------------------------------------------------------ a stub of Puppet Server's CA API

def cert(name, state):
    fp = ":".join(["%02X" % (sum(map(ord, name)) * (i + 7) % 256) for i in range(32)])
    return {"name": name, "state": state, "fingerprint": fp,
            "fingerprints": {"SHA256": fp, "default": fp}, "dns_alt_names": ["DNS:" + name],
            "subject_alt_names": ["DNS:" + name], "authorization_extensions": {},
            "serial_number": 10 + len(name), "not_before": "2025-01-01T00:00:00UTC",
            "not_after": "2030-01-01T00:00:00UTC"}


def make_ca(certs, rec):
    lock = threading.Lock()

    class CA(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"

        def log_message(self, *a):
            pass

        def _send(self, st, obj=None):
            b = b"" if obj is None else json.dumps(obj).encode()
            self.send_response(st)
            if obj is not None:
                self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(b)))
            self.end_headers()
            self.wfile.write(b)
            rec.add({"kind": "ca", "method": self.command, "path": self.path,
                     "body": self._body.decode("utf-8", "replace"), "status": st,
                     "rows": "", "answer": b[:300].decode(), "t": time.time()})

        def _any(self):
            n = int(self.headers.get("Content-Length") or 0)
            self._body = self.rfile.read(n) if n else b""
            u = urllib.parse.urlsplit(self.path)
            qs = urllib.parse.parse_qs(u.query)
            p = u.path
            with lock:
                if self.command == "GET" and p.startswith("/puppet-ca/v1/certificate_statuses/"):
                    st = qs.get("state", [None])[0]
                    return self._send(200, [c for c in certs.values() if st in (None, c["state"])])
                m = re.match(r"^/puppet-ca/v1/certificate_status/([^/]+)$", p)
                if m:
                    name = urllib.parse.unquote(m.group(1))
                    if name not in certs:
                        return self._send(404, None)
                    if self.command == "GET":
                        return self._send(200, certs[name])
                    if self.command == "PUT":
                        want = (jload(self._body) or {}).get("desired_state")
                        if want not in ("signed", "revoked"):
                            return self._send(400, None)
                        certs[name]["state"] = want
                        return self._send(204, None)
                    if self.command == "DELETE":
                        del certs[name]
                        return self._send(204, None)
                if self.command == "PUT" and p == "/puppet-ca/v1/clean":
                    for name in (jload(self._body) or {}).get("certnames", []):
                        certs.pop(name, None)
                    return self._send(200, None)
            return self._send(404, None)

        do_GET = do_POST = do_PUT = do_DELETE = _any

    return CA


def serve(handler):
    srv = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


# ------------------------------------------------------------------ the check

class Check:
    def __init__(self, args):
        self.a = args
        self.rdb = args.reportdb.rstrip("/")
        self.catenv = args.mode == "catenv"
        self.rec = Recorder()
        self.passed = self.failed = self.notes = 0
        self.summary = []
        self.proc = None

    # -- output
    def line(self, verdict, what, detail, pdb=()):
        if verdict == "PASS":
            self.passed += 1
        elif verdict == "FAIL":
            self.failed += 1
        else:
            self.notes += 1
        print("%-4s %s -> %s" % (verdict, what, detail), flush=True)
        for r in pdb:
            req = r["path"]
            if r["body"]:
                req += " " + short(r["body"], 220)
            print("       %s %s %s -> %s %s" % ("pdb" if r["kind"] == "pdb" else "ca ",
                                                r["method"], req, r["status"], r["rows"]),
                  flush=True)
        self.summary.append({"verdict": verdict, "call": what, "detail": detail,
                             "backend": [{k: r[k] for k in ("kind", "method", "path", "body",
                                                            "status", "rows")} for r in pdb]})

    # -- reportdb directly (not through the proxy)
    def pdb(self, path, query=None, **params):
        if query is not None:
            params["query"] = query if isinstance(query, str) else json.dumps(query)
        url = self.rdb + path + ("?" + urllib.parse.urlencode(params) if params else "")
        st, _, b = http("GET", url)
        if st != 200:
            raise SystemExit("reportdb %s answered %s: %s" % (url, st, b[:300]))
        return jload(b)

    def pql(self, q):
        return self.pdb("/pdb/query/v4", q)

    # -- openvoxview
    def ovv(self, method, path, body=None):
        m = self.rec.mark()
        st, _, b = http(method, self.base + path, body)
        return st, jload(b), b, self.rec.since(m)

    def call(self, what, method, path, body=None, check=None, expect=200):
        """One openvoxview call. check(data) -> (ok, summary, note?) on the envelope's Data."""
        st, d, raw, sub = self.ovv(method, path, body)
        label = "%s %s%s" % (method, path, (" " + short(body, 200)) if body is not None else "")
        if what:
            label = "%s: %s" % (what, label)
        if st != expect:
            err = d.get("Error") if isinstance(d, dict) else short(raw.decode("utf-8", "replace"))
            self.line("FAIL", label, "HTTP %s (want %s) %s" % (st, expect, short(err or "", 300)), sub)
            return None
        bad = [r for r in sub if r["kind"] == "pdb" and not (200 <= r["status"] < 300 or r["status"] == expect)]
        data = d.get("Data") if isinstance(d, dict) and "Data" in d else d
        ok, summary, verdict = True, "HTTP %s" % st, None
        if check:
            try:
                res = check(data if expect == 200 else d)
                ok, summary = bool(res[0]), "HTTP %s, %s" % (st, res[1])
                verdict = res[2] if len(res) > 2 else None
            except Exception as e:  # noqa: BLE001 - an answer of an unexpected shape
                ok, summary = False, "HTTP %s, an answer of an unexpected shape (%r): %s" % (
                    st, e, short(raw.decode("utf-8", "replace"), 200))
        if bad:
            ok = False
            summary += "; reportdb answered %s" % ", ".join(str(r["status"]) for r in bad)
        self.line((verdict or "PASS") if ok else "FAIL", label, summary, sub)
        return data

    def query(self, what, pql, check, save=None, expect=200, whole=False):
        """The UI's POST /api/v1/pdb/query ({"Query": ...} from the page builders, {"query",
        "saveInHistory"} from the query page)."""
        body = {"Query": pql} if save is None else {"query": pql, "saveInHistory": save}
        return self.call(what, "POST", "/api/v1/pdb/query", body,
                         (lambda d: check(d if whole else d["Data"] if d else None)) if expect == 200 else check,
                         expect=expect)

    # ---------------------------------------------------------------- setup
    def truth(self):
        self.envs = [e["name"] for e in self.pdb("/pdb/query/v4/environments")]
        self.nodes = self.pdb("/pdb/query/v4/nodes")
        self.reports = self.pql("reports[certname, hash, end_time, environment, status, noop, "
                                "puppet_version, configuration_version] {}")
        ev = self.pql("events[certname, report, count()] { group by certname, report }")
        if not self.nodes or not self.reports:
            raise SystemExit("reportdb %s holds no nodes or no reports: load the corpus first" % self.rdb)
        self.latest = {n["certname"]: n["latest_report_hash"] for n in self.nodes}
        per = {}
        for r in self.reports:
            per.setdefault(r["certname"], []).append(r)
        prod = [n for n in self.nodes if n["report_environment"] == "production"]
        if not prod or not ev or len(self.nodes) < 4:
            raise SystemExit("reportdb %s does not hold the conformance corpus (no production node or no "
                             "event): the checks are written for it" % self.rdb)
        # the node of the node page: the production node with the most reports
        self.node = max(prod, key=lambda n: (len(per[n["certname"]]), n["certname"]))["certname"]
        self.node_reports = sorted(per[self.node], key=lambda r: ts(r["end_time"]), reverse=True)
        # the report of the report page: the one with the most events
        top = max(ev, key=lambda r: (r["count"], r["report"]))
        self.rep_cert, self.rep_hash, self.rep_events = top["certname"], top["report"], top["count"]
        # the two nodes whose certificates are revoked and cleaned (last, as it deactivates them)
        others = sorted(n["certname"] for n in self.nodes if n["certname"] not in (self.node, self.rep_cert))
        self.revoke_node, self.clean_node = others[0], others[1]
        self.envfield = {n["certname"]: n["catalog_environment"] for n in self.nodes}
        want = {n["certname"]: (n["report_environment"] if self.catenv else None) for n in self.nodes}
        wrong = [c for c in want if want[c] != self.envfield[c]]
        print("reportdb %s: %d nodes, %d reports, environments %s; catalog_environment %s%s" % (
            self.rdb, len(self.nodes), len(self.reports), ", ".join(self.envs),
            "from reports (--catalog-environment-from-reports)" if self.catenv else "null (no catalogs)",
            "; UNEXPECTED for %s" % ", ".join(wrong[:5]) if wrong else ""), flush=True)
        if wrong:
            self.failed += 1
            print("FAIL reportdb's catalog_environment is not what --mode %s expects" % self.a.mode)

    def start(self):
        self.proxy = serve(make_proxy(self.rdb, self.rec))
        certs = {n["certname"]: cert(n["certname"], "signed") for n in self.nodes}
        certs["new-node.example.com"] = cert("new-node.example.com", "requested")
        self.certs = certs
        self.ca = serve(make_ca(certs, self.rec))
        out = self.a.out
        os.makedirs(out, exist_ok=True)
        for attempt in range(3):
            port = free_port()
            cfg = os.path.join(out, "config.yaml")
            with open(cfg, "w") as f:
                f.write(CONFIG % {"port": port, "pdb_port": self.proxy.server_address[1],
                                  "ca_port": self.ca.server_address[1]})
            log = open(os.path.join(out, "openvoxview.log"), "ab")
            env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": out, "GIN_MODE": "release",
                   "TZ": "UTC"}
            # a clean environment: openvoxview's settings (PORT, PUPPETDB_HOST, ...) come from
            # variables before its config file
            self.proc = subprocess.Popen([self.a.openvoxview, "-config", cfg], cwd=out, env=env,
                                         stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            log.close()
            self.base = "http://127.0.0.1:%d" % port
            for _ in range(150):
                if self.proc.poll() is not None:
                    break
                if http("GET", self.base + "/api/v1/version", timeout=2)[0] == 200:
                    return
                time.sleep(0.1)
            self.stop()
        raise SystemExit("openvoxview did not start; see %s/openvoxview.log" % out)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.proc = None

    # ---------------------------------------------------------------- expectations
    def nodes_in(self, env=None, statuses=None):
        out = []
        for n in self.nodes:
            if env and self.envfield[n["certname"]] != env:
                continue
            if statuses and n["latest_report_status"] not in statuses:
                continue
            out.append(n)
        return out

    def reports_where(self, env=None, statuses=STATUSES, regex=None, start=None, end=None, latest=False):
        out = []
        for r in self.reports:
            if statuses and r["status"] not in statuses:
                continue
            if env and r["environment"] != env:
                continue
            if regex and not (re.search(regex, r["certname"]) or re.search(regex, r["puppet_version"])):
                continue
            if start and ts(r["end_time"]) < ts(start):
                continue
            if end and ts(r["end_time"]) > ts(end):
                continue
            if latest and self.latest.get(r["certname"]) != r["hash"]:
                continue
            out.append(r)
        return sorted(out, key=lambda r: ts(r["end_time"]), reverse=True)

    # ---------------------------------------------------------------- the calls
    def run(self):
        C = self
        env = "production"
        # -- the layout (every page): version, meta, predefined views, environment selector
        C.call("layout", "GET", "/api/v1/version",
               check=lambda d: (bool(d.get("Version")), "Version %s" % d.get("Version")))
        C.call("layout", "GET", "/api/v1/meta",
               check=lambda d: (d.get("CaEnabled") is True and d.get("CaReadOnly") is False,
                                "CaEnabled %s, CaReadOnly %s, UnreportedHours %s" % (
                                    d.get("CaEnabled"), d.get("CaReadOnly"), d.get("UnreportedHours"))))
        C.call("layout", "GET", "/api/v1/view/predefined",
               check=lambda d: (len(d) == 1 and d[0]["Name"] == "Inventory", "%d view(s)" % len(d)))
        C.query("environment selector", "environments  { }",
                lambda d: (sorted(x["name"] for x in d) == sorted(self.envs) and len(d) > 0,
                           "%d environments: %s" % (len(d), ", ".join(x["name"] for x in d))))

        for e in (None, env):
            tag = "env %s" % (e or "*")
            want_nodes = self.nodes_in(e)
            empty_note = (e and not self.catenv)
            why = "NOTE" if empty_note else None

            def count_check(want, note=None):
                def f(d):
                    got = d[0]["count"] if d else None
                    s = "count %s (want %s)%s" % (got, want, ("; " + note) if note else "")
                    return (got == want, s) + ((why,) if (note and why and got == want) else ())
                return f

            # -- dashboard
            cat_note = ("empty: catalog_environment is null without catalogs; start reportdb with "
                        "--catalog-environment-from-reports") if empty_note else None
            C.query("dashboard population, " + tag,
                    "nodes [count()] { %s}" % ("(catalog_environment = '%s')" % e if e else ""),
                    count_check(len(want_nodes), cat_note))
            C.query("dashboard resources, " + tag,
                    "resources [count()] { %s}" % ("(environment = '%s')" % e if e else ""),
                    count_check(0, "no resources without catalogs (as PuppetDB without catalogs); "
                                   "reportdb forwards resources with --upstream"))
            qs = "?environment=%s" % e if e else "?"
            C.call("dashboard/nodes page, " + tag, "GET", "/api/v1/view/node_overview" + qs,
                   check=self.overview_check(want_nodes, cat_note))
            # -- nodes page with its status filter
            st = ["failed", "changed"]
            want = self.nodes_in(e, st)
            C.call("nodes page status filter, " + tag, "GET",
                   "/api/v1/view/node_overview" + ("?environment=%s&" % e if e else "?") +
                   "status=failed&status=changed",
                   check=self.overview_check(want, cat_note))

            # -- node page
            n = self.node
            wn = [x for x in self.nodes_in(e) if x["certname"] == n]
            C.query("node page info, " + tag,
                    "nodes  { (certname = '%s'%s)}" % (n, " and catalog_environment = '%s'" % e if e else ""),
                    lambda d, wn=wn: (len(d) == len(wn) and all(x["latest_report_hash"] == self.latest[n] for x in d),
                                      "%d node row(s) (want %d)%s" % (len(d), len(wn), (
                                          "; the node page's details panel is then empty" if not wn else "")))
                    + ((why,) if empty_note and len(d) == len(wn) else ()))
            wr = [r for r in self.node_reports if not e or r["environment"] == e][:10]
            C.query("node page reports, " + tag,
                    "reports  { (certname = '%s'%s) order by end_time desc limit 10}" % (
                        n, " and environment = '%s'" % e if e else ""),
                    lambda d, wr=wr: (same_hashes(d, wr), "%d reports (want %d), newest first" % (len(d), len(wr))))
            C.query("node page facts, " + tag,
                    "facts  { (certname = '%s'%s)}" % (n, " and environment = '%s'" % e if e else ""),
                    lambda d: (d == [], "%d facts: empty, reportdb stores no facts (forwarded with --upstream)" % len(d), "NOTE" if d == [] else None))

            # -- reports page: default, page 2, sorted by each sortable column, filtered
            base = "(status in ['failed', 'changed', 'unchanged', 'noop']%s)" % (
                " and environment = '%s'" % e if e else "")
            want = self.reports_where(env=e)
            C.query("reports page, " + tag, "reports  { %s order by end_time desc limit 100}" % base,
                    lambda d, w=want: (same_times(d, w[:100]), "%d reports (want %d)" % (len(d), len(w[:100]))))
            if len(want) > 100:
                C.query("reports page 2, " + tag, "reports  { %s order by end_time desc limit 100 offset 100}" % base,
                        lambda d, w=want: (same_times(d, w[100:200]), "%d reports (want %d)" % (len(d), len(w[100:200]))))
            if e is None:
                for col, order in (("status", "asc"), ("certname", "asc"), ("puppet_version", "desc"),
                                   ("end_time", "asc")):
                    # what reportdb answers to the same query in the AST form, with order_by
                    w = self.pdb("/pdb/query/v4/reports", ["in", "status", ["array", STATUSES]],
                                 order_by=json.dumps([{"field": col, "order": order}]), limit=100)
                    C.query("reports page sorted by %s" % col,
                            "reports  { %s order by %s %s limit 100}" % (base, col, order),
                            lambda d, col=col, order=order, w=w: (
                                [x[col] for x in d] == [x[col] for x in w] and len(d) == min(100, len(want)),
                                "%d reports, %s %s as the AST query's" % (len(d), col, order)))
                # the column "Configuration version" is named configuartion_version: sorting by it
                # sends that name, which PuppetDB refuses with 400 too (an openvoxview bug)
                C.query("reports page sorted by the configuration version column",
                        "reports  { %s order by configuartion_version desc limit 100}" % base,
                        lambda d: ("Unrecognized column 'configuartion_version'" in (d or {}).get("Error", ""),
                                   "400 passed on: %s (PuppetDB answers 400 too: openvoxview names the "
                                   "column configuartion_version)" % short((d or {}).get("Error", ""), 90)),
                        expect=400)
            # the page's end-time fields are <input type="date">: it sends dates without a time
            start, end = "2025-01-07", "2025-01-10"
            want = self.reports_where(env=e, regex="prod", start=start, end=end, latest=True)
            C.query("reports page filtered (text, end time, latest only), " + tag,
                    "reports  { (certname ~ 'prod' or puppet_version ~ 'prod') and (end_time >= '%s' and "
                    "end_time <= '%s') and (status in ['failed', 'changed', 'unchanged', 'noop'] and "
                    "latest_report? = true%s) order by end_time desc limit 100}" % (
                        start, end, " and environment = '%s'" % e if e else ""),
                    lambda d, w=want: (same_hashes(d, w) and len(w) > 0, "%d reports (want %d)" % (len(d), len(w))))

            # -- facts pages
            C.query("facts page, " + tag,
                    "facts [name] { %sgroup by name}" % ("(environment = '%s') " % e if e else " "),
                    lambda d: (d == [], "%d fact names: empty, reportdb stores no facts" % len(d), "NOTE" if d == [] else None))
            C.query("fact page, " + tag,
                    "facts  { (name = 'os'%s)}" % (" and environment = '%s'" % e if e else ""),
                    lambda d: (d == [], "%d facts: empty, reportdb stores no facts" % len(d), "NOTE" if d == [] else None))

        # -- report page (no environment filter)
        rep = [r for r in self.reports if r["hash"] == self.rep_hash][0]
        C.query("report page", "reports  { (certname = '%s' and hash = '%s')}" % (self.rep_cert, self.rep_hash),
                lambda d: (len(d) == 1 and d[0]["hash"] == rep["hash"] and
                           isinstance(d[0].get("metrics", {}).get("data"), list) and
                           isinstance(d[0].get("logs", {}).get("data"), list) and
                           isinstance(d[0].get("resource_events", {}).get("data"), list),
                           "%d report, %s metrics, %s logs, %s resource_events embedded" % (
                               len(d), *(len((d[0].get(k) or {}).get("data") or []) if d else 0
                                         for k in ("metrics", "logs", "resource_events")))))
        C.query("report page events", "events  { (report = '%s' and certname = '%s')}" % (self.rep_hash, self.rep_cert),
                lambda d: (len(d) == self.rep_events and all(x["report"] == self.rep_hash for x in d),
                           "%d events (want %d)" % (len(d), self.rep_events)))

        # -- predefined view (facts)
        C.call("view page", "GET", "/api/v1/view/predefined/Inventory/meta",
               check=lambda d: (d["Name"] == "Inventory", "%d columns" % len(d["Facts"])))
        C.call("view page", "GET", "/api/v1/view/predefined/Inventory",
               check=lambda d: (d["Data"] == [], "%d rows: empty, reportdb stores no facts" % len(d["Data"]),
                                "NOTE" if d["Data"] == [] else None))

        # -- query page: predefined queries, queries saved in the history, a bad query
        C.call("query page", "GET", "/api/v1/pdb/query/predefined",
               check=lambda d: (len(d) == 2, "%d predefined queries" % len(d)))
        saved = 0
        C.query("query page (predefined: inactive nodes)", 'nodes[certname] { node_state = "inactive" }',
                lambda d: (d["Count"] == 0, "%d inactive nodes" % d["Count"]), save=True, whole=True)
        saved += 1
        per = {}
        for r in self.reports:
            per[r["certname"]] = per.get(r["certname"], 0) + 1
        C.query("query page", "reports[certname, count()] { group by certname }",
                lambda d: ({x["certname"]: x["count"] for x in d["Data"]} == per,
                           "%d certnames, %d reports" % (d["Count"], sum(x["count"] for x in d["Data"]))),
                save=True, whole=True)
        saved += 1
        failed = len(self.nodes_in(statuses=["failed"]))
        C.query("query page", "nodes { latest_report_status = 'failed' order by certname }",
                lambda d: (d["Count"] == failed, "%d failed nodes (want %d)" % (d["Count"], failed)), save=True, whole=True)
        saved += 1
        C.query("query page", "events[status, count()] { latest_report? = true group by status }",
                lambda d: (d["Count"] > 0, ", ".join("%s %s" % (x["status"], x["count"]) for x in d["Data"])),
                save=True, whole=True)
        saved += 1
        C.query("query page (a bad query)", "nodes { certname = }",
                lambda d: (bool((d or {}).get("Error")), "400 passed on: %s" % short((d or {}).get("Error", ""), 120)),
                save=True, expect=400)
        saved += 1
        C.call("query page history", "GET", "/api/v1/pdb/query/history",
               check=lambda d: (len(d) == saved, "%d entries (want %d)" % (len(d), saved)))

        # -- backend routes the UI does not call
        C.call("(no page)", "GET", "/api/v1/pdb/fact-names",
               check=lambda d: (d == [], "%s: empty, reportdb stores no facts" % short(d), "NOTE" if d == [] else None))
        want_ec = self.pdb("/pdb/query/v4/event-counts", ["=", "report", self.rep_hash], summarize_by="resource")
        C.call("(no page)", "POST", "/api/v1/pdb/event-counts",
               {"query": ["=", "report", self.rep_hash], "summarize_by": "resource"},
               check=lambda d: (len(d) == len(want_ec) and len(d) > 0, "%d resources (want %d)" % (len(d), len(want_ec))))
        C.call("(no page)", "GET", "/api/v1/view/metrics",
               check=lambda d: (True, "an empty answer (the handler is unfinished); reportdb's /metrics/v2/list answered"))

    def run_ca(self):
        """The CA page against the stub CA: list, sign, then revoke and clean, which deactivate
        the node in PuppetDB (last: it changes the data)."""
        C = self
        n_req_signed = sum(1 for c in self.certs.values() if c["state"] in ("requested", "signed"))
        C.call("CA page", "POST", "/api/v1/ca/status", {"states": ["requested", "signed"]},
               check=lambda d: (len(d["certificate_statuses"]) == n_req_signed,
                                "%d certificates (want %d)" % (len(d["certificate_statuses"]), n_req_signed)))
        C.call("CA page sign", "POST", "/api/v1/ca/status/new-node.example.com/sign",
               check=lambda d: (self.certs["new-node.example.com"]["state"] == "signed", "the stub CA got desired_state signed"))
        self.deactivate("CA page revoke", "POST", "/api/v1/ca/status/%s/revoke" % self.revoke_node, self.revoke_node)
        self.deactivate("CA page clean", "DELETE", "/api/v1/ca/status/%s" % self.clean_node, self.clean_node)
        # a certificate of a node that never reported: PuppetDB accepts the command all the same
        # (and lists the certname as an inactive node)
        self.deactivate("CA page clean (a node without reports)", "DELETE",
                        "/api/v1/ca/status/new-node.example.com", "new-node.example.com", known=False)
        C.call("CA page", "POST", "/api/v1/ca/status", {"states": ["revoked"]},
               check=lambda d: ([c["name"] for c in d["certificate_statuses"]] == [self.revoke_node],
                                "revoked: %s" % ", ".join(c["name"] for c in d["certificate_statuses"])))
        gone = getattr(self, "deactivated", [])
        if gone:
            want = [n for n in self.nodes if n["certname"] not in gone]
            C.call("nodes page after deactivation", "GET", "/api/v1/view/node_overview?",
                   check=self.overview_check(want, None))

    def deactivate(self, what, method, path, certname, known=True):
        st, d, raw, sub = self.ovv(method, path)
        cmd = [r for r in sub if r["kind"] == "pdb" and r["path"].startswith("/pdb/cmd/v1")]
        label = "%s: %s %s" % (what, method, path)
        if not cmd:
            return self.line("FAIL", label, "HTTP %s; openvoxview sent no deactivate node command" % st, sub)
        c = cmd[0]
        self.deactivations = getattr(self, "deactivations", []) + [c]
        ans = jload(c["answer"]) or {}
        if st != 200 or c["status"] != 200 or not ans.get("uuid"):
            return self.line("FAIL", label, "HTTP %s; reportdb answered %s %s" % (st, c["status"], short(c["answer"])), sub)
        # PuppetDB processes commands asynchronously: wait for the node to be inactive
        q = ["and", ["=", "certname", certname], ["=", "node_state", "inactive"]]
        if not known:
            time.sleep(1)
            d2 = self.pdb("/pdb/query/v4/nodes", q)
            return self.line("PASS", label, "HTTP 200, uuid %s; %s" % (ans["uuid"], (
                "listed as an inactive node, as PuppetDB lists it" if d2 else
                "not listed as an inactive node (PuppetDB lists it, deactivated, with null fields)")), sub)
        for _ in range(100):
            d2 = self.pdb("/pdb/query/v4/nodes", q)
            if d2 and d2[0].get("deactivated"):
                break
            time.sleep(0.1)
        else:
            return self.line("FAIL", label, "HTTP 200, uuid %s, but %s is not inactive after 10 s" % (
                ans["uuid"], certname), sub)
        active = [n["certname"] for n in self.pdb("/pdb/query/v4/nodes")]
        ok = certname not in active
        self.deactivated = getattr(self, "deactivated", []) + [certname]
        self.line("PASS" if ok else "FAIL", label, "HTTP 200, uuid %s; %s deactivated %s%s" % (
            ans["uuid"], certname, d2[0]["deactivated"], "" if ok else ", but still listed as active"), sub)

    # -- node_overview: nodes merged with their latest report's event counts
    def overview_check(self, want, note):
        ec = {x["subject"]["title"]: x for x in
              self.pdb("/pdb/query/v4/event-counts", ["=", "latest_report?", True], summarize_by="certname")}

        def f(d):
            d = d or []
            got = sorted(x["certname"] for x in d)
            ok = got == sorted(x["certname"] for x in want)
            badev = [x["certname"] for x in d if
                     x["events"]["failures"] != ec.get(x["certname"], {}).get("failures", 0) or
                     x["events"]["successes"] != ec.get(x["certname"], {}).get("successes", 0)]
            ok = ok and not badev
            by = {}
            for x in d:
                by[x["latest_report_status"]] = by.get(x["latest_report_status"], 0) + 1
            s = "%d nodes (want %d)%s, %d with events%s" % (
                len(d), len(want), (" " + ", ".join("%s %d" % kv for kv in sorted(by.items()))) if by else "",
                sum(1 for x in d if x["events"]["subject_type"]),
                "; wrong event counts for %s" % ", ".join(badev[:3]) if badev else "")
            if note and not d:
                return ok, s + "; " + note, "NOTE" if ok else None
            return ok, s
        return f


CONFIG = """---
listen: 127.0.0.1
port: %(port)d
puppetdb:
  host: 127.0.0.1
  port: %(pdb_port)d
  tls: false
puppetca:
  host: 127.0.0.1
  port: %(ca_port)d
  tls: false
  readonly: false
  deactivate_nodes: true
unreported_hours: 200000
log_level: info
queries:
  - description: Inactive Nodes
    query: nodes[certname] { node_state = "inactive" }
  - description: Failed nodes
    query: nodes[certname, report_timestamp] { latest_report_status = "failed" }
views:
  - name: Inventory
    facts:
      - name: Hostname
        fact: trusted
        renderer: hostname
      - name: IP Address
        fact: networking.ip
      - name: OS
        fact: os
        renderer: os_name
      - name: Puppet Version
        fact: puppetversion
"""


def ts(s):
    # RFC 3339 to a sortable number, any precision, Z or offset
    from datetime import datetime
    if re.fullmatch(r"\d{4}-\d\d-\d\d", s):
        s += "T00:00:00Z"   # a date alone is midnight UTC, for PuppetDB as for reportdb
    s = re.sub(r"\.(\d+)", lambda m: "." + (m.group(1) + "000000")[:6], s.replace("Z", "+00:00"))
    return datetime.fromisoformat(s).timestamp()


def same_hashes(got, want):
    return [x["hash"] for x in got] == [x["hash"] for x in want] or (
        sorted(x["hash"] for x in got) == sorted(x["hash"] for x in want) and same_times(got, want))


def same_times(got, want):
    return [ts(x["end_time"]) for x in got] == [ts(x["end_time"]) for x in want]


def is_sorted(d, col, desc):
    vals = [ts(x[col]) if col.endswith("_time") else x[col] for x in d]
    return vals == sorted(vals, reverse=desc)


# ------------------------------------------------------------------ the real UI in headless Chromium

DOM_JS = r"""(() => {
  const txt = e => (e ? e.innerText.replace(/\s+/g, ' ').trim() : null);
  const tiles = {};
  document.querySelectorAll('.q-card .q-item').forEach(it => {
    const l = it.querySelectorAll('.q-item__label');
    if (l.length >= 2 && l[0].classList.contains('text-h6')) tiles[txt(l[1])] = txt(l[0]);
  });
  const tables = [...document.querySelectorAll('.q-table__container')].map(t => ({
    rows: t.querySelectorAll('tbody tr').length,
    bottom: txt(t.querySelector('.q-table__bottom')),
  }));
  return {title: document.title, tiles, tables, text: txt(document.querySelector('.q-page')) || ''};
})()"""


def of_total(table):
    """Quasar's "1-5 of 40" under a table, or its rows when it has no pagination."""
    b = (table or {}).get("bottom") or ""
    m = re.search(r"of (\d+)", b)
    if m:
        return int(m.group(1))
    if "No data" in b:
        return 0
    return (table or {}).get("rows")


def browser_check(C, args):
    sys.path.insert(0, os.path.join(args.shared, "clients", "puppetboard", "lib"))
    try:
        import cdp
    except ImportError:
        print("NOTE browser: %s/clients/puppetboard/lib/cdp.py is missing; the UI is not looked at" % args.shared)
        C.notes += 1
        return
    st, _, body = http("GET", C.base + "/ui/")
    if st != 200 or b"<script" not in body:
        print("NOTE browser: this openvoxview binary has no UI built in (GET /ui/ answered %s "
              "without a script); use a build with its UI, as its releases are, to look at the pages" % st)
        C.notes += 1
        return
    shots = os.path.join(args.out, "screens")
    os.makedirs(shots, exist_ok=True)
    b = cdp.Browser(chromium=args.chromium, width=1400, height=1000,
                    log_path=os.path.join(args.out, "chromium.log"))
    try:
        page = b.new_page()
        print("browser: %s" % b.version.get("product"), flush=True)
        n = [0]

        def load(route):
            n[0] += 1
            m = C.rec.mark()
            r = page.goto("%s/ui/?p=%d#%s" % (C.base, n[0], route), timeout=60, idle_ms=500)
            time.sleep(0.2)
            return r, C.rec.since(m)

        api_reqs = {(r["method"], r["path"], r["body"]) for r in C.rec.since(0) if r["kind"] == "pdb"}
        ui_from = C.rec.mark()
        load("/dashboard")
        for env in ("*", "production"):
            page.evaluate("localStorage.setItem('settings', JSON.stringify("
                          "{environment: %s, darkMode: false, viewUserSettings: {}}))" % json.dumps(env))
            e = None if env == "*" else env
            nodes = C.nodes_in(e)
            wr = [r for r in C.node_reports if not e or r["environment"] == e][:10]
            node_known = e is not None and not C.catenv   # no catalog_environment: empty details
            filtered = C.reports_where(env=e, regex="prod", start="2025-01-07", end="2025-01-10", latest=True)
            pages = [
                ("dashboard", "/dashboard", lambda d: dash_ok(C, d, nodes)),
                ("nodes", "/nodes", lambda d: (of_total(d["tables"][0] if d["tables"] else None) == len(nodes),
                                               "table of %s nodes (want %d)" % (
                                                   of_total(d["tables"][0] if d["tables"] else None), len(nodes)))),
                ("node", "/node/" + C.node, lambda d: (
                    any(t["rows"] == len(wr) and "per page" in (t["bottom"] or "") for t in d["tables"]) and
                    (node_known or "Certname %s" % C.node in d["text"]),
                    "details %s, reports table %s rows (want %d)" % (
                        "show %s" % C.node if "Certname %s" % C.node in d["text"] else "EMPTY",
                        [t["rows"] for t in d["tables"] if "per page" in (t["bottom"] or "")], len(wr)))),
                ("reports", "/reports", lambda d: (
                    d["tables"] and d["tables"][0]["rows"] == min(100, len(C.reports_where(env=e))),
                    "reports table %s rows (want %d)" % (d["tables"][0]["rows"] if d["tables"] else None,
                                                          min(100, len(C.reports_where(env=e)))))),
                ("reports-filtered", "/reports?filter=prod&endTimeStart=2025-01-07&endTimeEnd=2025-01-10"
                 "&onlyLatest=true", lambda d: (
                    d["tables"] and d["tables"][0]["rows"] == len(filtered),
                    "reports table %s rows (want %d)" % (d["tables"][0]["rows"] if d["tables"] else None,
                                                          len(filtered)))),
                ("report", "/report/%s/%s" % (C.rep_cert, C.rep_hash), lambda d: (
                    any(of_total(t) == C.rep_events for t in d["tables"]),
                    "tables %s (want %d events)" % ([of_total(t) for t in d["tables"]], C.rep_events))),
                ("facts", "/facts", lambda d: (True, "renders, no facts")),
                ("fact", "/fact/os", lambda d: (True, "renders, %s rows" % [of_total(t) for t in d["tables"]])),
                ("query", "/query", lambda d: (True, "renders")),
                ("view", "/view/Inventory", lambda d: (True, "renders, %s rows" % [of_total(t) for t in d["tables"]])),
                ("ca", "/ca", lambda d: (d["tables"] and of_total(d["tables"][0]) == len(C.certs),
                                         "certificates table of %s (want %d)" % (
                                             of_total(d["tables"][0]) if d["tables"] else None, len(C.certs)))),
            ]
            # the pages whose calls depend on the environment or on --catalog-environment-from-reports
            # are looked at in every run; the others once, for all environments, without it
            keep = ("dashboard", "nodes", "node", "reports", "reports-filtered") if (e or C.catenv) else None
            for i, (name, route, check) in enumerate(pages):
                if keep and name not in keep:
                    continue
                t1 = time.time()
                r, sub = load(route)
                t2 = time.time()
                d = page.evaluate(DOM_JS) or {}
                if name == "query":
                    sub += run_query_in_ui(C, page)
                    d = page.evaluate(DOM_JS) or {}
                page.screenshot(os.path.join(shots, "%s-%02d-%s.png" % ("all" if e is None else e, i, name)))
                api_bad = [q for q in r["requests"] if "/api/" in q["url"] and (q["status"] or 0) >= 400]
                pdb_bad = [q for q in sub if q["kind"] == "pdb" and not 200 <= q["status"] < 300]
                ok, summary = check(d)
                ok = bool(ok)
                summary += " (%.1f s + %.1f s)" % (t2 - t1, time.time() - t2)
                exc = r["exceptions"]
                verdict = "PASS" if ok and not exc and not api_bad and not pdb_bad and not r["timed_out"] else "FAIL"
                if exc:
                    summary += "; JS exception: %s" % short(exc[0], 150)
                if api_bad or pdb_bad:
                    summary += "; failed calls: %s" % ", ".join(
                        ["%s %s" % (q["status"], q["url"].split("/api/")[-1]) for q in api_bad] +
                        ["reportdb %s %s" % (q["status"], q["path"]) for q in pdb_bad])
                if node_known and name == "node" and verdict == "PASS" and "EMPTY" in summary:
                    verdict = "NOTE"
                    summary += " (known: no node has catalog_environment %s without "  \
                               "--catalog-environment-from-reports, so the details panel is empty)" % env
                elif verdict == "PASS" and name in ("dashboard", "nodes") and e and not nodes:
                    verdict = "NOTE"
                    summary += " (known: empty without --catalog-environment-from-reports)"
                C.line(verdict, "UI %s page (env %s) #%s" % (name, env, route), summary, sub)
        extra = sorted({"%s %s %s" % (r["method"], r["path"], short(r["body"], 200)) for r in C.rec.since(ui_from)
                        if r["kind"] == "pdb" and (r["method"], r["path"], r["body"]) not in api_reqs})
        print("UI: %d distinct PuppetDB requests from the pages; %s" % (
            len({(r["method"], r["path"], r["body"]) for r in C.rec.since(ui_from) if r["kind"] == "pdb"}),
            "all of them made by the API calls above too" if not extra else
            "not made by the API calls above: " + "; ".join(extra)), flush=True)
    finally:
        b.close()


def run_query_in_ui(C, page):
    """Types a query on the query page and presses Execute, as a user does."""
    m = C.rec.mark()
    page.evaluate(r"""(() => {
      const ta = document.querySelector('textarea');
      ta.value = 'reports[certname, count()] { group by certname }';
      ta.dispatchEvent(new Event('input', {bubbles: true}));
      return true; })()""")
    time.sleep(0.3)
    page.evaluate(r"""(() => { [...document.querySelectorAll('button')]
      .find(b => /execute/i.test(b.innerText)).click(); return true; })()""")
    for _ in range(50):
        sub = C.rec.since(m)
        if any(q["path"].startswith("/pdb/query/v4") for q in sub):
            break
        time.sleep(0.1)
    time.sleep(0.7)
    return C.rec.since(m)


def dash_ok(C, d, nodes):
    t = d.get("tiles") or {}
    by = {}
    for n in nodes:
        by[n["latest_report_status"]] = by.get(n["latest_report_status"], 0) + 1
    want = {"with status failed": by.get("failed", 0), "with status changed": by.get("changed", 0),
            "with status unchanged": by.get("unchanged", 0), "Population": len(nodes),
            "Resources managed": 0}
    got = {}
    for cap, val in t.items():
        m = re.match(r"-?[\d.]+|NaN", val or "")
        got[cap] = m.group(0) if m else val
    bad = [k for k, v in want.items() if str(got.get(k)) != str(v)]
    return not bad, "tiles %s%s" % (", ".join("%s %s" % (k.replace("with status ", ""), got.get(k)) for k in want),
                                     "; want %s" % ", ".join("%s %s" % (k, want[k]) for k in bad) if bad else "")


# ------------------------------------------------------------------ main

def main():
    p = argparse.ArgumentParser()
    p.add_argument("--reportdb", required=True)
    p.add_argument("--openvoxview", required=True)
    p.add_argument("--mode", choices=("plain", "catenv"), required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--shared", required=True)
    p.add_argument("--chromium", default="")
    a = p.parse_args()
    # stopped by the script (SIGTERM): unwind, so that openvoxview and Chromium are stopped too
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    C = Check(a)
    t0 = time.time()
    try:
        C.truth()
        C.start()
        print("openvoxview %s at %s, PuppetDB = the recording proxy in front of %s, Puppet CA = a stub" % (
            (jload(http("GET", C.base + "/api/v1/version")[2]) or {}).get("Data", {}).get("Version"),
            C.base, C.rdb), flush=True)
        C.run()
        if a.chromium:
            browser_check(C, a)
        else:
            print("NOTE browser: no Chromium; the UI is not looked at (the API calls above are the ones "
                  "its pages make)")
            C.notes += 1
        C.run_ca()
    finally:
        C.stop()
        with open(os.path.join(a.out, "summary.json"), "w") as f:
            json.dump({"mode": a.mode, "results": C.summary,
                       "deactivate_requests": getattr(C, "deactivations", [])}, f, indent=1)
    for c in getattr(C, "deactivations", [])[:1]:
        print("openvoxview's deactivate node request: %s %s\n  Content-Type: %s\n  body: %s\n  reportdb: %s %s" % (
            c["method"], c["path"], c["content_type"], c["body"], c["status"], short(c["answer"], 300)))
    print("(%s, %.0f s, %d notes)" % (a.mode, time.time() - t0, C.notes))
    print("%d passed, %d failed" % (C.passed, C.failed))
    return 1 if C.failed else 0


if __name__ == "__main__":
    sys.exit(main())
PY
}

main "$@"
