package storetest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

// RunNodeLifecycle checks PuppetDB's node life cycle (storage.clj:
// deactivate-node!, maybe-activate-node!, expire-stale-nodes,
// purge-deactivated-and-expired-nodes!) through the "deactivate node"
// command and the queries: node_state and the implicit "active nodes
// only" of /nodes and the root endpoint, reactivation by a newer report
// only, expiry, and purge with the node's reports.
func RunNodeLifecycle(t *testing.T, open Opener) {
	b := open(t)
	h := NewServer(t, b)
	const day = 24 * time.Hour
	base := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	at := func(d time.Duration) string { return iso(base.Add(d).UnixMilli()) }
	mustStore(t, b,
		Report(t, "a.example.com", at(0), at(0), "", "success"),
		Report(t, "b.example.com", at(0), at(0), "", "failure"),
		Report(t, "c.example.com", at(0), at(0), "", "success"),
	)
	names := func(path string, q string) []string {
		t.Helper()
		var out []string
		for _, r := range fetch(t, h, path, url.Values{"query": {q}}) {
			out = append(out, r["certname"].(string))
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	expect := func(what string, got []string, want ...string) {
		t.Helper()
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: %v, want %v", what, got, want)
		}
	}
	all := func() {
		t.Helper()
		expect("events before", names("/pdb/query/v4/events", ""), "a.example.com", "b.example.com", "c.example.com")
	}
	all()

	// version 3 as the puppetdb terminus sends it
	code, body := command(h, "deactivate_node", 3, "b.example.com",
		fmt.Sprintf(`{"certname":"b.example.com","producer_timestamp":%q}`, at(time.Hour)))
	if code != 200 || !strings.Contains(body, `"uuid"`) {
		t.Fatalf("deactivate node: %d %s", code, body)
	}
	expect("/nodes (active by default)", names("/pdb/query/v4/nodes", ""), "a.example.com", "c.example.com")
	expect("/nodes inactive", names("/pdb/query/v4/nodes", `["=","node_state","inactive"]`), "b.example.com")
	expect("/nodes any", names("/pdb/query/v4/nodes", `["=","node_state","any"]`), "a.example.com", "b.example.com", "c.example.com")
	expect(`["node","active"] false`, names("/pdb/query/v4/nodes", `["=",["node","active"],false]`), "b.example.com")
	// /events and /reports answer for every node; the root endpoint not
	all()
	expect("/reports", names("/pdb/query/v4/reports", ""), "a.example.com", "b.example.com", "c.example.com")
	expect("root events", names("/pdb/query/v4", `["from","events"]`), "a.example.com", "c.example.com")
	expect("root reports", names("/pdb/query/v4", `["from","reports"]`), "a.example.com", "c.example.com")
	expect("root nodes", names("/pdb/query/v4", `["from","nodes"]`), "a.example.com", "c.example.com")
	expect("root events of a window b reported in", names("/pdb/query/v4",
		fmt.Sprintf(`["from","events",[">","timestamp",%q]]`, at(-time.Hour))), "a.example.com", "c.example.com")
	expect("root events node_state any", names("/pdb/query/v4", `["from","events",["=","node_state","any"]]`), "a.example.com", "b.example.com", "c.example.com")
	expect("events node_state inactive", names("/pdb/query/v4/events", `["=","node_state","inactive"]`), "b.example.com")
	expect("events in nodes subquery", names("/pdb/query/v4/events",
		`["in","certname",["from","nodes",["extract",["certname"],["=","node_state","active"]]]]`), "a.example.com", "c.example.com")
	counts := fetch(t, h, "/pdb/query/v4/event-counts", url.Values{"summarize_by": {"certname"}, "query": {`["=","node_state","active"]`}})
	if len(counts) != 2 {
		t.Errorf("event-counts of active nodes: %v", counts)
	}
	row := fetch(t, h, "/pdb/query/v4/nodes", url.Values{"query": {`["=","certname","b.example.com"]`}})
	if len(row) != 0 {
		t.Errorf("/nodes certname = b: %v (the implicit active filter applies)", row)
	}
	row = fetch(t, h, "/pdb/query/v4/nodes", url.Values{"query": {`["and",["=","certname","b.example.com"],["=","node_state","any"]]`}})
	if len(row) != 1 || row[0]["deactivated"] != at(time.Hour) || row[0]["expired"] != nil {
		t.Errorf("b's row: %v, want deactivated %s", row, at(time.Hour))
	}

	// /nodes/<certname> answers for an inactive node (puppet node status
	// reads it): handlers.clj node-status adds no activity filter
	req := httptest.NewRequest("GET", "/pdb/query/v4/nodes/b.example.com", nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"deactivated" : "`+at(time.Hour)+`"`) {
		t.Errorf("/nodes/b.example.com: %d %s", rec.Code, rec.Body.String())
	}

	// an older report is stored but leaves the node inactive
	mustStore(t, b, Report(t, "b.example.com", at(30*time.Minute), at(30*time.Minute), "", "success"))
	expect("after an older report", names("/pdb/query/v4/nodes", `["=","node_state","inactive"]`), "b.example.com")
	// a stale deactivation (older than the latest report) changes nothing
	code, body = command(h, "deactivate_node", 3, "a.example.com",
		fmt.Sprintf(`{"certname":"a.example.com","producer_timestamp":%q}`, at(-time.Hour)))
	if code != 200 {
		t.Fatalf("stale deactivate: %d %s", code, body)
	}
	expect("after a stale deactivation", names("/pdb/query/v4/nodes", ""), "a.example.com", "c.example.com")
	// a newer report makes it active again
	mustStore(t, b, Report(t, "b.example.com", at(2*time.Hour), at(2*time.Hour), "", "success"))
	expect("after a newer report", names("/pdb/query/v4/nodes", ""), "a.example.com", "b.example.com", "c.example.com")
	expect("none inactive", names("/pdb/query/v4/nodes", `["=","node_state","inactive"]`))

	// versions 1 and 2; an unknown node is added, deactivated
	if code, body = command(h, "deactivate_node", 2, "d.example.com", `"d.example.com"`); code != 200 {
		t.Fatalf("version 2: %d %s", code, body)
	}
	if code, body = command(h, "deactivate_node", 1, "c.example.com", `"\"c.example.com\""`); code != 200 {
		t.Fatalf("version 1: %d %s", code, body)
	}
	expect("after versions 1 and 2", names("/pdb/query/v4/nodes", `["=","node_state","inactive"]`), "c.example.com", "d.example.com")
	// bad commands: 400, nothing changes
	for _, c := range []struct {
		version int
		payload string
	}{
		{3, `{"certname":"a.example.com","producer_timestamp":"yesterday"}`},
		{3, `{"certname":"a.example.com","extra":1}`},
		{3, `{"producer_timestamp":null}`},
		{3, `"a.example.com"`},
		{2, `{"certname":"a.example.com"}`},
		{1, `"a.example.com"`},
		{4, `{"certname":"a.example.com"}`},
		{3, `{"certname":"  "}`},
	} {
		if code, body := command(h, "deactivate_node", c.version, "a.example.com", c.payload); code != 400 {
			t.Errorf("version %d %s: %d %s, want 400", c.version, c.payload, code, body)
		}
	}
	expect("after bad commands", names("/pdb/query/v4/nodes", ""), "a.example.com", "b.example.com")

	// expiry: a has no report since base, b since base+2h
	ctx := context.Background()
	now := base.Add(8 * day)
	expired, err := b.ExpireNodes(ctx, base.Add(time.Hour).UnixMilli(), now.UnixMilli())
	if err != nil {
		t.Fatal(err)
	}
	expect("expired", expired, "a.example.com")
	expect("after expiry", names("/pdb/query/v4/nodes", ""), "b.example.com")
	row = fetch(t, h, "/pdb/query/v4/nodes", url.Values{"query": {`["=","node_state","inactive"]`}})
	for _, r := range row {
		if r["certname"] == "a.example.com" && (r["expired"] != iso(now.UnixMilli()) || r["deactivated"] != nil) {
			t.Errorf("a's row: %v", r)
		}
	}
	// a window no inactive node reported in (engine.nodeStates resolves
	// the query's own activity test) and one with such a node
	mustStore(t, b, Report(t, "e.example.com", at(5*day), at(5*day), "", "success"))
	expect("root events of a window without inactive nodes", names("/pdb/query/v4",
		fmt.Sprintf(`["from","events",[">","timestamp",%q]]`, at(4*day))), "e.example.com")
	expect("root event count of that window", names("/pdb/query/v4",
		fmt.Sprintf(`["from","events",["extract",["certname",["function","count"]],[">","timestamp",%q],["group_by","certname"]]]`, at(4*day))), "e.example.com")
	expect("root events of a window a reported in", names("/pdb/query/v4",
		fmt.Sprintf(`["from","events",[">","timestamp",%q]]`, at(-time.Hour))), "b.example.com", "e.example.com")
	expect("subquery on inactive nodes in a window without them", names("/pdb/query/v4",
		fmt.Sprintf(`["from","events",["and",[">","timestamp",%q],["not",["in","environment",["from","reports",["extract",["environment"],["=","node_state","inactive"]]]]]]]`, at(4*day))))

	// purge: every inactive node (a expired, c and d deactivated at the
	// time received), with its reports and events; b stays whole
	purged, err := b.PurgeNodes(ctx, base.Add(100*365*day).UnixMilli(), 2)
	if err != nil {
		t.Fatal(err)
	}
	expect("purged (batch of 2)", purged, "a.example.com", "c.example.com")
	purged, err = b.PurgeNodes(ctx, base.Add(100*365*day).UnixMilli(), 25)
	if err != nil {
		t.Fatal(err)
	}
	expect("purged then", purged, "d.example.com")
	expect("nodes after purge", names("/pdb/query/v4/nodes", `["=","node_state","any"]`), "b.example.com", "e.example.com")
	expect("reports after purge", names("/pdb/query/v4/reports", ""), "b.example.com", "e.example.com")
	expect("events after purge", names("/pdb/query/v4/events", ""), "b.example.com", "e.example.com")
	// what the rollups count agrees with the rows left
	agg := fetch(t, h, "/pdb/query/v4/aggregate-event-counts", url.Values{"summarize_by": {"certname"}})
	if len(agg) != 1 || fmt.Sprint(agg[0]["total"]) != "2" {
		t.Errorf("aggregate-event-counts after purge: %v, want 2 nodes", agg)
	}
	status, total := countReports(h)
	if status != 200 || total != "4" {
		t.Errorf("reports total after purge: %d %s, want 4 (b's and e's)", status, total)
	}
}

// countReports asks for one report with include_total, which the rollups
// answer, and returns X-Records.
func countReports(h http.Handler) (int, string) {
	req := httptest.NewRequest("GET", "/pdb/query/v4/reports?limit=1&include_total=true", nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Header().Get("X-Records")
}

// command POSTs a command in PuppetDB's URL form.
func command(h http.Handler, name string, version int, certname, payload string) (int, string) {
	q := url.Values{"command": {name}, "version": {fmt.Sprint(version)}, "certname": {certname}}
	req := httptest.NewRequest("POST", "/pdb/cmd/v1?"+q.Encode(), strings.NewReader(payload))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}
