package dashboard_test

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"reportdb/internal/testcorpus"
	"reportdb/service"
)

// largeReport is a corpus report with n logs of msgBytes-byte messages and
// an event whose new value is as long.
func largeReport(t *testing.T, certname string, n, msgBytes int) []byte {
	m, dir := testcorpus.LoadManifest(t)
	var r map[string]any
	if err := json.Unmarshal(testcorpus.ReadFile(t, filepath.Join(dir, m.Submissions[0].Wire8)), &r); err != nil {
		t.Fatal(err)
	}
	r["certname"] = certname
	logs := r["logs"].([]any)
	l0 := logs[0].(map[string]any)
	logs = logs[:0]
	for i := 0; i < n; i++ {
		l := map[string]any{}
		for k, v := range l0 {
			l[k] = v
		}
		l["message"] = strings.Repeat(string(rune('a'+i%26)), msgBytes)
		logs = append(logs, l)
	}
	r["logs"] = logs
	for _, x := range r["resources"].([]any) {
		for _, e := range x.(map[string]any)["events"].([]any) {
			e.(map[string]any)["new_value"] = strings.Repeat("v", msgBytes)
		}
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLargeReportPage: the page of a report with megabytes of logs shows
// the first logs, each message cut, with links to the whole documents, and
// takes memory in proportion to what it shows, not to the report.
func TestLargeReportPage(t *testing.T) {
	s := newTestServer(t)
	const n, size = 1200, 20000
	body := largeReport(t, "large.example.com", n, size)
	q := url.Values{"command": {"store_report"}, "version": {"8"}, "certname": {"large.example.com"},
		"producer-timestamp": {"2025-01-11T08:30:00.000Z"}}
	req := httptest.NewRequest("POST", "/pdb/cmd/v1?"+q.Encode(), bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	s.h.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("submitting the report: %d %s", rec.Code, rec.Body)
	}
	reps, _ := s.rows(t, service.Request{Query: []any{"from", "reports", []any{"extract", []any{"hash"}, []any{"=", "certname", "large.example.com"}}}})
	hash := reps[0]["hash"].(string)

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	page := get(t, s.h, "GET", "/ui/report/"+hash)
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("a report of %d bytes: a page of %d bytes, %d MB allocated", len(body), page.Body.Len(), alloc>>20)
	html := page.Body.String()
	if page.Code != 200 {
		t.Fatalf("%d %.300s", page.Code, html)
	}
	for _, want := range []string{
		"Logs (1200, the first 1000 shown)",
		"/pdb/query/v4/reports/" + hash + "/logs",
		"(20000 bytes in all)",
		strings.Repeat("a", 4000),
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the page does not say %.80q", want)
		}
	}
	if strings.Contains(html, strings.Repeat("a", 4097)) || strings.Contains(html, strings.Repeat("v", 4097)) {
		t.Error("a message or value is shown whole")
	}
	if max := 5 << 20; page.Body.Len() > max {
		t.Errorf("the page is %d bytes, want at most %d", page.Body.Len(), max)
	}
	runtime.GC()
	runtime.ReadMemStats(&before)
	api := httptest.NewRecorder()
	apiReq := httptest.NewRequest("GET", "/pdb/query/v4/reports/"+hash+"/logs", nil)
	s.h.ServeHTTP(api, apiReq)
	runtime.ReadMemStats(&after)
	t.Logf("the API's /reports/<hash>/logs: %d bytes, %d MB allocated", api.Body.Len(), (after.TotalAlloc-before.TotalAlloc)>>20)
	// the stored logs are read once by the API (about twice their size);
	// the page itself holds what it shows
	if max := uint64(4*len(body) + 40<<20); alloc > max {
		t.Errorf("rendering the page allocated %d MB, want at most %d MB", alloc>>20, max>>20)
	}
}
