package httpapi_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reportdb/internal/testcorpus"
	"reportdb/sqlite"
	"reportdb/storetest"
)

func newServer(t *testing.T) http.Handler {
	db, err := sqlite.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return storetest.NewServer(t, db)
}

type resp struct {
	code int
	ct   string
	body string
	h    http.Header
}

func do(t *testing.T, h http.Handler, method, target string, body []byte, headers map[string]string) resp {
	t.Helper()
	req := httptest.NewRequest(method, target, bytes.NewReader(body))
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	b, _ := io.ReadAll(rec.Body)
	return resp{rec.Code, rec.Header().Get("Content-Type"), string(b), rec.Header()}
}

// sampleReport returns the first corpus wire v8 report.
func sampleReport(t *testing.T) (certname string, body []byte) {
	m, dir := testcorpus.LoadManifest(t)
	s := m.Submissions[0]
	return s.Certname, testcorpus.ReadFile(t, filepath.Join(dir, s.Wire8))
}

func reportCount(t *testing.T, h http.Handler) int {
	r := do(t, h, "GET", "/pdb/query/v4/reports?query="+url.QueryEscape(`["extract",[["function","count"]],["=","type","any"]]`), nil, nil)
	var rows []struct{ Count int }
	if err := json.Unmarshal([]byte(r.body), &rows); err != nil || len(rows) != 1 {
		t.Fatalf("count: %v %s", err, r.body)
	}
	e := do(t, h, "GET", "/pdb/query/v4/events?query="+url.QueryEscape(`["extract",[["function","count"]]]`), nil, nil)
	var erows []struct{ Count int }
	json.Unmarshal([]byte(e.body), &erows)
	return rows[0].Count*100000 + erows[0].Count
}

func TestCommandForms(t *testing.T) {
	certname, body := sampleReport(t)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(body)
	zw.Close()
	envelope := []byte(`{"command":"store report","version":8,"payload":` + string(body) + `}`)
	cases := []struct {
		name    string
		target  string
		body    []byte
		headers map[string]string
		wait    bool
	}{
		{"terminus", "/pdb/cmd/v1?checksum=0123&version=8&certname=" + certname + "&command=store_report&producer-timestamp=2026-11-21T22:22:11.832Z",
			body, map[string]string{"Content-Type": "application/json; charset=utf-8", "X-Uncompressed-Length": "1"}, false},
		{"gzip", "/pdb/cmd/v1?version=8&certname=" + certname + "&command=store_report", gz.Bytes(),
			map[string]string{"Content-Encoding": "gzip", "Content-Type": "application/json"}, false},
		{"pypuppetdb", "/pdb/cmd/v1?command=store+report&version=8&certname=" + certname + "&checksum=abc", body,
			map[string]string{"Authorization": "Basic Tm9uZTpOb25l", "Content-Type": "application/json"}, false},
		{"envelope", "/pdb/cmd/v1", envelope, nil, false},
		{"sync", "/pdb/cmd/v1?command=store%20report&version=8&certname=" + certname + "&secondsToWaitForCompletion=0.5", body, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newServer(t)
			r := do(t, h, "POST", c.target, c.body, c.headers)
			if r.code != 200 || r.ct != "application/json;charset=utf-8" {
				t.Fatalf("%d %s %s", r.code, r.ct, r.body)
			}
			var doc struct {
				UUID      string `json:"uuid"`
				Processed *bool  `json:"processed"`
				TimedOut  *bool  `json:"timed_out"`
			}
			if err := json.Unmarshal([]byte(r.body), &doc); err != nil || len(doc.UUID) != 36 {
				t.Fatalf("body %q", r.body)
			}
			if !strings.HasPrefix(r.body, "{\n  \"uuid\" : \"") {
				t.Errorf("body not pretty-printed like PuppetDB: %q", r.body)
			}
			if c.wait != (doc.Processed != nil) || (c.wait && (!*doc.Processed || *doc.TimedOut)) {
				t.Errorf("processed/timed_out = %v/%v for wait=%v", doc.Processed, doc.TimedOut, c.wait)
			}
			if n := reportCount(t, h); n/100000 != 1 {
				t.Errorf("stored reports = %d, want 1 (immediately queryable)", n/100000)
			}
		})
	}
}

