package httpapi_test

import (
	"bytes"

	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"reportdb/httpapi"
	"reportdb/internal/apitest"
	"reportdb/query"
)

// metaServer is an empty server with cfg, logging into the returned
// buffer.
func metaServer(t *testing.T, cfg httpapi.Config) (http.Handler, *syncBuffer) {
	var logs syncBuffer
	return apitest.New(t, cfg, apitest.Options{Log: slog.New(slog.NewTextHandler(&logs, nil))}).API, &logs
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestVersionConfigured: the configured PuppetDB version is what
// /pdb/meta/v1/version, the status services and Jolokia's version say, in
// the shapes of the default (TestHTTPRules has 7.12.1's bytes).
func TestVersionConfigured(t *testing.T) {
	h, _ := metaServer(t, httpapi.Config{PuppetDBVersion: "8.9.1"})
	for _, m := range []string{"GET", "POST"} {
		r := do(t, h, m, "/pdb/meta/v1/version", nil, nil)
		if r.code != 200 || r.ct != "application/json;charset=utf-8" || r.body != "{\n  \"version\" : \"8.9.1\"\n}" {
			t.Errorf("%s version: %d %q %q", m, r.code, r.ct, r.body)
		}
	}
	r := do(t, h, "GET", "/status/v1/services", nil, nil)
	if r.code != 200 || !strings.HasPrefix(r.body, `{"puppetdb-status":{"service_version":"8.9.1","service_status_version":1,`) ||
		!strings.Contains(r.body, `"status-service":{"service_version":"1.1.1",`) {
		t.Errorf("services: %d %s", r.code, r.body)
	}
	r = do(t, h, "GET", "/status/v1/services/puppetdb-status", nil, nil)
	if r.code != 200 || !strings.HasPrefix(r.body, `{"service_version":"8.9.1",`) {
		t.Errorf("puppetdb-status: %d %s", r.code, r.body)
	}
	r = do(t, h, "GET", "/metrics/v2/version", nil, nil)
	if !strings.Contains(r.body, `"info":{"product":"reportdb","version":"8.9.1"}`) {
		t.Errorf("jolokia version: %d %s", r.code, r.body)
	}
	// unset: the version reportdb reproduces
	h, _ = metaServer(t, httpapi.Config{})
	if r := do(t, h, "GET", "/status/v1/services/puppetdb-status", nil, nil); !strings.HasPrefix(r.body, `{"service_version":"`+httpapi.PuppetDBVersion+`",`) {
		t.Errorf("default puppetdb-status: %s", r.body)
	}
}

// TestServerTime: /pdb/meta/v1/server-time as PuppetDB 7.12.1 and 8.x
// answer it: the clock in UTC, milliseconds always written and truncated,
// pretty-printed, any method.
func TestServerTime(t *testing.T) {
	now := time.Date(2026, 3, 4, 6, 7, 8, 912_999_999, time.FixedZone("CET", 3600))
	h, _ := metaServer(t, httpapi.Config{Now: func() time.Time { return now }})
	for _, m := range []string{"GET", "POST", "PUT"} {
		r := do(t, h, m, "/pdb/meta/v1/server-time", nil, nil)
		if r.code != 200 || r.ct != "application/json;charset=utf-8" || r.body != "{\n  \"server_time\" : \"2026-03-04T05:07:08.912Z\"\n}" {
			t.Errorf("%s: %d %q %q", m, r.code, r.ct, r.body)
		}
	}
	now = time.Date(2026, 3, 4, 5, 7, 8, 0, time.UTC)
	if r := do(t, h, "GET", "/pdb/meta/v1/server-time", nil, nil); r.body != "{\n  \"server_time\" : \"2026-03-04T05:07:08.000Z\"\n}" {
		t.Errorf("whole second: %q", r.body)
	}
	if r := do(t, h, "GET", "/pdb/meta/v1/server-time", nil, map[string]string{"Accept": "text/html"}); r.code != 406 {
		t.Errorf("Accept text/html: %d", r.code)
	}
}

// TestCatalogEnvironmentHint: a query that selects nodes by
// catalog_environment, which nothing fills, is logged once an hour with
// the settings that fill it, from any endpoint; not with
// --catalog-environment-from-reports.
func TestCatalogEnvironmentHint(t *testing.T) {
	now := time.Date(2026, 3, 4, 5, 0, 0, 0, time.UTC)
	h, logs := metaServer(t, httpapi.Config{Now: func() time.Time { return now }})
	hints := func() int { return strings.Count(logs.String(), "--catalog-environment-from-reports") }
	get := func(target string) {
		t.Helper()
		if r := do(t, h, "GET", target, nil, nil); r.code != 200 {
			t.Fatalf("%s: %d %s", target, r.code, r.body)
		}
	}
	q := url.QueryEscape
	get("/pdb/query/v4/nodes?query=" + q(`["=","report_environment","production"]`))
	get("/pdb/query/v4/nodes?query=" + q(`["extract",["certname","catalog_environment"]]`))
	if n := hints(); n != 0 {
		t.Fatalf("hint without a filter on catalog_environment: %s", logs)
	}
	get("/pdb/query/v4/nodes?query=" + q(`["=","catalog_environment","production"]`))
	if n := hints(); n != 1 {
		t.Fatalf("%d hints after the first filter: %s", n, logs)
	}
	line := logs.String()
	for _, want := range []string{"level=WARN", "--upstream", "path=/pdb/query/v4/nodes", "at most once an hour"} {
		if !strings.Contains(line, want) {
			t.Errorf("hint lacks %q: %s", want, line)
		}
	}
	// the others within the hour stay quiet
	now = now.Add(59 * time.Minute)
	get("/pdb/query/v4?query=" + q(`nodes[certname]{catalog_environment = "production"}`))
	get("/pdb/query/v4/events?query=" + q(`["in","certname",["extract","certname",["select_nodes",["=","catalog_environment","production"]]]]`))
	get("/pdb/query/v4/event-counts?summarize_by=certname&query=" + q(`["in","certname",["extract","certname",["select_nodes",["=","catalog_environment","production"]]]]`))
	get("/pdb/query/v4/nodes?order_by=" + q(`[{"field":"catalog_environment"}]`))
	if n := hints(); n != 1 {
		t.Fatalf("%d hints within the hour: %s", n, logs)
	}
	now = now.Add(time.Minute)
	get("/pdb/query/v4/aggregate-event-counts?summarize_by=certname,resource&query=" + q(`["in","certname",["extract","certname",["select_nodes",["=","catalog_environment","production"]]]]`))
	if n := hints(); n != 2 {
		t.Fatalf("%d hints an hour later, want 2: %s", n, logs)
	}

	query.SetCatalogEnvironmentFromReports(true)
	t.Cleanup(func() { query.SetCatalogEnvironmentFromReports(false) })
	h, logs = metaServer(t, httpapi.Config{})
	get("/pdb/query/v4/nodes?query=" + q(`["=","catalog_environment","production"]`))
	if strings.Contains(logs.String(), "catalog_environment") {
		t.Fatalf("hint with --catalog-environment-from-reports: %s", logs)
	}
}
