package storetest

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// RunQueryLimits: a query past a size limit, a string PostgreSQL's text
// cannot hold and an integer outside its column's range are answered
// alike by every backend: a 400 with the same message, or the rows the
// comparison selects, never a database error.
func RunQueryLimits(t *testing.T, open Opener) {
	b := open(t)
	h := NewServer(t, b)
	// three events, on lines 1, 2 and 3; report_format 12
	mustStore(t, b, Report(t, "limits.example", "2025-01-01T10:00:00Z", "2025-01-01T09:59:00Z", "", "success", "failure", "noop"))
	list := func(n int, item func(i int) string) string {
		xs := make([]string, n)
		for i := range xs {
			xs[i] = item(i)
		}
		return strings.Join(xs, ",")
	}
	eq := func(i int) string {
		if i == 0 {
			return `["=","certname","limits.example"]`
		}
		return fmt.Sprintf(`["=","certname","h%d"]`, i)
	}
	names := list(10000, func(i int) string {
		if i == 0 {
			return `"limits.example"`
		}
		return fmt.Sprintf(`"h%d"`, i)
	})
	for _, c := range []struct {
		path, query string
		rows        int
	}{
		{"events", `[">","line",2147483648]`, 0},
		{"events", `["<","line",2147483648]`, 3},
		{"events", `["not",["=","line",99999999999]]`, 3},
		{"events", `["in","line",["array",[99999999999]]]`, 0},
		{"events", `["in","line",["array",[2,99999999999,-1e30]]]`, 1},
		{"events", `[">=","line",-1e30]`, 3},
		{"reports", `["<","report_format",40000]`, 1},
		{"reports", `["=","report_format",-40000]`, 0},
		{"", `events{line > 99999999999999999999999}`, 0},
		{"", `events{line < 99999999999999999999999}`, 3},
		// at the limits
		{"events", `["or",` + list(499, eq) + `]`, 3},
		{"events", `["in","certname",["array",[` + names + `]]]`, 3},
		{"events", `["~","resource_title","/tmp/|` + strings.Repeat("(T|U)", 3270) + `"]`, 3},
	} {
		rows := fetch(t, h, queryPath(c.path), url.Values{"query": {c.query}})
		if len(rows) != c.rows {
			t.Errorf("%s %.100s: %d rows, want %d", c.path, c.query, len(rows), c.rows)
		}
	}
	for _, c := range []struct{ path, query, want string }{
		{"events", `["~","resource_title","/tmp/1\u0000zzzzz"]`, `ERROR: invalid byte sequence for encoding "UTF8": 0x00`},
		{"events", `["=","certname","limits.example\u0000"]`, `ERROR: invalid byte sequence for encoding "UTF8": 0x00`},
		{"events", `["or",` + list(501, eq) + `]`, "it has 502 clauses, more than the limit of 500"},
		{"", "events { " + list(501, func(i int) string { return fmt.Sprintf(`certname = "h%d"`, i) }) + " }", "more than the limit of 500"},
		{"events", `["in","certname",["array",[` + names + `,"one more"]]]`, `its "in" arrays list 10001 values, more than the limit of 10000`},
		{"events", `["~","resource_title","` + strings.Repeat("T", 100000) + `"]`, "is 100000 bytes long, more than the limit of 16384 bytes"},
		{"events", strings.Repeat(`["not",`, 20) + eq(0) + strings.Repeat("]", 20), "nest more than 16 levels"},
	} {
		// PQL's "or" is written with the word
		q := c.query
		if c.path == "" {
			q = strings.ReplaceAll(q, ",", " or ")
		}
		code, body := post(h, queryPath(c.path), q)
		if code != http.StatusBadRequest || !strings.Contains(body, c.want) {
			t.Errorf("%s %.100s: %d %.300s, want 400 %q", c.path, q, code, body, c.want)
		}
	}
}

// post sends a query as a POST body (a GET's URL would be too long).
func post(h http.Handler, path, query string) (int, string) {
	body := fmt.Sprintf(`{"query":%q}`, query)
	if strings.HasPrefix(query, "[") {
		body = `{"query":` + query + `}`
	}
	req := httptest.NewRequest("POST", path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	b, _ := io.ReadAll(rec.Body)
	return rec.Code, string(b)
}

// queryPath is the path of an entity endpoint, or of the root one ("").
func queryPath(entity string) string {
	if entity == "" {
		return "/pdb/query/v4"
	}
	return "/pdb/query/v4/" + entity
}
