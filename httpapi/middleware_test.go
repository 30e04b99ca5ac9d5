package httpapi

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"reportdb/ingest"
	"reportdb/internal/testcorpus"
	"reportdb/jsonv"
	"reportdb/metrics"
	"reportdb/sqlite"
	"reportdb/store"
	"reportdb/wire"
)

// newTestServer is the API over an empty embedded store.
func newTestServer(t *testing.T, log *slog.Logger) *Server {
	db, err := sqlite.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	c := ingest.NewCommitter(db, 64)
	t.Cleanup(c.Close)
	return New(Config{}, db, c, log)
}

// TestRouteLabels: every request is counted under the label of the route
// that served it (PuppetDB's paths that match no route as "other"), and
// submissions under their channel, never as queries.
func TestRouteLabels(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	s := newTestServer(t, quiet)
	for path, want := range map[string]string{
		"/pdb/query/v4":                                 "root",
		"/pdb/query/v4/events":                          "events",
		"/pdb/query/v4/event-counts":                    "event-counts",
		"/pdb/query/v4/aggregate-event-counts":          "aggregate-event-counts",
		"/pdb/query/v4/reports":                         "reports",
		"/pdb/query/v4/reports/abc123/events":           "reports/<hash>/events",
		"/pdb/query/v4/reports/abc123/metrics":          "reports/<hash>/metrics",
		"/pdb/query/v4/reports/abc123/logs":             "reports/<hash>/logs",
		"/pdb/query/v4/reports/abc123":                  "other",
		"/pdb/query/v4/reports//events":                 "other",
		"/pdb/query/v4/reports/abc/events/x":            "other",
		"/pdb/query/v4/environments":                    "environments",
		"/pdb/query/v4/environments/production":         "environments/<name>",
		"/pdb/query/v4/environments/production/events":  "environments/<name>/events",
		"/pdb/query/v4/environments/production/reports": "environments/<name>/reports",
		"/pdb/query/v4/environments/production/facts":   "environments/<name>/facts",
		"/pdb/query/v4/nodes":                           "nodes",
		"/pdb/query/v4/nodes/web01.example.com":         "nodes/<certname>",
		"/pdb/query/v4/nodes/web01.example.com/facts":   "nodes/<certname>/facts",
		"/pdb/query/v4/events/":                         "other",
		"/pdb/query/v4/catalogs":                        "catalogs",
		"/pdb/query/v4/catalogs/web01.example.com":      "catalogs/<name>",
		"/metrics/v2/list":                              "metrics/v2",
		// answered with in-process queries of its own, which must not relabel it
		"/metrics/v2/read/puppetlabs.puppetdb.population:name=num-nodes": "metrics/v2",
		"/pdb/query/v3/events":                "retired",
		"/pdb/query/v1":                       "retired",
		"/pdb/query/v5/events":                "other",
		"/pdb/meta/v1/version":                "meta/version",
		"/pdb/meta/v1/server-time":            "meta/server-time",
		"/status/v1/services":                 "status",
		"/status/v1/services/puppetdb-status": "status",
		"/v3/events":                          "v3/events",
		"/v3/reports":                         "v3/reports",
		"/v3/event-counts":                    "v3/event-counts",
		"/v3/aggregate-event-counts":          "v3/aggregate-event-counts",
		"/v3/facts":                           "other",
		"/":                                   "other",
		"/pdb/dashboard/index.html":           "other",
		"/pdb/query/v4/environments/production/events/x": "other",
	} {
		m := metrics.New(Endpoints()...)
		h := Instrument(s, InstrumentOptions{Log: quiet, Metrics: m})
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		got := queryLabels(t, m)
		if len(got) != 1 || got[0] != want {
			t.Errorf("GET %s (%d) counted as %v, want %s", path, rec.Code, got, want)
		}
	}
	// submissions and /metrics are not queries
	m := metrics.New(Endpoints()...)
	h := Instrument(s, InstrumentOptions{Log: quiet, Metrics: m})
	for _, path := range []string{"/pdb/cmd/v1", "/puppet/v3/report/web01.example.com"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPut, path, strings.NewReader("{")))
	}
	if n := sample(t, m, "reportdb_ingest_reports_total", map[string]string{"channel": "command", "outcome": "rejected"}); n != 1 {
		t.Errorf("command submissions rejected: %v", n)
	}
	if n := sample(t, m, "reportdb_ingest_reports_total", map[string]string{"channel": "puppet_report", "outcome": "rejected"}); n != 1 {
		t.Errorf("puppet report submissions rejected: %v", n)
	}
	if n := sample(t, m, "reportdb_query_requests_total", nil); n != 0 {
		t.Errorf("submissions counted as queries: %v", n)
	}
}

