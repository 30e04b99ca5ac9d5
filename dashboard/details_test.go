package dashboard_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"reportdb/dashboard"
	"reportdb/httpapi"
	"reportdb/internal/apitest"
	"reportdb/service"
)

// countingAPI counts the queries a page makes.
type countingAPI struct {
	service.Querier
	n atomic.Int64
}

func (c *countingAPI) Query(ctx context.Context, req service.Request, fn func(json.RawMessage) error) (int, error) {
	c.n.Add(1)
	return c.Querier.Query(ctx, req, fn)
}

func (c *countingAPI) QueryStream(ctx context.Context, req service.Request, fn func(io.Reader) error) (int, error) {
	c.n.Add(1)
	return c.Querier.QueryStream(ctx, req, fn)
}

// emptyServer is the HTTP stack over an empty SQLite store, the
// dashboard's clock at at and its queries counted.
type emptyServer struct {
	h   http.Handler
	api service.Querier
	q   *countingAPI
}

func newEmptyServer(t *testing.T, at time.Time) *emptyServer {
	t.Helper()
	api := apitest.New(t, httpapi.Config{}, apitest.Options{}).API
	q := &countingAPI{Querier: api.Queries()}
	d := dashboard.New(dashboard.Options{Queries: q, Unresponsive: 2 * time.Hour, Now: func() time.Time { return at },
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	return &emptyServer{h: d.Wrap(api), api: api.Queries(), q: q}
}

// submit stores a wire-format v8 report, its times moved so that it ends
// at producer (when set).
func submit(t *testing.T, h http.Handler, body []byte, producer time.Time) {
	t.Helper()
	var r map[string]any
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatal(err)
	}
	if !producer.IsZero() {
		r["producer_timestamp"] = producer.UTC().Format(time.RFC3339Nano)
		r["end_time"] = producer.UTC().Format(time.RFC3339Nano)
		r["start_time"] = producer.Add(-time.Minute).UTC().Format(time.RFC3339Nano)
	}
	b, _ := json.Marshal(r)
	q := url.Values{"command": {"store_report"}, "version": {"8"}, "certname": {r["certname"].(string)},
		"producer-timestamp": {r["producer_timestamp"].(string)}}
	req := httptest.NewRequest("POST", "/pdb/cmd/v1?"+q.Encode(), bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("submitting: %d %s", rec.Code, rec.Body)
	}
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("../testdata/puppet7/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// hashOf is the hash of certname's newest report.
func hashOf(t *testing.T, api service.Querier, certname string) string {
	t.Helper()
	var hash string
	_, err := api.Query(context.Background(), service.Request{Query: []any{"from", "reports",
		[]any{"extract", []any{"hash"}, []any{"=", "certname", certname}}},
		OrderBy: []service.Order{{Field: "producer_timestamp", Order: "desc"}}, Limit: 1},
		func(r json.RawMessage) error {
			var m struct{ Hash string }
			err := json.Unmarshal(r, &m)
			hash = m.Hash
			return err
		})
	if err != nil || hash == "" {
		t.Fatalf("no report of %s: %v", certname, err)
	}
	return hash
}

func body(t *testing.T, h http.Handler, target string) string {
	t.Helper()
	rec := get(t, h, "GET", target)
	if rec.Code != 200 {
		t.Fatalf("GET %s: %d %.300s", target, rec.Code, rec.Body)
	}
	return rec.Body.String()
}

// The main navigation leads to pages for people: /metrics is Prometheus
// text for a scraper, explained in the footer instead.
func TestNavHasNoPrometheusLink(t *testing.T) {
	s := newEmptyServer(t, now)
	page := body(t, s.h, "/ui/")
	nav := page[strings.Index(page, `<nav aria-label="Main">`):]
	nav = nav[:strings.Index(nav, "</nav>")]
	if strings.Contains(nav, "/metrics") {
		t.Errorf("the main navigation links to the raw Prometheus text: %s", nav)
	}
	foot := page[strings.Index(page, "<footer>"):]
	if !strings.Contains(foot, `href="/metrics"`) || !strings.Contains(foot, "Prometheus") {
		t.Errorf("the footer does not explain /metrics: %s", foot)
	}
}

var countCell = regexp.MustCompile(`data-count="(failed|changed|noop|runtime)">([^<]*)<`)

// The nodes list shows the latest report's failed, changed and noop
// counts and run time, with the same number of queries whatever the
// number of rows.
func TestNodesListLatestCounts(t *testing.T) {
	s := newTestServer(t)
	var nodes []struct {
		Certname string  `json:"certname"`
		Hash     *string `json:"latest_report_hash"`
	}
	if _, err := s.api.Query(context.Background(), service.Request{Query: []any{"from", "nodes",
		[]any{"extract", []any{"certname", "latest_report_hash"}}}, OrderBy: []service.Order{{Field: "certname", Order: "asc"}}},
		func(r json.RawMessage) error {
			var n struct {
				Certname string  `json:"certname"`
				Hash     *string `json:"latest_report_hash"`
			}
			nodes = append(nodes, n)
			return json.Unmarshal(r, &nodes[len(nodes)-1])
		}); err != nil {
		t.Fatal(err)
	}
	page := body(t, s.h, "/ui/nodes?n=500")
	rows := strings.Split(page[strings.Index(page, "<tbody>"):], "</tr>")
	checked := 0
	for i, n := range nodes {
		if n.Hash == nil {
			continue
		}
		reps, _ := s.rows(t, service.Request{Query: []any{"from", "reports", []any{"extract", []any{"metrics"}, []any{"=", "hash", *n.Hash}}}})
		want := map[string]string{"failed": "0", "changed": "0", "noop": "0", "runtime": ""}
		for _, m := range reps[0]["metrics"].(map[string]any)["data"].([]any) {
			mm := m.(map[string]any)
			v := mm["value"].(float64)
			switch fmt.Sprint(mm["category"], "/", mm["name"]) {
			case "resources/failed":
				want["failed"] = fmt.Sprint(int(v))
			case "resources/changed":
				want["changed"] = fmt.Sprint(int(v))
			case "events/noop":
				want["noop"] = fmt.Sprint(int(v))
			case "time/total":
				want["runtime"] = "set"
			}
		}
		if !strings.Contains(rows[i], ">"+n.Certname+"<") {
			t.Fatalf("row %d is not %s: %s", i, n.Certname, rows[i])
		}
		got := map[string]string{}
		for _, m := range countCell.FindAllStringSubmatch(rows[i], -1) {
			got[m[1]] = m[2]
		}
		if got["runtime"] != "" && want["runtime"] == "set" {
			want["runtime"] = got["runtime"]
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: latest report figures %v, want %v", n.Certname, got, want)
		}
		checked++
	}
	if checked < 10 {
		t.Fatalf("only %d nodes with reports checked", checked)
	}
	if !strings.Contains(page, `scope="col" class="num" title="noop events in the latest report">Noop</th>`) {
		t.Errorf("no Noop column heading")
	}

	// the queries of a page do not grow with its rows
	e := newEmptyServer(t, now)
	for i := range 12 {
		var r map[string]any
		json.Unmarshal(readTestdata(t, "apply/web01-run1.pdb-wire.json"), &r)
		r["certname"] = fmt.Sprintf("node%02d.example.com", i)
		b, _ := json.Marshal(r)
		submit(t, e.h, b, now.Add(-time.Duration(i)*time.Minute))
	}
	queries := func(n int) int64 {
		before := e.q.n.Load()
		page := body(t, e.h, fmt.Sprintf("/ui/nodes?n=%d", n))
		if got := strings.Count(page, `data-count="failed">1<`); got != n {
			t.Errorf("nodes?n=%d: %d rows show web01-run1's failed resource", n, got)
		}
		return e.q.n.Load() - before
	}
	if two, twelve := queries(2), queries(12); two != twelve || twelve > 3 {
		t.Errorf("the nodes page made %d queries for 2 rows, %d for 12: want the same few", two, twelve)
	}
}

// A report without a producer (Puppet's http report processor sends none)
// does not say "by ,".
func TestReportWithoutProducer(t *testing.T) {
	s := newEmptyServer(t, now)
	req := httptest.NewRequest("POST", "/reports/upload", bytes.NewReader(readTestdata(t, "format12/web01-run2.yaml")))
	req.Header.Set("Content-Type", "application/x-yaml")
	rec := httptest.NewRecorder()
	s.h.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("POST /reports/upload: %d %s", rec.Code, rec.Body)
	}
	page := body(t, s.h, "/ui/report/"+hashOf(t, s.api, "web01-112122492383.clients.test"))
	produced := page[strings.Index(page, "<dt>Produced</dt>"):]
	produced = produced[:strings.Index(produced, "</dd>")]
	if strings.Contains(produced, " by ") || !strings.Contains(produced, "received") {
		t.Errorf("a report without a producer: %s", produced)
	}
}

var (
	timeBar = regexp.MustCompile(`<rect class="bar-[a-z]+" x="200" y="[0-9.]+" width="([0-9.]+)" height="16" data-name="([^"]+)" data-value="([^"]+)"( data-outside="true")?>`)
)

// The time breakdown of a puppet apply run: Puppet's total, every bar on
// one scale with the total among them, config_retrieval (longer than the
// total: apply compiles before the run it times) marked, and the run
// named puppet apply; a puppet agent run (app01, cached catalog) and the
// corpus's agent runs named puppet agent. Durations are short and
// readable.
func TestReportTimesAndCommand(t *testing.T) {
	s := newEmptyServer(t, now)
	for _, f := range []string{"apply/web01-run1.pdb-wire.json", "apply/app01-run1.pdb-wire.json"} {
		submit(t, s.h, readTestdata(t, f), time.Time{})
	}
	page := body(t, s.h, "/ui/report/"+hashOf(t, s.api, "web01-1122004123898.clients.test"))
	// time/total of web01-run1 is 0.068281812 s
	if !strings.Contains(page, `Puppet's total: <span id="time-total">68.3 ms</span>`) {
		t.Errorf("the breakdown's total is not Puppet's time/total (68.3 ms)")
	}
	bars := timeBar.FindAllStringSubmatch(page, -1)
	if len(bars) < 9 || bars[0][2] != "total" {
		t.Errorf("time bars %v: want total first, then every other time metric", bars)
		bars = nil
	}
	total := 0.068281812
	var ratio float64
	for _, b := range bars {
		w, _ := strconv.ParseFloat(b[1], 64)
		v, _ := strconv.ParseFloat(b[3], 64)
		if ratio == 0 {
			ratio = w / v
		}
		if w > 1 && (w/v < ratio*0.99 || w/v > ratio*1.01) {
			t.Errorf("bar %s: %v wide for %v s, the total %v wide for %v s: not one scale", b[2], w, v, bars[0][1], bars[0][3])
		}
		if outside := b[4] != ""; outside != (v > total) {
			t.Errorf("bar %s (%v s, total %v s): marked outside the total %v", b[2], v, total, outside)
		}
	}
	if !strings.Contains(page, `id="times-outside"`) || !strings.Contains(page, "config_retrieval *") {
		t.Errorf("config_retrieval, longer than the total, is not explained")
	}
	if !strings.Contains(page, `<span id="run-command">puppet apply</span>`) {
		t.Errorf("web01-run1 (puppet apply) is not named so")
	}
	if strings.Contains(page, ", agent)") {
		t.Errorf("a puppet apply run is called agent")
	}
	want := map[string]string{"time/filebucket": "0.05 ms", "time/schedule": "0.25 ms", "time/file": "13.4 ms",
		"time/config_retrieval": "258 ms", "resources/total": "22", "resources/changed": "10"}
	for _, m := range regexp.MustCompile(`data-metric="([^"]+)"[^>]*>([^<]*)<`).FindAllStringSubmatch(page, -1) {
		if w, ok := want[m[1]]; ok && m[2] != w {
			t.Errorf("metric %s shown as %q, want %q", m[1], m[2], w)
		}
		if strings.Contains(m[2], "e-") || len(m[2]) > 9 {
			t.Errorf("metric %s shown as %q", m[1], m[2])
		}
	}

	page = body(t, s.h, "/ui/report/"+hashOf(t, s.api, "app01-1122004123898.clients.test"))
	if !strings.Contains(page, `<span id="run-command">puppet agent</span>`) {
		t.Errorf("app01-run1 (puppet agent) is not named so")
	}
	if strings.Contains(page, `data-outside`) {
		t.Errorf("an agent run's phases are within its total")
	}
	c := newTestServer(t)
	page = body(t, c.h, "/ui/report/"+hashOf(t, c.api, "app01.prod.example.com"))
	if !strings.Contains(page, `<span id="run-command">puppet agent</span>`) {
		t.Errorf("a corpus report (puppet agent) is not named so")
	}
}

var tickX = regexp.MustCompile(`<text class="tick" x="([0-9.]+)" y="168"`)

// A new install's first hour after reports imported from before the
// window: the chart spans the hours with reports (at least 6), not 14
// days with a hairline at the right edge. Over 14 days the axis labels
// stay apart.
func TestOverviewChartSpan(t *testing.T) {
	at := time.Date(2026, 12, 7, 15, 40, 0, 0, time.UTC)
	s := newEmptyServer(t, at)
	submit(t, s.h, readTestdata(t, "apply/db01-run1.pdb-wire.json"), at.Add(-20*24*time.Hour))
	submit(t, s.h, readTestdata(t, "apply/web01-run1.pdb-wire.json"), at.Add(-10*time.Minute))
	page := body(t, s.h, "/ui/")
	if n := strings.Count(page, `<rect class="hover"`); n != 6 {
		t.Errorf("the chart of one hour of reports has %d hourly bars, want 6", n)
	}
	if !strings.Contains(page, `From <time datetime="2026-12-07T10:00:00.000Z">`) {
		t.Errorf("the chart does not start 6 hours before its end")
	}
	ticksApart := func(page string) {
		t.Helper()
		prev := -1000.0
		xs := tickX.FindAllStringSubmatch(page, -1)
		if len(xs) < 3 {
			t.Errorf("%d axis labels", len(xs))
		}
		for _, m := range xs {
			x, _ := strconv.ParseFloat(m[1], 64)
			if x-prev < 100 || x > 960-70 {
				t.Errorf("axis label at %v (previous at %v): labels must be 100 apart and fit in 960", x, prev)
			}
			prev = x
		}
	}
	ticksApart(page)

	submit(t, s.h, readTestdata(t, "apply/db01-run2.pdb-wire.json"), at.Add(-13*24*time.Hour))
	page = body(t, s.h, "/ui/")
	if n := strings.Count(page, `<rect class="hover"`); n < 13*24 {
		t.Errorf("reports 13 days apart: %d hourly bars", n)
	}
	ticksApart(page)
}

// Long values without spaces (checksums, base64 content) keep a readable
// column: the cells have a minimum width and may break anywhere, and the
// table scrolls rather than squeezing them.
func TestEventsLongValues(t *testing.T) {
	s := newEmptyServer(t, now)
	submit(t, s.h, readTestdata(t, "apply/web01-run2.pdb-wire.json"), time.Time{})
	hash := hashOf(t, s.api, "web01-1122004123898.clients.test")
	css := body(t, s.h, "/ui/static/app.css")
	if !strings.Contains(css, "#events-table td.val, #events-table td.msg { min-width: 14em; }") ||
		!strings.Contains(css, ".scroll { overflow-x: auto; }") || strings.Contains(css, "word-break: break-word") {
		t.Errorf("app.css does not keep the events' value and message columns readable")
	}
	for _, p := range []string{"/ui/events?report=" + hash, "/ui/report/" + hash} {
		page := body(t, s.h, p)
		if !strings.Contains(page, `<div class="scroll"><table id="events-table">`) || !strings.Contains(page, `<td class="val"><span class="old">{sha256}`) {
			t.Errorf("%s: the events table is not in a scroll box with value cells", p)
		}
	}
}

// In a narrow window the value column of a checksum event keeps its
// width (the table scrolls instead).
func TestBrowserEventsNarrow(t *testing.T) {
	s := newEmptyServer(t, now)
	submit(t, s.h, readTestdata(t, "apply/web01-run2.pdb-wire.json"), time.Time{})
	srv := httptest.NewServer(s.h)
	t.Cleanup(srv.Close)
	b := newBrowser(t)
	if _, err := chromedp.Call(b.ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{Width: 760, Height: 900, DeviceScaleFactor: 1}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/ui/events?node=web01-1122004123898.clients.test", "/ui/report/" + hashOf(t, s.api, "web01-1122004123898.clients.test")} {
		b.open(srv.URL + p)
		b.shot("events-narrow")
		var widths []float64
		b.evalInto(`Array.from(document.querySelectorAll("#events-table span.old")).map(e => e.parentElement.getBoundingClientRect().width)`, &widths)
		if len(widths) == 0 {
			t.Fatalf("%s: no value cells", p)
		}
		for _, w := range widths {
			if w < 150 {
				t.Errorf("%s: a value column %v px wide in a 760 px window", p, w)
			}
		}
	}
}
