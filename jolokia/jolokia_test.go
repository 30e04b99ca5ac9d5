package jolokia_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	pathpkg "path"
	"regexp"
	"strings"
	"testing"

	"reportdb/internal/conformance"
	"reportdb/sqlite"
	"reportdb/storetest"
)

// The handler is served by the API's route table (httpapi): these tests
// send it requests through the whole API, over the shared corpus.

type resp struct {
	code int
	body string
	h    http.Header
}

func do(t testing.TB, h http.Handler, method, target string, body []byte) resp {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, target, bytes.NewReader(body)))
	b, _ := io.ReadAll(rec.Body)
	return resp{rec.Code, string(b), rec.Header()}
}

func corpusServer(t *testing.T) http.Handler {
	db, err := sqlite.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	h := storetest.NewServer(t, db)
	conformance.LoadCorpus(t, h)
	return h
}

var jolokiaTimestamp = regexp.MustCompile(`"timestamp":\d+`)

// TestJolokiaPopulation: /metrics/v2 in PuppetDB 7.12.1's Jolokia shapes
// (the wanted bodies are PuppetDB's answers over the same corpus, timestamp
// masked), num-resources from the latest reports' resources/total metric.
func TestJolokiaPopulation(t *testing.T) {
	h := corpusServer(t)
	get := func(path string) string {
		t.Helper()
		r := do(t, h, "GET", path, nil)
		if r.code != 200 || r.h.Get("Content-Type") != "application/json;charset=utf-8" {
			t.Fatalf("%s: %d %q %s", path, r.code, r.h.Get("Content-Type"), r.body)
		}
		return jolokiaTimestamp.ReplaceAllString(r.body, `"timestamp":0`)
	}
	for path, want := range map[string]string{
		"/metrics/v2/read/puppetlabs.puppetdb.population:name=num-nodes":          `{"request":{"mbean":"puppetlabs.puppetdb.population:name=num-nodes","type":"read"},"value":{"Value":40},"timestamp":0,"status":200}`,
		"/metrics/v2/read/puppetlabs.puppetdb.population:name=num-active-nodes":   `{"request":{"mbean":"puppetlabs.puppetdb.population:name=num-active-nodes","type":"read"},"value":{"Value":40},"timestamp":0,"status":200}`,
		"/metrics/v2/read/puppetlabs.puppetdb.population:name=num-inactive-nodes": `{"request":{"mbean":"puppetlabs.puppetdb.population:name=num-inactive-nodes","type":"read"},"value":{"Value":0},"timestamp":0,"status":200}`,
		"/metrics/v2/read/puppetlabs.puppetdb.population:name=num-nodes/Value":    `{"request":{"mbean":"puppetlabs.puppetdb.population:name=num-nodes","attribute":"Value","type":"read"},"value":40,"timestamp":0,"status":200}`,
		"/metrics/v2/read/puppetlabs.puppetdb.population:name=num-nodes/Nosuch":   `{"request":{"mbean":"puppetlabs.puppetdb.population:name=num-nodes","attribute":"Nosuch","type":"read"},"error_type":"javax.management.AttributeNotFoundException","error":"javax.management.AttributeNotFoundException : No such attribute: Nosuch","status":404}`,
		"/metrics/v2/read/puppetlabs.puppetdb.population:name=nosuch":             `{"request":{"mbean":"puppetlabs.puppetdb.population:name=nosuch","type":"read"},"error_type":"javax.management.InstanceNotFoundException","error":"javax.management.InstanceNotFoundException : puppetlabs.puppetdb.population:name=nosuch","status":404}`,
		"/metrics/v2/read":     `{"error_type":"java.lang.IllegalArgumentException","error":"java.lang.IllegalArgumentException : Invalid arguments in pathinfo \/read for command READ","status":400}`,
		"/metrics/v2/nosuch":   `{"error_type":"java.lang.IllegalArgumentException","error":"java.lang.IllegalArgumentException : No type with name 'nosuch' exists","status":400}`,
		"/metrics/v2/read/bad": `{"error_type":"java.lang.IllegalArgumentException","error":"java.lang.IllegalArgumentException : Invalid object name. Key properties cannot be empty","status":400}`,
		"/metrics/v2/list/puppetlabs.puppetdb.population/name=num-nodes": `{"request":{"path":"puppetlabs.puppetdb.population\/name=num-nodes","type":"list"},"value":{"op":{"objectName":{"args":[],"ret":"javax.management.ObjectName","desc":"Operation exposed for management"}},"attr":{"Value":{"rw":false,"type":"java.lang.Object","desc":"Attribute exposed for management"}},"class":"com.codahale.metrics.JmxReporter$JmxGauge","desc":"Information on the management interface of the MBean"},"timestamp":0,"status":200}`,
	} {
		if got := get(path); got != want {
			t.Errorf("%s:\n got %s\nwant %s", path, got, want)
		}
	}

	// num-resources = sum of resources/total over the nodes' latest reports,
	// computed here from /nodes and /reports/<hash>/metrics.
	var nodes []struct {
		LatestReportHash string `json:"latest_report_hash"`
	}
	json.Unmarshal([]byte(do(t, h, "GET", "/pdb/query/v4/nodes", nil).body), &nodes)
	var want int64
	for _, n := range nodes {
		var ms []struct {
			Category, Name string
			Value          int64
		}
		json.Unmarshal([]byte(do(t, h, "GET", "/pdb/query/v4/reports/"+n.LatestReportHash+"/metrics", nil).body), &ms)
		for _, m := range ms {
			if m.Category == "resources" && m.Name == "total" {
				want += m.Value
			}
		}
	}
	var read struct{ Value struct{ Value int64 } }
	json.Unmarshal([]byte(get("/metrics/v2/read/puppetlabs.puppetdb.population:name=num-resources")), &read)
	if want == 0 || read.Value.Value != want {
		t.Fatalf("num-resources %d, want %d", read.Value.Value, want)
	}

	// The list Puppetboard's Metrics page walks, and every bean it names reads.
	var list struct{ Value map[string]map[string]any }
	json.Unmarshal([]byte(get("/metrics/v2/list")), &list)
	if len(list.Value["puppetlabs.puppetdb.population"]) != 5 {
		t.Fatalf("list: %v", list.Value)
	}
	for prop := range list.Value["puppetlabs.puppetdb.population"] {
		body := get("/metrics/v2/read/" + url.PathEscape("puppetlabs.puppetdb.population:"+prop))
		if !strings.Contains(body, `"status":200`) {
			t.Errorf("%s: %s", prop, body)
		}
	}
	// POST, one request and a batch
	r := do(t, h, "POST", "/metrics/v2", []byte(`[{"type":"read","mbean":"puppetlabs.puppetdb.population:name=num-nodes"}]`))
	if !strings.HasPrefix(r.body, `[{"request":{"mbean":"puppetlabs.puppetdb.population:name=num-nodes","type":"read"},"value":{"Value":40}`) {
		t.Fatalf("POST batch: %s", r.body)
	}
	r = do(t, h, "POST", "/metrics/v2", []byte(`{"type":`))
	if !strings.Contains(r.body, `"status":400`) {
		t.Fatalf("POST bad JSON: %s", r.body)
	}
}

