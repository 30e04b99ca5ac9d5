package httpapi_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"reportdb/httpapi"
	"reportdb/upstream"
)

// fakePuppetDB is an upstream PuppetDB: it records what it receives and
// answers /nodes with fixed rows and every other path with a marker.
type fakePuppetDB struct {
	mu   sync.Mutex
	got  []fakeReq
	srv  *httptest.Server
	down bool
}

type fakeReq struct {
	Method, Path, RawQuery, Body, Encoding string
}

const fakeNodes = `[
 {"certname":"web03.prod.example.com","facts_timestamp":"2026-11-20T10:00:00.000Z","catalog_timestamp":"2026-11-20T10:00:05.000Z","catalog_environment":"production","facts_environment":"facts_env","deactivated":null,"expired":null},
 {"certname":"db01.prod.example.com","facts_timestamp":"2026-11-21T10:00:00.000Z","catalog_timestamp":null,"catalog_environment":"staging","facts_environment":"facts_env","deactivated":"2026-11-22T00:00:00.000Z","expired":null},
 {"certname":"factsonly.example.com","facts_timestamp":"2026-11-22T10:00:00.000Z","catalog_timestamp":null,"catalog_environment":null,"facts_environment":"other","deactivated":null,"expired":null}
]`

func newFakePuppetDB(t *testing.T) *fakePuppetDB {
	f := &fakePuppetDB{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.got = append(f.got, fakeReq{r.Method, r.URL.Path, r.URL.RawQuery, string(body), r.Header.Get("Content-Encoding")})
		f.mu.Unlock()
		switch {
		case r.URL.Path == "/pdb/query/v4/nodes":
			w.Header().Set("Content-Type", "application/json;charset=utf-8")
			w.Write([]byte(fakeNodes))
		case strings.Contains(r.URL.RawQuery, "nosuch"):
			w.Header().Set("Content-Type", "text/plain;charset=utf-8")
			w.WriteHeader(400)
			w.Write([]byte("'nosuch' is not a queryable object for facts (upstream)"))
		default:
			w.Header().Set("Content-Type", "application/json;charset=utf-8")
			w.Header().Set("X-Records", "7")
			w.Write([]byte(`[{"upstream":"` + r.URL.Path + `"}]`))
		}
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakePuppetDB) requests() []fakeReq {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeReq(nil), f.got...)
}

// freshReport is a corpus report under a new certname (not a duplicate).
func freshReport(t *testing.T) (string, []byte) {
	cn, body := sampleReport(t)
	return "fresh.example.com", bytes.ReplaceAll(body, []byte(cn), []byte("fresh.example.com"))
}

