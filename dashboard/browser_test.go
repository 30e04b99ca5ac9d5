package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"reportdb/dashboard"
	"reportdb/fleet"
	"reportdb/httpapi"
	"reportdb/internal/apitest"
	"reportdb/internal/conformance"
	"reportdb/service"
)

// now is the dashboard's clock in these tests: shortly after the corpus's
// newest report, so that with unresponsive = 48h some nodes are
// responsive and others are not.
var now = time.Date(2025, 1, 11, 9, 0, 0, 0, time.UTC)

const unresponsive = 48 * time.Hour

// testServer is reportdb's HTTP stack (API + dashboard) over a fresh
// SQLite store filled with the shared corpus.
type testServer struct {
	URL string
	api service.Querier
	h   http.Handler
}

func newTestServer(t *testing.T) *testServer {
	t.Helper()
	// as serve wires it: the fleet state loaded through the API, then
	// updated by ingest and by deactivations
	tr := fleet.New(unresponsive, func() time.Time { return now })
	api := apitest.New(t, httpapi.Config{OnDeactivated: tr.Forget}, apitest.Options{OnStored: tr.Observe}).API
	conformance.LoadCorpus(t, api)
	if err := tr.Load(context.Background(), api.Queries()); err != nil {
		t.Fatal(err)
	}
	d := dashboard.New(dashboard.Options{Queries: api.Queries(), Unresponsive: unresponsive, Fleet: tr,
		Now: func() time.Time { return now }, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	h := d.Wrap(api)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &testServer{URL: srv.URL, api: api.Queries(), h: h}
}

// rows asks the API (not the dashboard) for the answer a page must show.
func (s *testServer) rows(t *testing.T, req service.Request) ([]map[string]any, int) {
	t.Helper()
	var out []map[string]any
	total, err := s.api.Query(context.Background(), req, func(r json.RawMessage) error {
		var m map[string]any
		if err := json.Unmarshal(r, &m); err != nil {
			return err
		}
		out = append(out, m)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out, total
}

// chromium finds the browser: $REPORTDB_CHROMIUM, else Debian's chromium.
// Without one the browser tests fail under CI=true (CI must install it:
// .ci/run does) and are skipped, with the reason, elsewhere.
func chromium(t *testing.T) string {
	t.Helper()
	cands := []string{os.Getenv("REPORTDB_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser"}
	for _, c := range cands {
		if c == "" {
			continue
		}
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	msg := "the dashboard's browser tests need Chromium: apt-get install -y chromium (or set REPORTDB_CHROMIUM)"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// browser is one headless Chromium tab with its console watched.
type browser struct {
	t       *testing.T
	ctx     context.Context
	mu      sync.Mutex
	console []string
	shots   string
}

func newBrowser(t *testing.T, extraEnv ...string) *browser {
	t.Helper()
	path := chromium(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	if len(extraEnv) > 0 {
		opts = append(opts, chromedp.Env(extraEnv...))
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() { cancelT(); cancelC(); cancelA() })
	b := &browser{t: t, ctx: ctx, shots: os.Getenv("REPORTDB_SCREENSHOTS")}
	if b.shots == "" {
		b.shots = t.TempDir()
	} else if err := os.MkdirAll(b.shots, 0o755); err != nil {
		t.Fatal(err)
	}
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() || m.Type == chromedp.ConsoleWarning {
				b.mu.Lock()
				b.console = append(b.console, fmt.Sprintf("%s %s:%d %s", m.Type, m.URL, m.Line+1, m.Text))
				b.mu.Unlock()
			}
		}
	}()
	return b
}

// open loads a page, waits for it and checks the console stayed clean.
func (b *browser) open(u string) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, chromedp.Navigate(u)); err != nil {
		b.t.Fatalf("loading %s: %v", u, err)
	}
	b.settle()
}

// openError loads a page that must answer status: the browser's console
// message about it is expected.
func (b *browser) openError(u string, status int) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, chromedp.Navigate(u), chromedp.WaitReady(chromedp.CSS("footer"))); err != nil {
		b.t.Fatalf("loading %s: %v", u, err)
	}
	b.waitFor(`document.readyState === "complete"`)
	time.Sleep(100 * time.Millisecond)
	b.mu.Lock()
	defer b.mu.Unlock()
	var rest []string
	for _, m := range b.console {
		if !strings.Contains(m, fmt.Sprintf("status of %d", status)) {
			rest = append(rest, m)
		}
	}
	if len(rest) > 0 || len(b.console) == 0 {
		b.t.Errorf("console on %s: %q, want only the %d", u, b.console, status)
	}
	b.console = nil
}

// settle waits until the page script ran and the console messages of the
// load arrived, then fails on any error or warning.
func (b *browser) settle() {
	b.t.Helper()
	b.waitFor(`document.readyState === "complete"`)
	time.Sleep(100 * time.Millisecond)
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.console) > 0 {
		b.t.Errorf("console messages on %s:\n%s", b.eval(`location.href`), strings.Join(b.console, "\n"))
		b.console = nil
	}
}

// eval evaluates a JavaScript expression and returns its JSON value.
func (b *browser) eval(expr string) string {
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]byte](expr))
	if err != nil {
		b.t.Fatalf("evaluating %s: %v", expr, err)
	}
	return string(v)
}

