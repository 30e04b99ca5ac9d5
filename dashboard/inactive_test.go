package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"reportdb/dashboard"
	"reportdb/fleet"
	"reportdb/httpapi"
	"reportdb/internal/apitest"
	"reportdb/service"
	"reportdb/sqlite"
)

// lifecycleServer is the HTTP stack wired as serve wires it (the fleet
// state observing ingest and forgetting deactivated nodes), with the
// store at hand for expiry, which retention runs.
type lifecycleServer struct {
	h   http.Handler
	api service.Querier
	db  *sqlite.DB
	tr  *fleet.Tracker
}

func newLifecycleServer(t *testing.T, at time.Time) *lifecycleServer {
	t.Helper()
	clock := func() time.Time { return at }
	tr := fleet.New(2*time.Hour, clock)
	f := apitest.New(t, httpapi.Config{OnDeactivated: tr.Forget}, apitest.Options{OnStored: tr.Observe})
	api, db := f.API, f.DB
	d := dashboard.New(dashboard.Options{Queries: api.Queries(), Unresponsive: 2 * time.Hour, Fleet: tr, Now: clock,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	return &lifecycleServer{h: d.Wrap(api), api: api.Queries(), db: db, tr: tr}
}

// submitAs stores web01-run1 (one failed, several changed resources) as
// certname's report produced at at.
func submitAs(t *testing.T, h http.Handler, certname string, at time.Time) {
	t.Helper()
	var r map[string]any
	json.Unmarshal(readTestdata(t, "apply/web01-run1.pdb-wire.json"), &r)
	r["certname"] = certname
	b, _ := json.Marshal(r)
	submit(t, h, b, at)
}

var (
	nodeRowRE = regexp.MustCompile(`<tr><td><a href="/ui/node/[^"]+">([^<]+)</a></td>.*?</tr>`)
	badgeRE   = regexp.MustCompile(`<span class="badge (st-[a-z]+)">([^<]+)</span>`)
	inactRE   = regexp.MustCompile(`<span data-inactive="([a-z]+)">[a-z]+</span> <time datetime="([^"]+)">`)
)

// nodesRows reads the nodes table: certname -> the row's HTML.
func nodesRows(page string) (names []string, rows map[string]string) {
	rows = map[string]string{}
	tbody := page[strings.Index(page, "<tbody>"):]
	for _, m := range nodeRowRE.FindAllStringSubmatch(tbody, -1) {
		names = append(names, m[1])
		rows[m[1]] = m[0]
	}
	return names, rows
}

// TestInactiveNodes: deactivated and expired nodes leave the overview's
// counts and the default nodes page (as PuppetDB's queries leave them
// out), are counted in one line of the overview, listed with state
// inactive or any (status "inactive", and since when), and keep their
// node page, reports and events.
func TestInactiveNodes(t *testing.T) {
	at := now
	s := newLifecycleServer(t, at)
	for _, n := range []struct {
		certname string
		ago      time.Duration
	}{{"a.example.com", 10 * time.Minute}, {"b.example.com", 20 * time.Minute}, {"c.example.com", 3 * time.Hour}, {"d.example.com", 30 * time.Minute}} {
		submitAs(t, s.h, n.certname, at.Add(-n.ago))
	}
	if err := s.tr.Load(context.Background(), s.api); err != nil {
		t.Fatal(err)
	}
	bHash := hashOf(t, s.api, "b.example.com")
	if page := body(t, s.h, "/ui/"); strings.Contains(page, `id="inactive-nodes"`) {
		t.Errorf("the overview mentions inactive nodes while none is")
	}
	deactivatedAt := at.Add(-5 * time.Minute)
	apitest.Deactivate(t, s.h, "b.example.com", deactivatedAt)
	// c expires (no report for an hour, here), and the fleet state learns
	// it at its next load
	if exp, err := s.db.ExpireNodes(context.Background(), at.Add(-time.Hour).UnixMilli(), at.UnixMilli()); err != nil || len(exp) != 1 {
		t.Fatalf("expiring: %v %v, want c.example.com", exp, err)
	}
	if err := s.tr.Load(context.Background(), s.api); err != nil {
		t.Fatal(err)
	}

	// ---- overview: the counts are of active nodes; one line for the others
	page := body(t, s.h, "/ui/")
	if got := regexp.MustCompile(`id="nodes-total">(\d+)<`).FindStringSubmatch(page); got == nil || got[1] != "2" {
		t.Errorf("overview total %v, want the 2 active nodes", got)
	}
	if !strings.Contains(page, `<p id="inactive-nodes"><a href="/ui/nodes?state=inactive">2 inactive nodes</a> (deactivated or expired)`) {
		t.Errorf("the overview does not link the 2 inactive nodes: %s", page[strings.Index(page, "</table>"):][:300])
	}

	// ---- nodes: active by default, inactive and any on request
	for _, c := range []struct {
		state, total string
		want         []string
	}{
		{"", "2", []string{"a.example.com", "d.example.com"}},
		{"active", "2", []string{"a.example.com", "d.example.com"}},
		{"inactive", "2", []string{"b.example.com", "c.example.com"}},
		{"any", "4", []string{"a.example.com", "b.example.com", "c.example.com", "d.example.com"}},
	} {
		target := "/ui/nodes"
		if c.state != "" {
			target += "?state=" + c.state
		}
		page := body(t, s.h, target)
		names, rows := nodesRows(page)
		if fmt.Sprint(names) != fmt.Sprint(c.want) {
			t.Errorf("%s: rows %v, want %v", target, names, c.want)
		}
		if !strings.Contains(page, fmt.Sprintf(`data-total="%s"`, c.total)) {
			t.Errorf("%s: the pager does not say %s in all", target, c.total)
		}
		state := c.state
		if state == "" {
			state = "active"
		}
		if !strings.Contains(page, fmt.Sprintf(`<option selected>%s</option>`, state)) || !strings.Contains(page, `<select name="state">`) {
			t.Errorf("%s: the state selector does not show %s", target, state)
		}
		// the sort links keep the state
		for _, l := range regexp.MustCompile(`<th scope="col"[^>]*><a href="([^"]+)"`).FindAllStringSubmatch(page, -1) {
			if has := strings.Contains(l[1], "state="+c.state); has != (c.state != "") {
				t.Errorf("%s: sort link %s", target, l[1])
			}
		}
		if col := strings.Contains(page, ">Inactive since</th>"); col != (state != "active") {
			t.Errorf("%s: an Inactive since column: %v", target, col)
		}
		for name, row := range rows {
			badge := badgeRE.FindStringSubmatch(row)
			inact := inactRE.FindStringSubmatch(row)
			switch name {
			case "b.example.com", "c.example.com":
				how := map[string]string{"b.example.com": "deactivated", "c.example.com": "expired"}[name]
				since := map[string]string{"b.example.com": deactivatedAt.UTC().Format("2006-01-02T15:04:05.000Z"),
					"c.example.com": at.UTC().Format("2006-01-02T15:04:05.000Z")}[name]
				if badge == nil || badge[2] != "inactive" || badge[1] != "st-inactive" {
					t.Errorf("%s: %s shows status %v, want inactive", target, name, badge)
				}
				if inact == nil || inact[1] != how || inact[2] != since {
					t.Errorf("%s: %s inactive since %v, want %s at %s", target, name, inact, how, since)
				}
				// its latest report's figures are shown (the reports of
				// an inactive node are read too)
				if !strings.Contains(row, `data-count="failed">1<`) {
					t.Errorf("%s: %s without its latest report's figures: %s", target, name, row)
				}
			default:
				if badge == nil || badge[2] == "inactive" || inact != nil {
					t.Errorf("%s: active %s shows %v %v", target, name, badge, inact)
				}
			}
		}
	}
	// the pager keeps the state and the filters
	page = body(t, s.h, "/ui/nodes?state=any&n=1&q=example")
	next := regexp.MustCompile(`<a rel="next" href="([^"]+)"`).FindStringSubmatch(page)
	if next == nil {
		t.Fatalf("nodes?state=any&n=1&q=example: no next page")
	}
	if u, _ := url.Parse(strings.ReplaceAll(next[1], "&amp;", "&")); u.Query().Get("state") != "any" || u.Query().Get("q") != "example" {
		t.Errorf("the next page %s loses the state or the certname filter", next[1])
	}
	if rec := get(t, s.h, "GET", "/ui/nodes?state=gone"); rec.Code != 400 || !strings.Contains(rec.Body.String(), "unknown state") {
		t.Errorf("state=gone: %d", rec.Code)
	}

	// ---- node: an inactive node's page, marked, with its reports
	for _, c := range []struct{ certname, mark, since string }{
		{"b.example.com", "Deactivated", deactivatedAt.UTC().Format("2006-01-02T15:04:05.000Z")},
		{"c.example.com", "Expired", at.UTC().Format("2006-01-02T15:04:05.000Z")},
	} {
		page := body(t, s.h, "/ui/node/"+c.certname)
		notice := regexp.MustCompile(`<p class="notice" id="node-inactive"><strong>([A-Za-z]+)</strong> <time datetime="([^"]+)">`).FindStringSubmatch(page)
		if notice == nil || notice[1] != c.mark || notice[2] != c.since {
			t.Errorf("node %s: marked %v, want %s at %s", c.certname, notice, c.mark, c.since)
		}
		if got := strings.Count(page[strings.Index(page, `id="reports-table"`):], `<a href="/ui/report/`); got != 1 {
			t.Errorf("node %s: %d reports listed, want 1", c.certname, got)
		}
		if got := strings.Count(page, `<rect class="st-`); got != 1 {
			t.Errorf("node %s: %d runs in the timeline, want 1", c.certname, got)
		}
		if !strings.Contains(page, `id="node-resources"`) {
			t.Errorf("node %s: no resources that changed or failed", c.certname)
		}
		if b := badgeRE.FindStringSubmatch(page); b == nil || b[2] != "inactive" {
			t.Errorf("node %s: latest status %v, want inactive", c.certname, b)
		}
	}
	if page := body(t, s.h, "/ui/node/a.example.com"); strings.Contains(page, `id="node-inactive"`) {
		t.Errorf("an active node is marked inactive")
	}

	// ---- its report and its events
	page = body(t, s.h, "/ui/report/"+bHash)
	if !strings.Contains(page, "b.example.com") || !strings.Contains(page, `<table id="events-table">`) {
		t.Errorf("the report of a deactivated node: no events")
	}
	for _, target := range []string{"/ui/events?node=b.example.com", "/ui/events?report=" + bHash} {
		page := body(t, s.h, target)
		if n := strings.Count(page, `<a href="/ui/node/b.example.com">`); n == 0 {
			t.Errorf("%s: no events of the deactivated node", target)
		}
		if !strings.Contains(page, `node_state = &#34;any&#34;`) {
			t.Errorf("%s: the PQL shown does not say node_state = \"any\"", target)
		}
	}
	// the explorer without a node follows PuppetDB: active nodes only
	if page := body(t, s.h, "/ui/events"); strings.Contains(page, `<a href="/ui/node/b.example.com">`) ||
		!strings.Contains(page, `<a href="/ui/node/a.example.com">`) {
		t.Errorf("the events explorer without a node filter lists a deactivated node's events, or no active node's")
	}

	// ---- a newer report makes the node active again, at once
	submitAs(t, s.h, "b.example.com", at.Add(-time.Minute))
	names, _ := nodesRows(body(t, s.h, "/ui/nodes"))
	if fmt.Sprint(names) != "[a.example.com b.example.com d.example.com]" {
		t.Errorf("after b's newer report: %v", names)
	}
	if page := body(t, s.h, "/ui/"); !strings.Contains(page, `>1 inactive node</a>`) ||
		regexp.MustCompile(`id="nodes-total">(\d+)<`).FindStringSubmatch(page)[1] != "3" {
		t.Errorf("after b's newer report the overview does not count 3 active and 1 inactive node")
	}
}

// The events filter of one node reads back, through PuppetDB's PQL
// parser, as its AST (node_state included).
func TestEventFilterNodeState(t *testing.T) {
	s := newEmptyServer(t, now)
	f := dashboard.EventFilter{Node: `a"b.example.com`, Status: "failure"}
	var got []any
	if _, err := s.api.Query(context.Background(), service.Request{Query: f.PQL([]string{"certname"}, 0, 0), ASTOnly: true},
		func(r json.RawMessage) error { return json.Unmarshal(r, &got) }); err != nil {
		t.Fatal(err)
	}
	have, _ := json.Marshal(got[2].([]any)[2])
	want, _ := json.Marshal(f.AST())
	if string(have) != string(want) || !strings.Contains(string(want), `["=","node_state","any"]`) {
		t.Errorf("PQL %s reads back as %s, want %s with node_state any", f.PQL([]string{"certname"}, 0, 0), have, want)
	}
}