// TestCommandRejections: every bad submission gets a 4xx with a message and
// stores nothing.
func TestCommandRejections(t *testing.T) {
	certname, body := sampleReport(t)
	ok := "/pdb/cmd/v1?command=store_report&version=8&certname=" + certname
	mutate := func(from, to string) []byte {
		if !bytes.Contains(body, []byte(from)) {
			t.Fatalf("sample lacks %q", from)
		}
		return bytes.Replace(body, []byte(from), []byte(to), 1)
	}
	cases := []struct {
		name, target string
		body         []byte
		headers      map[string]string
		code         int
		want         string
	}{
		{"version 4", "/pdb/cmd/v1?command=store_report&version=4&certname=a", body, nil, 400,
			"{\n  \"error\" : \"Command \\\"store report\\\" for certname \\\"a\\\" is invalid. Version 4 of command \\\"store report\\\" is retired. The minimum supported version is 5.\"\n}"},
		{"no certname", "/pdb/cmd/v1?command=store_report&version=8", body, nil, 400, "Command is missing required parameters: certname."},
		{"unknown param", ok + "&foo=1", body, nil, 400, "Command has invalid parameters: foo."},
		{"blank certname", "/pdb/cmd/v1?command=store_report&version=8&certname=", body, nil, 400, "Certname must be a non-empty string."},
		{"unknown command", "/pdb/cmd/v1?command=frobnicate&version=8&certname=a", body, nil, 400, "Command must be one of: configure expiration"},
		{"bad version", "/pdb/cmd/v1?command=store_report&version=x&certname=a", body, nil, 400, "Version must be a valid integer."},
		{"old form not a map", "/pdb/cmd/v1", []byte(`[1]`), nil, 400, "Command was submitted without query parameters (old format)"},
		{"old form payload", "/pdb/cmd/v1", []byte(`{"command":"store report","version":8,"payload":3}`), nil, 400, "The payload value must be a JSON map."},
		{"malformed json", ok, body[:len(body)/2], nil, 400, "not valid JSON"},
		{"unknown key", ok, mutate(`"certname"`, `"server_used":"x","certname"`), nil, 400, "server_used: unknown key"},
		{"missing key", ok, mutate(`"producer"`, `"producerx"`), nil, 400, "producerx: unknown key"},
		{"wrong type", ok, mutate(`"report_format":10`, `"report_format":"10"`), nil, 400, "report_format: must be an integer"},
		{"long resource type", ok, mutate(`"resource_type":"`, `"resource_type":"`+strings.Repeat("X", 300)), nil, 400,
			"resource_type: is 30"},
		{"bad event timestamp", ok, mutate(`"timestamp":"2025-01-06T06:00:03.734+00:00"`, `"timestamp":"yesterday"`), nil, 400, "events[0].timestamp: not a valid date-time"},
		{"content type", ok, body, map[string]string{"Content-Type": "text/plain"}, 415, "content type text/plain not supported"},
		{"content encoding", ok, body, map[string]string{"Content-Encoding": "br"}, 415, "content encoding br not supported"},
		{"bad gzip", ok, body, map[string]string{"Content-Encoding": "gzip"}, 400, "not valid gzip"},
		{"accept", ok, body, map[string]string{"Accept": "text/html"}, 406, "must accept application/json"},
		{"bad wait", ok + "&secondsToWaitForCompletion=abc", body, nil, 400, "secondsToWaitForCompletion"},
	}
	h := newServer(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := do(t, h, "POST", c.target, c.body, c.headers)
			if r.code != c.code || !strings.Contains(r.body, c.want) {
				t.Errorf("got %d %q, want %d containing %q", r.code, r.body, c.code, c.want)
			}
		})
	}
	if n := reportCount(t, h); n != 0 {
		t.Fatalf("rejected submissions stored data: count code %d", n)
	}
}

func TestBodyLimit(t *testing.T) {
	certname, body := sampleReport(t)
	db, err := sqlite.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	h := storetest.NewServerWithLimit(t, db, int64(len(body)-1))
	r := do(t, h, "POST", "/pdb/cmd/v1?command=store_report&version=8&certname="+certname, body, nil)
	if r.code != 413 {
		t.Fatalf("oversized body: %d %s", r.code, r.body)
	}
	// a gzip bomb is measured after decoding
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(bytes.Repeat([]byte(" "), len(body)*4))
	zw.Close()
	r = do(t, h, "POST", "/pdb/cmd/v1?command=store_report&version=8&certname="+certname, gz.Bytes(), map[string]string{"Content-Encoding": "gzip"})
	if r.code != 413 {
		t.Fatalf("oversized decoded body: %d %s", r.code, r.body)
	}
	if n := reportCount(t, h); n != 0 {
		t.Fatal("oversized body stored data")
	}
}

