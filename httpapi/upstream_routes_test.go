package httpapi

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"reportdb/ingest"
	"reportdb/metrics"
	"reportdb/sqlite"
	"reportdb/upstream"
)

// TestUpstreamRoutes: in front of an upstream PuppetDB, the route table
// sends each path to the upstream (forwarded), to the merged nodes, or to
// reportdb's own handler, by the same rules for the paths no route names
// (decoded, so a %2F is a slash); what the upstream answers is counted
// under "other", what reportdb answers under its route's label.
func TestUpstreamRoutes(t *testing.T) {
	var mu sync.Mutex
	var got []string
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path+" "+r.URL.Query().Get("query"))
		mu.Unlock()
		if r.URL.Path == "/pdb/query/v4/nodes" {
			w.Write([]byte(`[{"certname":"a.example.com","facts_timestamp":null,"catalog_timestamp":null,"catalog_environment":null,"facts_environment":"x","deactivated":null,"expired":null}]`))
			return
		}
		w.Write([]byte(`[{"upstream":true}]`))
	}))
	defer fake.Close()
	up, err := upstream.New(upstream.Options{URL: fake.URL})
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlite.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c := ingest.NewCommitter(db, 64)
	defer c.Close()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	s := New(Config{Upstream: up}, db, c, quiet)

	const merged = `GET /pdb/query/v4/nodes ["extract",["certname","facts_timestamp","catalog_timestamp","catalog_environment","facts_environment","deactivated","expired"],["=","node_state","any"]]`
	q := func(s string) string { return "?query=" + url.QueryEscape(s) }
	for _, c := range []struct {
		method, target, body string
		by                   string // "upstream" (the request itself), "merged" (the upstream's nodes) or "local"
		label                string // the query label counted; "" for a submission
		status               int
	}{
		{"GET", "/pdb/query/v4/facts", "", "upstream", "other", 200},
		{"GET", "/pdb/query/v4/facts/os/x/y", "", "upstream", "other", 200},
		{"GET", "/pdb/query/v4/fact-names", "", "upstream", "other", 200},
		{"GET", "/pdb/query/v4/fact-names/x", "", "upstream", "other", 200},
		{"GET", "/pdb/query/v4/catalogs/a.example.com/edges", "", "upstream", "other", 200},
		{"GET", "/pdb/query/v4/nodes/a.example.com/facts", "", "upstream", "other", 200},
		{"GET", "/pdb/query/v4/nodes/a.example.com/other/path", "", "upstream", "other", 200},
		{"GET", "/pdb/query/v4/nodes/a%2Fb", "", "upstream", "other", 200},
		{"GET", "/pdb/query/v4/environments/production/facts", "", "upstream", "other", 200},
		{"GET", "/pdb/query/v4/environments/a/b/resources", "", "upstream", "other", 200},
		{"GET", "/pdb/query/v4" + q(`facts{name = "os"}`), "", "upstream", "other", 200},
		{"POST", "/pdb/query/v4", `{"query":["from","resources"]}`, "upstream", "other", 200},
		{"GET", "/metrics/v2/read/java.lang:type=Memory", "", "upstream", "other", 200},
		{"POST", "/pdb/cmd/v1?command=replace_facts&version=5&certname=a", `{}`, "upstream", "other", 200},
		{"POST", "/pdb/cmd/v1", `{"command":"replace catalog","version":9,"payload":{}}`, "upstream", "other", 200},

		{"GET", "/pdb/query/v4/nodes", "", "merged", "other", 200},
		{"GET", "/pdb/query/v4/nodes/a.example.com", "", "merged", "other", 200},
		{"GET", "/pdb/query/v4/nodes/nope", "", "merged", "other", 404},
		{"GET", "/pdb/query/v4/nodes/", "", "merged", "other", 404},
		{"GET", "/pdb/query/v4" + q(`nodes{facts_environment = "x"}`), "", "merged", "other", 200},

		{"GET", "/pdb/query/v4/reports", "", "local", "reports", 200},
		{"GET", "/pdb/query/v4/producers", "", "local", "producers", 200},
		{"GET", "/pdb/query/v4/environments/production", "", "local", "environments/<name>", 404},
		{"GET", "/pdb/query/v4/environments/production/facts/os", "", "local", "other", 302},
		{"GET", "/pdb/query/v4/events/", "", "local", "other", 302},
		{"GET", "/pdb/query/v5/events", "", "local", "other", 302},
		{"GET", "/pdb/query/v4" + q(`reports[count()]{}`), "", "local", "root", 200},
		{"GET", "/pdb/query/v4" + q(`["from","nosuch"]`), "", "local", "root", 400},
		{"GET", "/metrics/v2/read/puppetlabs.puppetdb.population:name=num-nodes", "", "merged", "metrics/v2", 200},
		{"GET", "/metrics/v2/list", "", "local", "metrics/v2", 200},
		{"GET", "/pdb/meta/v1/version", "", "local", "meta/version", 200},
		{"POST", "/pdb/cmd/v1?command=store_report&version=8&certname=a", `{`, "local", "", 400},
		{"GET", "/pdb/cmd/v1?command=replace_facts", "", "local", "", 400},
	} {
		mu.Lock()
		got = nil
		mu.Unlock()
		m := metrics.New(Endpoints()...)
		h := Instrument(s, InstrumentOptions{Log: quiet, Metrics: m})
		rec := httptest.NewRecorder()
		var body io.Reader
		if c.body != "" {
			body = strings.NewReader(c.body)
		}
		req := httptest.NewRequest(c.method, c.target, body)
		if c.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		h.ServeHTTP(rec, req)
		mu.Lock()
		asked := append([]string(nil), got...)
		mu.Unlock()
		name := c.method + " " + c.target
		switch c.by {
		case "upstream":
			u, _ := url.Parse(c.target)
			if len(asked) != 1 || !strings.HasPrefix(asked[0], c.method+" "+u.Path+" ") || rec.Body.String() != `[{"upstream":true}]` {
				t.Errorf("%s: not forwarded: upstream got %q, answer %d %.200s", name, asked, rec.Code, rec.Body)
			}
		case "merged":
			if len(asked) == 0 || slices.ContainsFunc(asked, func(a string) bool { return a != merged }) {
				t.Errorf("%s: not merged: upstream got %q", name, asked)
			}
		case "local":
			if len(asked) != 0 {
				t.Errorf("%s: not reportdb's own: upstream got %q", name, asked)
			}
		}
		if rec.Code != c.status {
			t.Errorf("%s: %d %.200s, want %d", name, rec.Code, rec.Body, c.status)
		}
		if counted := queryLabels(t, m); c.label == "" && len(counted) != 0 || c.label != "" && (len(counted) != 1 || counted[0] != c.label) {
			t.Errorf("%s: counted as queries under %v, want %q", name, counted, c.label)
		}
	}
}

// queryLabels are the endpoint labels of the queries m counted.
func queryLabels(t *testing.T, m *metrics.Metrics) []string {
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range fams {
		if f.GetName() != "reportdb_query_requests_total" {
			continue
		}
		for _, mt := range f.Metric {
			for _, lp := range mt.Label {
				if lp.GetName() == "endpoint" && mt.Counter.GetValue() > 0 {
					out = append(out, lp.GetValue())
				}
			}
		}
	}
	return out
}