// TestEndpointsCoverConformance: the conformance cases' endpoint groups
// are route labels (the contract suite replays those groups).
func TestEndpointsCoverConformance(t *testing.T) {
	labels := Endpoints()
	for _, c := range testcorpus.LoadCases(t) {
		if !slices.Contains(labels, c.Endpoint) {
			t.Errorf("case %s: endpoint group %q is no route label", c.ID, c.Endpoint)
		}
	}
}

func TestQueryParam(t *testing.T) {
	for raw, want := range map[string]string{
		"command=store_report&version=8&certname=web01.example.com": "web01.example.com",
		"certname=a%2Bb+c&certname=x":                               "a+b c",
		"certnames=x":                                               "",
		"certname=%zz":                                              "",
		"":                                                          "",
	} {
		if got := queryParam(raw, "certname"); got != want {
			t.Errorf("queryParam(%q) = %q, want %q", raw, got, want)
		}
	}
}

// sample returns the value of a counter or histogram count in reg.
func sample(t *testing.T, m *metrics.Metrics, name string, labels map[string]string) float64 {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	next:
		for _, mt := range f.Metric {
			have := map[string]string{}
			for _, lp := range mt.Label {
				have[lp.GetName()] = lp.GetValue()
			}
			for k, v := range labels {
				if have[k] != v {
					continue next
				}
			}
			return value(mt)
		}
	}
	return 0
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	}
	return 0
}

