package httpapi_test

import (
	"bytes"

	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"reportdb/httpapi"
	"reportdb/ingest"
	"reportdb/sqlite"
)

// metaServer is an empty server with cfg, logging into the returned
// buffer.
func metaServer(t *testing.T, cfg httpapi.Config) (http.Handler, *syncBuffer) {
	db, err := sqlite.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	c := ingest.NewCommitter(db, 64)
	t.Cleanup(c.Close)
	var logs syncBuffer
	return httpapi.New(cfg, db, c, slog.New(slog.NewTextHandler(&logs, nil))), &logs
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