// FuzzJolokia: any /metrics/v2 path or POST body gets Jolokia's answer,
// HTTP 200 with a JSON body carrying a status, never a crash.
func FuzzJolokia(f *testing.F) {
	for _, s := range []string{"read/puppetlabs.puppetdb.population:name=num-nodes", "read/puppetlabs.puppetdb.population:name=num-nodes/Value",
		"list", "list/puppetlabs.puppetdb.population/name=num-nodes", "search/puppetlabs.puppetdb.population:*", "read/a!/b!!c/x", "version", "read", ""} {
		f.Add(s, `{"type":"read","mbean":"puppetlabs.puppetdb.population:*"}`)
	}
	f.Add("nosuch", `[{"type":"list","path":"x"},{"type":"search"}]`)
	db, err := sqlite.Open(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { db.Close() })
	h, stop := storetest.NewHandler(db, 1<<20)
	f.Cleanup(stop)
	f.Fuzz(func(t *testing.T, path, body string) {
		target := "/metrics/v2/" + url.PathEscape(path)
		if clean := pathpkg.Clean(target); clean != target && clean+"/" != target {
			// a non-canonical path ("/metrics/v2/.") is redirected to its
			// clean form, as for every path reportdb serves
			if r := do(t, h, "GET", target, nil); r.code != 307 && r.code != 301 {
				t.Fatalf("%q: %d %s, want a redirect to %s", target, r.code, r.body, clean)
			}
			target = clean
		}
		rs := []resp{do(t, h, "POST", "/metrics/v2", []byte(body))}
		if target == "/metrics/v2" || strings.HasPrefix(target, "/metrics/v2/") {
			// a path that cleans to outside Jolokia ("/metrics/v2/..") is
			// some other route's business, not Jolokia's
			rs = append(rs, do(t, h, "GET", target, nil))
		}
		for _, r := range rs {
			var v any
			emptyBatch := r.body == "[]" && strings.TrimSpace(body) != "" && strings.TrimSpace(body)[0] == '['
			if r.code != 200 || json.Unmarshal([]byte(r.body), &v) != nil || (!strings.Contains(r.body, `"status":`) && !emptyBatch) {
				t.Fatalf("%q / %q: %d %s", path, body, r.code, r.body)
			}
		}
	})
}