func (b *browser) evalInto(expr string, v any) {
	b.t.Helper()
	if err := json.Unmarshal([]byte(b.eval(expr)), v); err != nil {
		b.t.Fatalf("%s: %v", expr, err)
	}
}

// texts is the trimmed text of every element a CSS selector matches.
func (b *browser) texts(sel string) []string {
	b.t.Helper()
	var out []string
	b.evalInto(fmt.Sprintf(`Array.from(document.querySelectorAll(%q)).map(e => e.textContent.trim())`, sel), &out)
	return out
}

func (b *browser) text(sel string) string {
	b.t.Helper()
	var out string
	b.evalInto(fmt.Sprintf(`(document.querySelector(%q) || {textContent: "<missing>"}).textContent.trim()`, sel), &out)
	return out
}

// shot writes a PNG screenshot of the window as a test artifact (in
// $REPORTDB_SCREENSHOTS, else the test's temporary directory).
func (b *browser) shot(name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b.shots, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// follow clicks a link or submits a form and waits for the next page.
func (b *browser) follow(action chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	b.eval(`window.__stale = true`)
	if err := chromedp.Do(b.ctx, action); err != nil {
		b.t.Fatal(err)
	}
	b.waitFor(`!window.__stale && document.readyState === "complete" && !!document.querySelector("footer")`)
	b.settle()
}

// waitFor evaluates a condition until it holds (an evaluation during a
// navigation may fail: it is retried).
func (b *browser) waitFor(cond string) {
	b.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if ok, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](cond)); err == nil && ok {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	b.t.Fatalf("timed out waiting for %s", cond)
}

// expectedStatus is a node's dashboard status computed by the test from the
// nodes endpoint's fields.
func expectedStatus(n map[string]any) string {
	ts, _ := n["report_timestamp"].(string)
	tm, err := time.Parse(time.RFC3339Nano, ts)
	st, _ := n["latest_report_status"].(string)
	switch {
	case err != nil || tm.Before(now.Add(-unresponsive)):
		return "unresponsive"
	case st != "failed" && n["latest_report_noop_pending"] == true:
		return "noop pending"
	}
	return st
}

