package dashboard_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"reportdb/internal/testcorpus"
	"reportdb/service"
)

// payloads would run script, add elements or change the title if a page
// put them in the document unescaped.
var payloads = []string{
	`<script>window.__pwned="script";document.title="pwned"</script>`,
	`<img src=x onerror="window.__pwned='img';document.title='pwned'">`,
	`"><svg/onload="window.__pwned='svg'">`,
	`'><b onmouseover='window.__pwned=1'>bold</b>`,
	`javascript:window.__pwned='href'`,
	`</title></style></textarea><script>window.__pwned="close"</script>`,
	`{{.Title}} ${window.__pwned='tpl'} <!-- comment`,
}

// hostileReport is a corpus report whose strings carry the payloads.
func hostileReport(t *testing.T) []byte {
	m, dir := testcorpus.LoadManifest(t)
	var r map[string]any
	if err := json.Unmarshal(testcorpus.ReadFile(t, filepath.Join(dir, m.Submissions[0].Wire8)), &r); err != nil {
		t.Fatal(err)
	}
	p := func(i int) string { return payloads[i%len(payloads)] }
	r["certname"] = "hostile.example.com"
	r["producer_timestamp"] = "2025-01-11T08:30:00.000Z"
	r["start_time"] = "2025-01-11T08:29:00.000Z"
	r["end_time"] = "2025-01-11T08:29:50.000Z"
	r["status"] = "failed"
	r["configuration_version"] = p(0)
	r["environment"] = "production"
	r["transaction_uuid"] = nil
	res := r["resources"].([]any)
	for i, x := range res {
		rs := x.(map[string]any)
		rs["resource_title"] = p(i)
		rs["timestamp"] = "2025-01-11T08:29:30.000Z"
		rs["file"] = p(i + 1)
		rs["containment_path"] = []any{"Stage[main]", p(i + 2)}
		for j, e := range rs["events"].([]any) {
			ev := e.(map[string]any)
			ev["status"] = "failure"
			ev["timestamp"] = "2025-01-11T08:29:31.000Z"
			ev["message"] = p(i + j + 3)
			ev["new_value"] = p(i + j + 4)
			ev["old_value"] = map[string]any{"k": p(i + j + 5)}
			ev["property"] = p(i + j + 6)
		}
	}
	logs := r["logs"].([]any)
	for i, x := range logs {
		l := x.(map[string]any)
		l["message"] = p(i)
		l["source"] = p(i + 1)
		l["level"] = "err"
	}
	if ms, ok := r["metrics"].([]any); ok && len(ms) > 0 {
		ms[0].(map[string]any)["name"] = p(2)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestHostileReport submits a report whose fields carry HTML and
// JavaScript and checks that every page shows the text verbatim and that
// nothing of it runs or becomes markup.
func TestHostileReport(t *testing.T) {
	s := newTestServer(t)
	body := hostileReport(t)
	q := url.Values{"command": {"store_report"}, "version": {"8"}, "certname": {"hostile.example.com"},
		"producer-timestamp": {"2025-01-11T08:30:00.000Z"}}
	req := httptest.NewRequest("POST", "/pdb/cmd/v1?"+q.Encode(), bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	s.h.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("submitting the hostile report: %d %s", rec.Code, rec.Body)
	}
	reps, _ := s.rows(t, service.Request{Query: []any{"from", "reports", []any{"extract", []any{"hash"}, []any{"=", "certname", "hostile.example.com"}}}})
	hash := reps[0]["hash"].(string)
	evs, _ := s.rows(t, service.Request{Query: []any{"from", "events", []any{"extract", []any{"resource_type", "resource_title"}, []any{"=", "report", hash}}}})

	b := newBrowser(t)
	check := func(page string, mustShow ...string) {
		t.Helper()
		b.open(s.URL + page)
		var got struct {
			Pwned    any
			Title    string
			Injected int
			Text     string
		}
		b.evalInto(`({Pwned: window.__pwned === undefined ? null : String(window.__pwned), Title: document.title,
			Injected: document.querySelectorAll("img, b, script:not([src]), [onerror], [onload], [onmouseover], svg[onload], a[href^='javascript:']").length,
			Text: document.body.innerText})`, &got)
		if got.Pwned != nil || got.Title == "pwned" || got.Injected != 0 {
			t.Errorf("%s: a payload ran or became markup: __pwned=%v title=%q injected elements=%d", page, got.Pwned, got.Title, got.Injected)
		}
		for _, m := range mustShow {
			if !strings.Contains(got.Text, m) {
				t.Errorf("%s does not show %q verbatim", page, m)
			}
		}
	}
	check("/ui/", "hostile.example.com", payloads[3])
	b.shot("hostile-overview")
	check("/ui/nodes?q=hostile", "hostile.example.com")
	check("/ui/node/hostile.example.com", payloads[0])
	check("/ui/report/"+hash, payloads[0], payloads[1], payloads[2], payloads[3], payloads[4], payloads[5], payloads[6])
	b.shot("hostile-report")
	typ, title := evs[0]["resource_type"].(string), evs[0]["resource_title"].(string)
	check("/ui/resource?"+url.Values{"type": {typ}, "title": {title}}.Encode(), typ+"["+title+"]")
	check("/ui/events?node=hostile.example.com", payloads[0], payloads[1])
	check("/ui/events?"+url.Values{"title": {payloads[1]}}.Encode(), payloads[1])
	// the events explorer shows the payload inside the PQL string, escaped
	// as PQL, and PuppetDB's parser reads it back to the same title
	var ast []any
	b.evalInto(`JSON.parse(document.querySelector("#ast").textContent)`, &ast)
	if !strings.Contains(fmt.Sprint(ast), payloads[1]) {
		t.Errorf("AST of the title filter lost the title: %v", ast)
	}
}