func upstreamServer(t *testing.T, f *fakePuppetDB) http.Handler {
	up, err := upstream.New(upstream.Options{URL: f.srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return corpusServer(t, httpapi.Config{Upstream: up})
}

func TestUpstreamForwardsCommands(t *testing.T) {
	f := newFakePuppetDB(t)
	h := upstreamServer(t, f)
	before := reportCount(t, h)
	n := len(f.requests())

	facts := `{"certname":"a.example.com","environment":"production","values":{"os":"Debian"},"producer_timestamp":"2026-11-23T10:00:00.000Z","producer":"p"}`
	r := do(t, h, "POST", "/pdb/cmd/v1?command=replace_facts&version=5&certname=a.example.com", []byte(facts), map[string]string{"Content-Type": "application/json"})
	if r.code != 200 || !strings.Contains(r.body, `"upstream":"/pdb/cmd/v1"`) {
		t.Fatalf("replace facts: %d %s", r.code, r.body)
	}
	// the envelope form, gzip: recorded here, then forwarded (decoded)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(`{"command":"deactivate node","version":3,"payload":{"certname":"b.example.com"}}`))
	zw.Close()
	r = do(t, h, "POST", "/pdb/cmd/v1", gz.Bytes(), map[string]string{"Content-Type": "application/json", "Content-Encoding": "gzip"})
	if r.code != 200 {
		t.Fatalf("deactivate node: %d %s", r.code, r.body)
	}
	got := f.requests()[n:]
	if len(got) != 2 || got[0].Body != facts || got[0].RawQuery != "command=replace_facts&version=5&certname=a.example.com" ||
		got[1].Body != `{"command":"deactivate node","version":3,"payload":{"certname":"b.example.com"}}` || got[1].Encoding != "" {
		t.Fatalf("upstream received %+v", got)
	}
	// and recorded here: b's reports leave the root endpoint's answers
	for _, q := range []string{`["from","reports",["=","certname","b.example.com"]]`, `["from","events",["=","certname","b.example.com"]]`} {
		r = do(t, h, "GET", "/pdb/query/v4?query="+url.QueryEscape(q), nil, nil)
		if r.code != 200 || r.body != "[]" {
			t.Errorf("%s after deactivating b: %d %.200s", q, r.code, r.body)
		}
	}
	// store report stays here
	cn, body := freshReport(t)
	r = do(t, h, "POST", "/pdb/cmd/v1?command=store_report&version=8&certname="+cn, body, nil)
	if r.code != 200 || reportCount(t, h)/100000 != before/100000+1 || len(f.requests()) != n+2 {
		t.Fatalf("store report: %d %s; reports %d -> %d; upstream requests %d", r.code, r.body, before, reportCount(t, h), len(f.requests())-n)
	}
}

func TestUpstreamForwardsQueries(t *testing.T) {
	f := newFakePuppetDB(t)
	h := upstreamServer(t, f)
	for _, target := range []string{
		"/pdb/query/v4/facts?query=" + url.QueryEscape(`["=","name","os"]`),
		"/pdb/query/v4/fact-names",
		"/pdb/query/v4/inventory",
		"/pdb/query/v4/catalogs/web03.prod.example.com",
		"/pdb/query/v4/nodes/web03.prod.example.com/facts",
		"/pdb/query/v4/environments/production/resources",
		"/pdb/query/v4?query=" + url.QueryEscape(`facts{name="os"}`),
		"/pdb/query/v4?query=" + url.QueryEscape(`["from","resources",["extract",[["function","count"]]]]`),
	} {
		r := do(t, h, "GET", target, nil, nil)
		u, _ := url.Parse(target)
		if r.code != 200 || r.h.Get("X-Records") != "7" || r.body != `[{"upstream":"`+u.Path+`"}]` {
			t.Errorf("%s: %d X-Records=%q %s", target, r.code, r.h.Get("X-Records"), r.body)
		}
	}
	// an error answer is passed through
	r := do(t, h, "GET", "/pdb/query/v4/facts?query="+url.QueryEscape(`["=","nosuch",1]`), nil, nil)
	if r.code != 400 || r.body != "'nosuch' is not a queryable object for facts (upstream)" {
		t.Errorf("error passthrough: %d %s", r.code, r.body)
	}
	// POSTed root query on a forwarded entity: the body goes along
	n := len(f.requests())
	q := `{"query":["from","facts"]}`
	r = do(t, h, "POST", "/pdb/query/v4", []byte(q), map[string]string{"Content-Type": "application/json"})
	if got := f.requests(); r.code != 200 || len(got) != n+1 || got[n].Body != q || got[n].Method != "POST" {
		t.Fatalf("POST root: %d %s", r.code, r.body)
	}
	// reports stay here
	n = len(f.requests())
	r = do(t, h, "GET", "/pdb/query/v4?query="+url.QueryEscape(`reports[count()]{}`), nil, nil)
	if r.code != 200 || r.body != `[{"count":149}]` || len(f.requests()) != n {
		t.Fatalf("root reports: %d %s, upstream asked %d times", r.code, r.body, len(f.requests())-n)
	}
}

func TestUpstreamMergesNodes(t *testing.T) {
	f := newFakePuppetDB(t)
	h := upstreamServer(t, f)
	get := func(q url.Values) ([]map[string]any, resp) {
		t.Helper()
		r := do(t, h, "GET", "/pdb/query/v4/nodes?"+q.Encode(), nil, nil)
		var rows []map[string]any
		if err := json.Unmarshal([]byte(r.body), &rows); err != nil || r.code != 200 {
			t.Fatalf("%v: %d %s", q, r.code, r.body)
		}
		return rows, r
	}
	// active nodes: 40 from reports, minus db01 (deactivated upstream), plus factsonly
	rows, _ := get(url.Values{})
	byName := map[string]map[string]any{}
	for _, r := range rows {
		byName[r["certname"].(string)] = r
	}
	if len(rows) != 40 || byName["db01.prod.example.com"] != nil || byName["factsonly.example.com"] == nil {
		t.Fatalf("%d nodes; db01 %v; factsonly %v", len(rows), byName["db01.prod.example.com"], byName["factsonly.example.com"])
	}
	w := byName["web03.prod.example.com"]
	if w["facts_environment"] != "facts_env" || w["catalog_environment"] != "production" || w["report_environment"] != "production" ||
		w["facts_timestamp"] != "2026-11-20T10:00:00.000Z" || w["latest_report_hash"] == nil {
		t.Fatalf("web03 not merged: %v", w)
	}
	// a filter over an upstream field and a report field (the merge's
	// semantics: package upstream's tests)
	rows, _ = get(url.Values{"query": {`["and",["=","catalog_environment","production"],["=","latest_report_status","changed"]]`}})
	if len(rows) != 1 || rows[0]["certname"] != "web03.prod.example.com" {
		t.Errorf("filter on both sides: %v", rows)
	}
	// order_by an upstream field, paging, X-Records
	rows, r := get(url.Values{"order_by": {`[{"field":"facts_timestamp","order":"asc"}]`}, "limit": {"2"}, "include_total": {"true"}})
	if r.h.Get("X-Records") != "40" || len(rows) != 2 || rows[0]["certname"] != "web03.prod.example.com" || rows[1]["certname"] != "factsonly.example.com" {
		t.Fatalf("ordered: X-Records %q %v", r.h.Get("X-Records"), rows)
	}
	rows, _ = get(url.Values{"query": {`["extract",[["function","count"],"facts_environment"],["null?","facts_environment",false],["group_by","facts_environment"]]`}})
	if len(rows) != 2 || rows[0]["count"] != float64(1) {
		t.Fatalf("count by facts_environment: %v", rows)
	}
	// root PQL and /nodes/<certname>
	rr := do(t, h, "GET", "/pdb/query/v4?query="+url.QueryEscape(`nodes[certname]{facts_environment = "other"}`), nil, nil)
	if rr.code != 200 || rr.body != `[{"certname":"factsonly.example.com"}]` {
		t.Fatalf("root nodes: %d %s", rr.code, rr.body)
	}
	rr = do(t, h, "GET", "/pdb/query/v4/nodes/factsonly.example.com", nil, nil)
	if rr.code != 200 || !strings.Contains(rr.body, `"facts_environment" : "other"`) {
		t.Fatalf("one node: %d %s", rr.code, rr.body)
	}
	if rr = do(t, h, "GET", "/pdb/query/v4/nodes/nope", nil, nil); rr.code != 404 {
		t.Fatalf("unknown node: %d %s", rr.code, rr.body)
	}
	// a subquery on an upstream entity inside a merged nodes query: a clear 400
	rr = do(t, h, "GET", "/pdb/query/v4/nodes?query="+url.QueryEscape(`["in","certname",["extract","certname",["select_facts",["=","name","os"]]]]`), nil, nil)
	if rr.code != 400 || !strings.Contains(rr.body, "subquery on facts") {
		t.Fatalf("facts subquery: %d %s", rr.code, rr.body)
	}
	// Jolokia: node counts of the merged nodes; other beans are the upstream's
	rr = do(t, h, "GET", "/metrics/v2/read/puppetlabs.puppetdb.population:name=num-inactive-nodes", nil, nil)
	if !strings.Contains(rr.body, `"value":{"Value":1}`) {
		t.Fatalf("num-inactive-nodes: %s", rr.body)
	}
	rr = do(t, h, "GET", "/metrics/v2/read/java.lang:type=Memory", nil, nil)
	if rr.body != `[{"upstream":"/metrics/v2/read/java.lang:type=Memory"}]` {
		t.Fatalf("JVM bean not forwarded: %s", rr.body)
	}
}

func TestUpstreamDown(t *testing.T) {
	f := newFakePuppetDB(t)
	h := upstreamServer(t, f)
	f.srv.Close()
	for _, target := range []string{"/pdb/query/v4/facts", "/pdb/query/v4/nodes", "/pdb/query/v4/nodes/web03.prod.example.com",
		"/pdb/query/v4?query=" + url.QueryEscape(`facts{}`)} {
		r := do(t, h, "GET", target, nil, nil)
		if r.code != 503 || !strings.Contains(r.body, "upstream PuppetDB is unavailable") {
			t.Errorf("%s: %d %s, want 503", target, r.code, r.body)
		}
	}
	r := do(t, h, "POST", "/pdb/cmd/v1?command=replace_facts&version=5&certname=a", []byte(`{}`), nil)
	if r.code != 503 {
		t.Errorf("replace facts with the upstream down: %d %s", r.code, r.body)
	}
	before := reportCount(t, h)
	cn, body := freshReport(t)
	if r := do(t, h, "POST", "/pdb/cmd/v1?command=store_report&version=8&certname="+cn, body, nil); r.code != 200 || reportCount(t, h)/100000 != before/100000+1 {
		t.Fatalf("store report with the upstream down: %d %s", r.code, r.body)
	}
	if r := do(t, h, "GET", "/pdb/query/v4/reports?query="+url.QueryEscape(`["extract",[["function","count"]]]`), nil, nil); r.code != 200 {
		t.Fatalf("reports with the upstream down: %d %s", r.code, r.body)
	}
}