// TestInstrument: request log lines, slow-query lines, ingest outcomes by
// channel (including a submission route the classifier does not know,
// which is Puppet's http report processor) and query metrics.
func TestInstrument(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := newTestServer(t, log)
	m := metrics.New(Endpoints()...)

	mdir := filepath.Join(testcorpus.SharedDir(t), "corpus")
	man, _ := testcorpus.LoadManifest(t)
	body := testcorpus.ReadFile(t, filepath.Join(mdir, man.Submissions[0].Wire8))
	// a stand-in for another route that stores reports
	processor := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		v, _ := jsonv.Parse(b)
		rep, err := wire.Decode(8, v, time.Now().UnixMilli())
		if err == nil {
			_, err = s.committer.Submit(r.Context(), rep)
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	h := Instrument(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/store/elsewhere" {
			processor.ServeHTTP(w, r)
			return
		}
		// what the PostgreSQL backend adds to a request's steps (this
		// test server's SQLite backend adds none)
		if st := store.StatementSteps(r.Context()); st != nil && r.URL.Path == "/pdb/query/v4/reports" {
			st.Add("conn wait", 1500*time.Millisecond)
		}
		s.ServeHTTP(w, r)
	}), InstrumentOptions{Log: log, Metrics: m, SlowQuery: time.Nanosecond})

	do := func(method, target string, body []byte) int {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, target, bytes.NewReader(body)))
		return rec.Code
	}
	if code := do("POST", "/store/elsewhere", body); code != 200 {
		t.Fatalf("processor: %d", code)
	}
	if code := do("POST", "/store/elsewhere", body); code != 200 {
		t.Fatalf("processor again: %d", code)
	}
	if code := do("POST", "/pdb/cmd/v1?command=store_report&version=8&certname=web01", []byte("{")); code != 400 {
		t.Fatalf("bad command: %d", code)
	}
	req := httptest.NewRequest("POST", "/pdb/cmd/v1?command=store_report&version=8&certname=web01.prod.example.com", bytes.NewReader(body))
	req.Header.Set(ChannelHeader, "import")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("import: %d %s", rec.Code, rec.Body)
	}
	if code := do("POST", "/pdb/query/v4/events", []byte(`{"query":["=","certname","web01.prod.example.com"],"limit":1}`)); code != 200 {
		t.Fatalf("query: %d", code)
	}
	if code := do("GET", "/pdb/query/v4/reports?limit=1&order_by=%5B%7B%22field%22%3A%22certname%22%7D%5D", nil); code != 200 {
		t.Fatalf("query: %d", code)
	}
	for _, tc := range []struct {
		channel, outcome string
		want             float64
	}{
		{"http_processor", "stored", 1}, {"http_processor", "duplicate", 1}, {"command", "rejected", 1}, {"command", "stored", 0},
		{"import", "duplicate", 1}, {"command", "duplicate", 0},
	} {
		if got := sample(t, m, "reportdb_ingest_reports_total", map[string]string{"channel": tc.channel, "outcome": tc.outcome}); got != tc.want {
			t.Errorf("ingest %s/%s = %v, want %v", tc.channel, tc.outcome, got, tc.want)
		}
	}
	if got := sample(t, m, "reportdb_query_requests_total", map[string]string{"endpoint": "events", "code": "200"}); got != 1 {
		t.Errorf("events queries: %v", got)
	}
	if got := sample(t, m, "reportdb_query_duration_seconds", map[string]string{"endpoint": "reports", "code": "200"}); got != 1 {
		t.Errorf("reports query durations: %v", got)
	}

	out := logs.String()
	for _, want := range []string{
		`msg=request method=POST path=/store/elsewhere status=200`,
		`channel=http_processor outcome=duplicate`,
		`msg=request method=POST path=/pdb/cmd/v1 certname=web01 status=400`,
		`msg=request method=POST path=/pdb/query/v4/events status=200`,
		`msg=request method=GET path=/pdb/query/v4/reports query="limit=1&order_by=%5B%7B%22field%22%3A%22certname%22%7D%5D" status=200`,
		`level=WARN msg="slow query" endpoint=events method=POST path=/pdb/query/v4/events status=200`,
		`body="{\"query\":[\"=\",\"certname\",\"web01.prod.example.com\"],\"limit\":1}"`,
		`level=WARN msg="slow query" endpoint=reports method=GET`,
		`params.limit=1`,
		`params.order_by="[{\"field\":\"certname\"}]"`,
		`path=/pdb/query/v4/reports status=200 duration=`,
		`threshold=1ns steps="conn wait=1.5s"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %s:\n%s", want, out)
		}
	}
	if strings.Count(out, `steps=`) != 1 {
		t.Errorf("steps on a slow query whose backend added none:\n%s", out)
	}
	if strings.Count(out, `msg="slow query"`) != 2 {
		t.Errorf("slow query lines (ingest is never a query):\n%s", out)
	}
}

// discardWriter is the cheapest ResponseWriter, for the benchmarks.
type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d *discardWriter) WriteHeader(int)             {}

// BenchmarkInstrument measures what the middleware adds to a request:
// compare each case with "bare" (the same handler, not wrapped).
func BenchmarkInstrument(b *testing.B) {
	payload := []byte(`{"uuid":"x"}`)
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(200)
		w.Write(payload)
	})
	m := metrics.New(Endpoints()...)
	info := slog.New(slog.NewTextHandler(io.Discard, nil))
	warn := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn}))
	json := slog.New(slog.NewJSONHandler(io.Discard, nil))
	cmd := httptest.NewRequest("POST", "/pdb/cmd/v1?checksum=e23b8918169aa641c5ac379d0dac8aa34b0ae736&version=8&certname=web01.example.com&command=store_report&producer-timestamp=2026-11-22T01:21:45.906Z", nil)
	query := httptest.NewRequest("GET", "/pdb/query/v4/environments/production/events?query=%5B%22%3D%22%2C%22status%22%2C%22failed%22%5D", nil)
	for _, bc := range []struct {
		name string
		h    http.Handler
		r    *http.Request
	}{
		{"bare/command", inner, cmd},
		{"instrumented/command/text-log", Instrument(inner, InstrumentOptions{Log: info, Metrics: m, SlowQuery: time.Second}), cmd},
		{"instrumented/command/json-log", Instrument(inner, InstrumentOptions{Log: json, Metrics: m, SlowQuery: time.Second}), cmd},
		{"instrumented/command/no-request-log", Instrument(inner, InstrumentOptions{Log: warn, Metrics: m, SlowQuery: time.Second}), cmd},
		{"bare/query", inner, query},
		{"instrumented/query/text-log", Instrument(inner, InstrumentOptions{Log: info, Metrics: m, SlowQuery: time.Second}), query},
		{"instrumented/query/no-request-log", Instrument(inner, InstrumentOptions{Log: warn, Metrics: m, SlowQuery: time.Second}), query},
	} {
		b.Run(bc.name, func(b *testing.B) {
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				bc.h.ServeHTTP(w, bc.r)
			}
			if cpu > 0 {
				b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
			}
		})
	}
}
