package httpapi_test

import (
	"encoding/json"
	"net/url"
	"os"
	"strings"
	"testing"

	"reportdb/httpapi"
	"reportdb/query"
)

// TestPuppetDBEmptyAnswers replays the probes recorded from a real PuppetDB
// 7.12.1 loaded with the conformance corpus (scripts/record-puppetdb-empty.py)
// against reportdb loaded with the same corpus: the endpoints of facts,
// catalogs, resources, ... must answer exactly as PuppetDB does with no such
// data (status, Content-Type, X-Records, body).
func TestPuppetDBEmptyAnswers(t *testing.T) {
	raw, err := os.ReadFile("testdata/puppetdb-empty.json")
	if err != nil {
		t.Fatal(err)
	}
	var fx struct {
		Probes []struct {
			Method, Path string
			Params       map[string]any
			Status       int
			ContentType  string `json:"content_type"`
			Body         string
			XRecords     *string `json:"x_records"`
		}
	}
	if err := json.Unmarshal(raw, &fx); err != nil {
		t.Fatal(err)
	}
	if len(fx.Probes) < 100 {
		t.Fatalf("only %d probes in the fixture", len(fx.Probes))
	}
	h := corpusServer(t, httpapi.Config{})
	for _, p := range fx.Probes {
		target := "/pdb/query/v4"
		if p.Path != "" {
			target += "/" + p.Path
		}
		var body []byte
		headers := map[string]string{}
		if p.Method == "GET" {
			v := url.Values{}
			for k, x := range p.Params {
				v.Set(k, x.(string))
			}
			if len(v) > 0 {
				target += "?" + v.Encode()
			}
		} else {
			body, _ = json.Marshal(p.Params)
			headers["Content-Type"] = "application/json"
		}
		r := do(t, h, p.Method, target, body, headers)
		name := p.Method + " " + target
		if r.code != p.Status || r.body != p.Body {
			t.Errorf("%s:\n got %d %q\nwant %d %q", name, r.code, r.body, p.Status, p.Body)
			continue
		}
		if ct := r.h.Get("Content-Type"); !strings.EqualFold(strings.ReplaceAll(ct, " ", ""), strings.ReplaceAll(p.ContentType, " ", "")) {
			t.Errorf("%s: Content-Type %q, want %q", name, ct, p.ContentType)
		}
		if p.XRecords != nil && r.h.Get("X-Records") != *p.XRecords {
			t.Errorf("%s: X-Records %q, want %q", name, r.h.Get("X-Records"), *p.XRecords)
		}
	}
}

// PuppetDB 7.12.1 answers these with a 500 or a 400 quoting a Clojure
// internal; reportdb answers as a correct server does.
func TestPuppetDBEmptyBeyondPuppetDB(t *testing.T) {
	h := corpusServer(t, httpapi.Config{})
	for target, want := range map[string]string{
		"/pdb/query/v4/fact-names?query=" + url.QueryEscape(`["extract",[["function","count"]]]`): `[{"count":0}]`,
		"/pdb/query/v4?query=" + url.QueryEscape(`["from","producers"]`):                          `[{"name":"puppet.example.com"},{"name":"puppet02.example.com"}]`,
	} {
		if r := do(t, h, "GET", target, nil, nil); r.code != 200 || r.body != want {
			t.Errorf("%s: %d %q, want 200 %q", target, r.code, r.body, want)
		}
	}
	for _, e := range []string{"facts", "fact-names", "catalogs", "packages", "resources"} {
		target := "/pdb/query/v4/" + e + "?query=" + url.QueryEscape(`["nosuchop","certname","x"]`)
		if r := do(t, h, "GET", target, nil, nil); r.code != 400 || !strings.Contains(r.body, "not a valid query operator") {
			t.Errorf("%s: %d %q, want 400 naming the operator", target, r.code, r.body)
		}
	}
}

// --catalog-environment-from-reports: catalog_environment is the latest
// report's environment in output, filters (also in subqueries) and order_by;
// off (the default) it is null, as PuppetDB answers without catalogs.
func TestCatalogEnvironmentFromReports(t *testing.T) {
	h := corpusServer(t, httpapi.Config{})
	count := func(q string) string {
		t.Helper()
		r := do(t, h, "GET", "/pdb/query/v4/nodes?query="+url.QueryEscape(`["extract",[["function","count"]],`+q+`]`), nil, nil)
		if r.code != 200 {
			t.Fatalf("%s: %d %s", q, r.code, r.body)
		}
		return r.body
	}
	byReport := count(`["=","report_environment","production"]`)
	if byReport == `[{"count":0}]` {
		t.Fatal("corpus has no production node")
	}
	if got := count(`["=","catalog_environment","production"]`); got != `[{"count":0}]` {
		t.Fatalf("default: catalog_environment=production counts %s, want 0", got)
	}
	query.SetCatalogEnvironmentFromReports(true)
	t.Cleanup(func() { query.SetCatalogEnvironmentFromReports(false) })
	if got := count(`["=","catalog_environment","production"]`); got != byReport {
		t.Fatalf("catalog_environment=production counts %s, report_environment %s", got, byReport)
	}
	if got := count(`["null?","catalog_environment",false]`); got != count(`["null?","report_environment",false]`) {
		t.Fatalf("non-null catalog_environment: %s", got)
	}
	r := do(t, h, "GET", "/pdb/query/v4/nodes?order_by="+url.QueryEscape(`[{"field":"catalog_environment","order":"desc"},{"field":"certname"}]`), nil, nil)
	var nodes []map[string]any
	if err := json.Unmarshal([]byte(r.body), &nodes); err != nil || len(nodes) == 0 {
		t.Fatalf("nodes: %d %s", r.code, r.body)
	}
	for i, n := range nodes {
		if n["catalog_environment"] != n["report_environment"] {
			t.Fatalf("%v: catalog_environment %v, report_environment %v", n["certname"], n["catalog_environment"], n["report_environment"])
		}
		if i > 0 {
			a, _ := nodes[i-1]["catalog_environment"].(string)
			b, _ := n["catalog_environment"].(string)
			if a < b && nodes[i-1]["catalog_environment"] != nil {
				t.Fatalf("not ordered by catalog_environment desc at %d: %q then %q", i, a, b)
			}
		}
	}
	pql := do(t, h, "GET", "/pdb/query/v4?query="+url.QueryEscape(`reports[count()]{certname in nodes[certname]{catalog_environment = "production"}}`), nil, nil)
	if pql.code != 200 || pql.body == `[{"count":0}]` {
		t.Fatalf("subquery on catalog_environment: %d %s", pql.code, pql.body)
	}
}