func TestBrowserPages(t *testing.T) {
	s := newTestServer(t)
	b := newBrowser(t, "TZ=Asia/Tokyo")

	// ---- overview: nodes by status equal the nodes endpoint's answer
	nodes, _ := s.rows(t, service.Request{Query: []any{"from", "nodes"}})
	want := map[string]int{}
	for _, n := range nodes {
		want[expectedStatus(n)]++
	}
	if len(want) < 3 {
		t.Fatalf("the corpus should give several statuses at %s: %v", now, want)
	}
	b.open(s.URL + "/")
	if loc := b.text("h1"); loc != "Overview" {
		t.Fatalf("/ did not lead to the overview: %q", loc)
	}
	b.shot("overview")
	for _, st := range dashboard.Statuses {
		got := b.text(fmt.Sprintf(`#node-counts td[data-total-status=%q]`, st))
		if got != fmt.Sprint(want[st]) {
			t.Errorf("overview: %d %s nodes expected (API), page shows %q", want[st], st, got)
		}
	}
	if got := b.text("#nodes-total"); got != fmt.Sprint(len(nodes)) {
		t.Errorf("overview total %q, want %d", got, len(nodes))
	}
	// the chart's legend: reports by status over the window (the whole corpus)
	byStatus, _ := s.rows(t, service.Request{Query: []any{"from", "reports", []any{"extract",
		[]any{[]any{"function", "count"}, "status"}, []any{"group_by", "status"}}}})
	for _, g := range byStatus {
		st, _ := g["status"].(string)
		if got := b.text(fmt.Sprintf(`[data-legend=%q]`, st)); got != fmt.Sprint(g["count"]) {
			t.Errorf("chart legend %s: %q, want %v", st, got, g["count"])
		}
	}
	var barSum int
	b.evalInto(`Array.from(document.querySelectorAll(".chart rect[data-count]")).reduce((a, r) => a + +r.dataset.count, 0)`, &barSum)
	if barSum != 149 {
		t.Errorf("the chart's bars hold %d reports, want the corpus's 149", barSum)
	}
	// times are shown in the browser's zone (Asia/Tokyo is UTC+9)
	var tm struct{ DT, Text string }
	b.evalInto(`(e => ({DT: e.getAttribute("datetime"), Text: e.textContent}))(document.querySelector("#latest-failures-table time"))`, &tm)
	if at, err := time.Parse(time.RFC3339Nano, tm.DT); err != nil || tm.Text != at.In(time.FixedZone("JST", 9*3600)).Format("2006-01-02 15:04:05") {
		t.Errorf("time %s shown as %q, want it in Asia/Tokyo", tm.DT, tm.Text)
	}

	// the dark scheme follows the system's preference
	bg := func() string {
		var c string
		b.evalInto(`getComputedStyle(document.body).backgroundColor`, &c)
		return c
	}
	light := bg()
	if _, err := chromedp.Call(b.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}}); err != nil {
		t.Fatal(err)
	}
	if dark := bg(); dark == light || dark != "rgb(21, 25, 29)" {
		t.Errorf("dark scheme: background %s (light %s)", dark, light)
	}
	b.shot("overview-dark")
	if _, err := chromedp.Call(b.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "light"}}}); err != nil {
		t.Fatal(err)
	}

	// ---- nodes: a status filter from the overview's link
	b.follow(chromedp.Click(chromedp.CSS(`#node-counts td[data-total-status="failed"] a`)))
	b.shot("nodes-failed")
	if got := len(b.texts("#nodes-table tbody tr")); got != want["failed"] {
		t.Errorf("nodes?status=failed: %d rows, want %d", got, want["failed"])
	}
	for _, st := range b.texts("#nodes-table tbody td:nth-child(3)") {
		if st != "failed" {
			t.Errorf("nodes?status=failed shows a %q node", st)
		}
	}
	// paging: 10 per page, certname order, page 2 is the API's offset 10
	names, total := s.rows(t, service.Request{Query: []any{"from", "nodes", []any{"extract", []any{"certname"}}},
		OrderBy: []service.Order{{Field: "certname", Order: "asc"}}, Total: true})
	b.open(s.URL + "/ui/nodes?n=10")
	b.shot("nodes")
	if got := b.text(".pageinfo"); !strings.HasPrefix(got, fmt.Sprintf("1–10 of %d", total)) {
		t.Errorf("pager %q, want 1–10 of %d", got, total)
	}
	b.follow(chromedp.Click(chromedp.CSS(`a[rel=next]`)))
	page2 := b.texts("#nodes-table tbody td:first-child")
	if len(page2) != 10 {
		t.Fatalf("page 2 has %d rows", len(page2))
	}
	for i, c := range page2 {
		if c != names[10+i]["certname"] {
			t.Errorf("page 2 row %d: %s, want %s", i, c, names[10+i]["certname"])
		}
	}
	// sorting by the latest report, newest first
	b.follow(chromedp.Click(chromedp.CSS(`#nodes-table thead th:nth-child(4) a`)))
	byTime, _ := s.rows(t, service.Request{Query: []any{"from", "nodes", []any{"extract", []any{"certname"}}},
		OrderBy: []service.Order{{Field: "report_timestamp", Order: "desc"}, {Field: "certname", Order: "asc"}}, Limit: 10})
	for i, c := range b.texts("#nodes-table tbody td:first-child") {
		if c != byTime[i]["certname"] {
			t.Errorf("sorted by time, row %d: %s, want %s", i, c, byTime[i]["certname"])
		}
	}
	// the certname filter through the form: substring, then a regex
	for _, f := range []struct {
		q     string
		regex bool
		pat   string
	}{{"prod", false, "prod"}, {`^web0[12]\.`, true, `^web0[12]\.`}} {
		b.open(s.URL + "/ui/nodes")
		if f.regex {
			if err := chromedp.Do(b.ctx, chromedp.Click(chromedp.CSS(`input[name=regex]`))); err != nil {
				t.Fatal(err)
			}
		}
		if err := chromedp.Do(b.ctx, chromedp.SendKeys(chromedp.CSS(`input[name=q]`), f.q)); err != nil {
			t.Fatal(err)
		}
		b.follow(chromedp.Submit(chromedp.CSS(`input[name=q]`)))
		_, n := s.rows(t, service.Request{Query: []any{"from", "nodes", []any{"extract", []any{"certname"}, []any{"~", "certname", f.pat}}}, Total: true})
		rows := b.texts("#nodes-table tbody td:first-child")
		if len(rows) != n || n == 0 {
			t.Errorf("certname filter %q (regex %v): %d rows, API %d", f.q, f.regex, len(rows), n)
		}
	}
	// an invalid regex is the user's error, shown as such
	b.openError(s.URL+"/ui/nodes?regex=1&q="+url.QueryEscape("(["), 400)
	if got := b.text(".error strong"); got != "400" {
		t.Errorf("invalid regex: %q, want a 400 page", got)
	}

	// ---- node: the node with the most reports
	per, _ := s.rows(t, service.Request{Query: []any{"from", "reports", []any{"extract",
		[]any{[]any{"function", "count"}, "certname"}, []any{"group_by", "certname"}}}})
	sort.Slice(per, func(i, j int) bool { return per[i]["count"].(float64) > per[j]["count"].(float64) })
	busiest := per[0]["certname"].(string)
	b.open(s.URL + "/ui/node/" + url.PathEscape(busiest))
	b.shot("node")
	reps, _ := s.rows(t, service.Request{Query: []any{"from", "reports", []any{"extract", []any{"hash", "metrics"},
		[]any{"=", "certname", busiest}}}, OrderBy: []service.Order{{Field: "producer_timestamp", Order: "desc"}}, Limit: 50})
	if got := len(b.texts("#reports-table tbody tr")); got != len(reps) {
		t.Errorf("node %s: %d report rows, want %d", busiest, got, len(reps))
	}
	if got := len(b.texts(".timeline rect")); got != min(int(per[0]["count"].(float64)), 100) {
		t.Errorf("timeline has %d runs, want %v", got, per[0]["count"])
	}
	metric := func(r map[string]any, cat, name string) string {
		for _, m := range r["metrics"].(map[string]any)["data"].([]any) {
			mm := m.(map[string]any)
			if mm["category"] == cat && mm["name"] == name {
				return fmt.Sprint(mm["value"])
			}
		}
		return "0"
	}
	first := b.texts("#reports-table tbody tr:first-child td")
	if first[3] != metric(reps[0], "resources", "changed") || first[4] != metric(reps[0], "resources", "failed") {
		t.Errorf("node's latest report: changed/failed %s/%s, want %s/%s", first[3], first[4],
			metric(reps[0], "resources", "changed"), metric(reps[0], "resources", "failed"))
	}

	// ---- report: the report with the most events
	evc, _ := s.rows(t, service.Request{Query: []any{"from", "events", []any{"extract",
		[]any{[]any{"function", "count"}, "report"}, []any{"group_by", "report"}}}})
	sort.Slice(evc, func(i, j int) bool { return evc[i]["count"].(float64) > evc[j]["count"].(float64) })
	hash := evc[0]["report"].(string)
	b.open(s.URL + "/ui/report/" + hash)
	b.shot("report")
	if got := len(b.texts("#events-table tbody tr")); float64(got) != evc[0]["count"].(float64) {
		t.Errorf("report %s: %d event rows, want %v", hash, got, evc[0]["count"])
	}
	logs, _ := s.rows(t, service.Request{Query: []any{"from", "reports", []any{"extract", []any{"logs"}, []any{"=", "hash", hash}}}})
	if got, want := len(b.texts("#logs-table tbody tr")), len(logs[0]["logs"].(map[string]any)["data"].([]any)); got != want {
		t.Errorf("report %s: %d log rows, want %d", hash, got, want)
	}

	// ---- events explorer: failures; the PQL shown is what runs
	_, failures := s.rows(t, service.Request{Query: []any{"from", "events", []any{"extract", []any{"certname"}, []any{"=", "status", "failure"}}}, Total: true})
	b.open(s.URL + "/ui/events")
	if err := chromedp.Do(b.ctx, chromedp.SetValue(chromedp.CSS(`select[name=status]`), "failure")); err != nil {
		t.Fatal(err)
	}
	b.follow(chromedp.Submit(chromedp.CSS(`select[name=status]`)))
	b.shot("events")
	if got, want := len(b.texts("#events-table tbody tr")), min(failures, 50); got != want {
		t.Errorf("events explorer: %d failures on the first page, want %d", got, want)
	}
	if got := b.text(".pageinfo"); got != fmt.Sprintf("1–%d · page 1", min(failures, 50)) {
		t.Errorf("events explorer pager: %q", got)
	}
	if got := len(b.texts("a[rel=next]")); (got > 0) != (failures > 50) {
		t.Errorf("events explorer: next links %d with %d failures", got, failures)
	}
	// events paging without a total: 2,501 events, page 2 is the API's offset 50
	pqlFailures := b.text("#pql")
	b.open(s.URL + "/ui/events")
	b.follow(chromedp.Click(chromedp.CSS(`a[rel=next]`)))
	if got := b.text(".pageinfo"); got != "51–100 · page 2" {
		t.Errorf("events page 2: %q", got)
	}
	all, _ := s.rows(t, service.Request{Query: dashboard.EventFilter{}.PQL([]string{"certname", "report"}, 50, 50)})
	if got := b.texts("#events-table tbody td:nth-child(2)"); len(got) != 50 || got[0] != all[0]["certname"] || got[49] != all[49]["certname"] {
		t.Errorf("events page 2 rows differ from the API's offset 50")
	}
	b.open(s.URL + "/ui/events?status=failure")
	pql := b.text("#pql")
	if pql != pqlFailures {
		t.Errorf("the form and the link give different queries: %q, %q", pql, pqlFailures)
	}
	if !strings.Contains(pql, `status = "failure"`) {
		t.Errorf("PQL %q", pql)
	}
	var ast any
	b.evalInto(`JSON.parse(document.querySelector("#ast").textContent)`, &ast)
	if !strings.Contains(fmt.Sprint(ast), "[= status failure]") {
		t.Errorf("AST %v", ast)
	}
	_, n := s.rows(t, service.Request{Query: pql, Total: true})
	if n != failures {
		t.Errorf("the page's PQL answers %d rows through the API, want %d", n, failures)
	}

	// ---- resource: a failing resource across the fleet
	first2 := b.texts("#events-table tbody tr:first-child td")
	b.follow(chromedp.Click(chromedp.CSS(`#events-table tbody tr:first-child td:nth-child(4) a`)))
	b.shot("resource")
	typ, title := b.eval(`new URL(location.href).searchParams.get("type")`), b.eval(`new URL(location.href).searchParams.get("title")`)
	var ty, ti string
	json.Unmarshal([]byte(typ), &ty)
	json.Unmarshal([]byte(title), &ti)
	if ty+"["+ti+"]" != first2[3] && !strings.HasPrefix(first2[3], ty+"["+ti+"]") {
		t.Errorf("resource link led to %s[%s], row shows %s", ty, ti, first2[3])
	}
	_, rf := s.rows(t, service.Request{Query: []any{"from", "events", []any{"extract", []any{"certname"},
		[]any{"and", []any{"=", "resource_type", ty}, []any{"=", "resource_title", ti}, []any{"=", "status", "failure"}}}}, Total: true})
	if got := b.text("#resource-failed"); got != fmt.Sprint(rf) || rf == 0 {
		t.Errorf("resource %s[%s]: %s failures shown, API %d", ty, ti, got, rf)
	}

	// ---- keyboard: the skip link is the first stop, "/" focuses the search
	b.open(s.URL + "/ui/nodes")
	if err := chromedp.Do(b.ctx, chromedp.KeyEvent("/")); err != nil {
		t.Fatal(err)
	}
	if got := b.eval(`document.activeElement.name`); got != `"q"` {
		t.Errorf(`"/" focused %s, want the certname field`, got)
	}

	// ---- a node deactivated through the command endpoint: out of the
	// overview's counts, one line links the inactive nodes, its page marks it
	apitest.Deactivate(t, s.h, busiest, now)
	b.open(s.URL + "/ui/")
	if got := b.text("#nodes-total"); got != fmt.Sprint(len(nodes)-1) {
		t.Errorf("overview total after a deactivation: %q, want %d", got, len(nodes)-1)
	}
	if got := b.text("#inactive-nodes"); !strings.HasPrefix(got, "1 inactive node (deactivated or expired)") {
		t.Errorf("overview's inactive line: %q", got)
	}
	b.follow(chromedp.Click(chromedp.CSS(`#inactive-nodes a`)))
	b.shot("nodes-inactive")
	if got := b.texts("#nodes-table tbody td:first-child"); len(got) != 1 || got[0] != busiest {
		t.Errorf("inactive nodes: %v, want %s", got, busiest)
	}
	if got := b.text("#nodes-table tbody td:nth-child(3)"); got != "inactive" {
		t.Errorf("an inactive node's status: %q", got)
	}
	if got := b.text("#nodes-table tbody [data-inactive]"); got != "deactivated" {
		t.Errorf("an inactive node's Inactive since: %q", got)
	}
	if got := b.eval(`document.querySelector("select[name=state]").value`); got != `"inactive"` {
		t.Errorf("the state selector shows %s", got)
	}
	b.follow(chromedp.Click(chromedp.CSS(`#nodes-table tbody td:first-child a`)))
	b.shot("node-inactive")
	if got := b.text("#node-inactive"); !strings.HasPrefix(got, "Deactivated") {
		t.Errorf("the deactivated node's page: %q", got)
	}
	if got := len(b.texts("#reports-table tbody tr")); got != len(reps) {
		t.Errorf("the deactivated node's page: %d report rows, want %d", got, len(reps))
	}
	// the selector through the form: every node
	b.open(s.URL + "/ui/nodes")
	if err := chromedp.Do(b.ctx, chromedp.SetValue(chromedp.CSS(`select[name=state]`), "any")); err != nil {
		t.Fatal(err)
	}
	b.follow(chromedp.Submit(chromedp.CSS(`select[name=state]`)))
	if got := b.text(".pageinfo"); !strings.Contains(got, fmt.Sprintf(" of %d", len(nodes))) {
		t.Errorf("state any: %q, want all %d nodes", got, len(nodes))
	}

	// ---- without JavaScript the pages are plain links and forms
	if _, err := chromedp.Call(b.ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatal(err)
	}
	b.open(s.URL + "/ui/nodes?n=10")
	if got := b.text(".pageinfo"); !strings.HasPrefix(got, "1–10") {
		t.Errorf("without JavaScript: %q", got)
	}
	if got := b.text("#nodes-table tbody tr:first-child td:nth-child(4) time"); !strings.HasSuffix(got, "UTC") {
		t.Errorf("without JavaScript the times stay in UTC: %q", got)
	}
	var next string
	b.evalInto(`document.querySelector("a[rel=next]").href`, &next)
	b.open(next)
	if got := b.text(".pageinfo"); !strings.HasPrefix(got, "11–20") {
		t.Errorf("without JavaScript, next page: %q", got)
	}
}
