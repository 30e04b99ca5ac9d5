package dashboard_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"reportdb/dashboard"
	"reportdb/httpapi"
	"reportdb/ingest"
	"reportdb/service"
	"reportdb/sqlite"
)

func get(t *testing.T, h http.Handler, method, target string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(method, target, nil)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
	h.ServeHTTP(rec, req)
	return rec
}

func TestPagesAndErrors(t *testing.T) {
	s := newTestServer(t)
	for _, c := range []struct {
		target string
		status int
		want   string
	}{
		{"/", 302, ""},
		{"/ui", 302, ""},
		{"/ui/", 200, "Nodes by the status"},
		{"/ui/nodes?status=failed", 200, "nodes-table"},
		{"/ui/nodes?status=bogus", 400, "unknown status"},
		{"/ui/nodes?sort=bogus", 400, "unknown sort"},
		{"/ui/nodes?order=up", 400, "order must be"},
		{"/ui/nodes?page=0", 400, "page must be"},
		{"/ui/nodes?page=x", 400, "page must be"},
		{"/ui/nodes?n=501", 400, "n (rows per page)"},
		{"/ui/nodes?regex=1&q=%5B", 400, ""},
		{"/ui/node/no.such.node", 404, "no node"},
		{"/ui/report/xyz", 400, "40 lower-case"},
		{"/ui/report/0000000000000000000000000000000000000000", 404, "no report"},
		{"/ui/resource?type=File", 400, "type and title"},
		{"/ui/events?status=bogus", 400, "unknown event status"},
		{"/ui/events?since=yesterday", 400, "neither a time"},
		{"/ui/events?since=-5h", 400, "neither a time"},
		{"/ui/events?report=abc", 400, "40 lower-case"},
		{"/ui/events?since=24h&until=2026-01-01T00:00:00Z", 200, "events-table"},
		{"/ui/nosuchpage", 404, "no such page"},
		{"/ui/static/app.css", 200, "prefers-color-scheme"},
		{"/ui/static/app.js", 200, "datetime"},
	} {
		rec := get(t, s.h, "GET", c.target)
		if rec.Code != c.status || !strings.Contains(rec.Body.String(), c.want) {
			t.Errorf("GET %s: %d, want %d with %q: %.300s", c.target, rec.Code, c.status, c.want, rec.Body.String())
		}
		if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || strings.Contains(csp, "unsafe-inline") {
			t.Errorf("GET %s: CSP %q", c.target, csp)
		}
		if strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") && strings.Contains(rec.Body.String(), "<script>") {
			t.Errorf("GET %s: inline script", c.target)
		}
	}
	if rec := get(t, s.h, "POST", "/ui/"); rec.Code != 405 {
		t.Errorf("POST /ui/: %d", rec.Code)
	}
	// the API is untouched: PuppetDB's paths still answer JSON
	if rec := get(t, s.h, "GET", "/pdb/query/v4/nodes"); rec.Code != 406 {
		t.Errorf("the API's Accept rule changed: %d", rec.Code)
	}
	if rec := get(t, s.h, "GET", "/pdb/meta/v1/version"); rec.Code != 406 {
		t.Errorf("/pdb/meta/v1/version: %d", rec.Code)
	}
}

// FuzzEventFilterPQL: the PQL the events explorer shows reads back, through
// PuppetDB's PQL parser, as the filter's own AST.
func FuzzEventFilterPQL(f *testing.F) {
	db, err := sqlite.Open(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	defer db.Close()
	c := ingest.NewCommitter(db, 1)
	defer c.Close()
	api := httpapi.New(httpapi.Config{}, db, c, slog.New(slog.NewTextHandler(io.Discard, nil))).Queries()
	for _, s := range []string{"/etc/motd", `a"b\c`, "line\nbreak", "\u2028", "<script>", "'", "é€😀", "\x00"} {
		f.Add(s, "File")
	}
	f.Fuzz(func(t *testing.T, title, typ string) {
		// a NUL is refused (400) by the query API, as PostgreSQL refuses it
		if !utf8.ValidString(title) || !utf8.ValidString(typ) || strings.ContainsRune(title+typ, 0) {
			return
		}
		filter := dashboard.EventFilter{Title: title, Type: typ}
		var got []any
		if _, err := api.Query(context.Background(), service.Request{Query: filter.PQL([]string{"certname"}, 0, 0), ASTOnly: true},
			func(r json.RawMessage) error { return json.Unmarshal(r, &got) }); err != nil {
			t.Fatalf("PQL for %q/%q: %v", title, typ, err)
		}
		want, _ := json.Marshal(filter.AST())
		extract := got[2].([]any)
		var have []byte
		if len(extract) > 2 {
			have, _ = json.Marshal(extract[2])
		} else {
			have = []byte("null")
		}
		if string(have) != string(want) {
			t.Fatalf("PQL %s reads back as %s, want %s", filter.PQL([]string{"certname"}, 0, 0), have, want)
		}
	})
}