func TestHTTPRules(t *testing.T) {
	h := newServer(t)
	cases := []struct {
		method, target string
		headers        map[string]string
		code           int
		ct, body       string
	}{
		{"PUT", "/pdb/query/v4/events", nil, 400, "text/plain;charset=utf-8", "PuppetDB queries must be made via GET/POST"},
		{"GET", "/pdb/query/v3/events", nil, 404, "text/plain;charset=utf-8", "The v3 API has been retired; please use v4"},
		{"GET", "/pdb/query/v4/events", map[string]string{"Accept": "application/json; charset=utf-8"}, 406, "text/plain;charset=utf-8", "must accept application/json"},
		{"GET", "/pdb/query/v4/events", map[string]string{"Accept": "text/html, application/json"}, 200, "application/json;charset=utf-8", "[]"},
		{"GET", "/pdb/query/v4/events?query=" + url.QueryEscape(`["=","certname","a"] ["=","certname","b"]`), nil, 400, "text/plain;charset=utf-8",
			`Only one query may be sent in a request. Found JSON (["=" "certname" "b"]) after the query ["=" "certname" "a"]`},
		{"GET", "/pdb/query/v4/events?query=a&query=b", nil, 400, "text/plain;charset=utf-8", "Parameter 'query' may only be given once"},
		{"GET", "/pdb/query/v4/events?pretty=true", nil, 200, "application/json;charset=utf-8", "[ ]"},
		{"GET", "/pdb/meta/v1/version", nil, 200, "application/json;charset=utf-8", "{\n  \"version\" : \"7.12.1\"\n}"},
	}
	for _, c := range cases {
		r := do(t, h, c.method, c.target, nil, c.headers)
		if r.code != c.code || r.ct != c.ct || r.body != c.body {
			t.Errorf("%s %s: got %d %q %q, want %d %q %q", c.method, c.target, r.code, r.ct, r.body, c.code, c.ct, c.body)
		}
	}
	r := do(t, h, "GET", "/pdb/query/v4/events/", nil, nil)
	if r.code != 302 || r.h.Get("Location") != "http://example.com/pdb/query/v4/events//dashboard/index.html" {
		t.Errorf("unrouted path: %d %q", r.code, r.h.Get("Location"))
	}
}

func TestPuppetReportEndpoint(t *testing.T) {
	m, dir := testcorpus.LoadManifest(t)
	s := m.Submissions[0]
	body := testcorpus.ReadFile(t, filepath.Join(dir, s.Format10))
	h := newServer(t)
	target := "/puppet/v3/report/" + s.Certname + "?producer_timestamp=" + url.QueryEscape(s.ProducerTimestamp)
	if r := do(t, h, "PUT", "/puppet/v3/report/other.example.com", body, nil); r.code != 400 {
		t.Errorf("certname mismatch accepted: %d %s", r.code, r.body)
	}
	if r := do(t, h, "PUT", target, bytes.Replace(body, []byte(`"host"`), []byte(`"hots"`), 1), nil); r.code != 400 || !strings.Contains(r.body, "hots") {
		t.Errorf("invalid report: %d %s", r.code, r.body)
	}
	if n := reportCount(t, h); n != 0 {
		t.Fatal("rejected report stored")
	}
	if r := do(t, h, "PUT", target, body, map[string]string{"X-Producer": s.Producer}); r.code != 200 {
		t.Fatalf("valid report: %d %s", r.code, r.body)
	}
	if n := reportCount(t, h); n/100000 != 1 {
		t.Fatalf("reports = %d", n/100000)
	}
}

var _ = os.Getenv

func TestGzipResponses(t *testing.T) {
	h := newServer(t)
	certname, body := sampleReport(t)
	do(t, h, "POST", "/pdb/cmd/v1?command=store_report&version=8&certname="+certname, body, nil)
	r := do(t, h, "GET", "/pdb/query/v4/events", nil, map[string]string{"Accept-Encoding": "gzip, deflate"})
	if r.code != 200 || r.h.Get("Content-Encoding") != "gzip" {
		t.Fatalf("%d, Content-Encoding %q", r.code, r.h.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(strings.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := io.ReadAll(zr)
	var rows []map[string]any
	if err := json.Unmarshal(plain, &rows); err != nil || len(rows) == 0 {
		t.Fatalf("gunzipped body: %v %.100s", err, plain)
	}
	if r.h.Get("Vary") != "Accept-Encoding, User-Agent" {
		t.Errorf("Vary = %q", r.h.Get("Vary"))
	}
}

// TestPagingTooLarge: a limit or offset past what PuppetDB reads (a Java
// int) says it is too large, where other bad values keep PuppetDB's
// message.
func TestPagingTooLarge(t *testing.T) {
	h := newServer(t)
	for target, want := range map[string]string{
		"/pdb/query/v4/events?limit=2147483648":           "Illegal value '2147483648' for :limit; it is too large (the largest limit is 2147483647).",
		"/pdb/query/v4/events?limit=99999999999999999999": "Illegal value '99999999999999999999' for :limit; it is too large (the largest limit is 2147483647).",
		"/pdb/query/v4/reports?offset=2147483648":         "Illegal value '2147483648' for :offset; it is too large (the largest offset is 2147483647).",
		"/pdb/query/v4/events?limit=-2147483649":          "Illegal value '-2147483649' for :limit; expected a positive non-zero integer.",
		"/pdb/query/v4/events?limit=abc":                  "Illegal value 'abc' for :limit; expected a positive non-zero integer.",
	} {
		if r := do(t, h, "GET", target, nil, nil); r.code != 400 || r.body != want {
			t.Errorf("%s: %d %q, want 400 %q", target, r.code, r.body, want)
		}
	}
	if r := do(t, h, "POST", "/pdb/query/v4/events", []byte(`{"limit":2147483648}`), map[string]string{"Content-Type": "application/json"}); r.code != 400 || !strings.Contains(r.body, "too large") {
		t.Errorf("POST limit 2147483648: %d %q", r.code, r.body)
	}
}
