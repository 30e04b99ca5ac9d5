package fleet_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"reportdb/fleet"
	"reportdb/httpapi"
	"reportdb/internal/apitest"
	"reportdb/internal/conformance"
	"reportdb/service"
	"reportdb/sqlite"
)

// lifecycleServer is corpusServer wired as serve wires it for the node
// life cycle: the tracker observes stored reports and forgets deactivated
// nodes. The store is returned for expiry, which retention runs.
func lifecycleServer(t *testing.T, tr *fleet.Tracker) (*httpapi.Server, *sqlite.DB) {
	t.Helper()
	f := apitest.New(t, httpapi.Config{OnDeactivated: tr.Forget}, apitest.Options{OnStored: tr.Observe})
	conformance.LoadCorpus(t, f.API)
	return f.API, f.DB
}

// storeReport stores a minimal wire v8 report of certname produced at at.
func storeReport(t *testing.T, h http.Handler, certname string, at time.Time, status string) {
	t.Helper()
	ts := at.UTC().Format(time.RFC3339Nano)
	r := map[string]any{"certname": certname, "puppet_version": "7.0.0", "report_format": 10, "configuration_version": "1",
		"start_time": ts, "end_time": ts, "producer_timestamp": ts, "producer": "puppet.example.com",
		"transaction_uuid": nil, "catalog_uuid": nil, "code_id": nil, "job_id": nil, "cached_catalog_status": nil,
		"corrective_change": nil, "noop": false, "noop_pending": false, "environment": "production", "status": status,
		"type": "agent", "resources": []any{}, "metrics": []any{}, "logs": []any{}}
	b, _ := json.Marshal(r)
	q := url.Values{"command": {"store_report"}, "version": {"8"}, "certname": {certname}}
	req := httptest.NewRequest("POST", "/pdb/cmd/v1?"+q.Encode(), bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("storing a report of %s: %d %s", certname, rec.Code, rec.Body)
	}
}

// inactiveByAPI counts the inactive nodes as the API lists them, a node
// both deactivated and expired as deactivated.
func inactiveByAPI(t *testing.T, api service.Querier) map[string]int {
	t.Helper()
	out := map[string]int{"deactivated": 0, "expired": 0}
	for _, n := range rows(t, api, []any{"from", "nodes", []any{"extract", []any{"certname", "deactivated", "expired"},
		[]any{"=", "node_state", "inactive"}}}) {
		if n["deactivated"] != nil {
			out["deactivated"]++
		} else {
			out["expired"]++
		}
	}
	return out
}

// nonzero leaves out the environments without resources (Snapshot
// lists every environment with nodes; expected, those with resources).
func nonzero(m map[string]int) map[string]int {
	out := map[string]int{}
	for k, n := range m {
		if n != 0 {
			out[k] = n
		}
	}
	return out
}

func nodeTotal(s fleet.Snapshot) int {
	n := 0
	for _, c := range s.Nodes {
		n += c
	}
	return n
}

// gauge reads reportdb_fleet_inactive_nodes by state from a scrape.
func gauge(t *testing.T, tr *fleet.Tracker) map[string]int {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(tr)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, mf := range mfs {
		if mf.GetName() != "reportdb_fleet_inactive_nodes" {
			continue
		}
		for _, m := range mf.GetMetric() {
			out[m.GetLabel()[0].GetValue()] = int(m.GetGauge().GetValue())
		}
	}
	return out
}

// TestInactiveNodes: a node deactivated through the command leaves the
// fleet series at once and counts as deactivated; expired nodes leave at
// the next load; a node both deactivated and expired counts once, as
// deactivated; an older report leaves a deactivated node out, a newer
// one brings it back. After each step a fresh load agrees with the API.
func TestInactiveNodes(t *testing.T) {
	tr := fleet.New(unresponsive, func() time.Time { return now })
	h, db := lifecycleServer(t, tr)
	api := h.Queries()
	if err := tr.Load(context.Background(), api); err != nil {
		t.Fatal(err)
	}
	if g := gauge(t, tr); fmt.Sprint(g) != "map[deactivated:0 expired:0]" {
		t.Fatalf("reportdb_fleet_inactive_nodes before any deactivation: %v, want both states at 0", g)
	}
	type latest struct {
		certname string
		at       time.Time
	}
	var nodes []latest
	// expiry goes by the latest report's producer_timestamp
	for _, n := range rows(t, api, []any{"from", "reports", []any{"extract", []any{"certname", "producer_timestamp"},
		[]any{"=", "latest_report?", true}}}) {
		at, _ := time.Parse(time.RFC3339Nano, n["producer_timestamp"].(string))
		nodes = append(nodes, latest{n["certname"].(string), at})
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].at.Before(nodes[j].at) })
	if len(nodes) < 6 {
		t.Fatalf("%d nodes in the corpus", len(nodes))
	}
	all := nodeTotal(tr.Snapshot())
	agrees := func(step string, want map[string]int) {
		t.Helper()
		if got := inactiveByAPI(t, api); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: the API lists %v inactive, the test expects %v", step, got, want)
		}
		fresh := fleet.New(unresponsive, func() time.Time { return now })
		for name, tr := range map[string]*fleet.Tracker{"tracked": tr, "loaded": fresh} {
			if err := tr.Load(context.Background(), api); err != nil {
				t.Fatal(err)
			}
			wantNodes, wantFailed, wantChanged, _ := expected(t, api)
			s := tr.Snapshot()
			if fmt.Sprint(s.Nodes) != fmt.Sprint(wantNodes) || fmt.Sprint(nonzero(s.Failed)) != fmt.Sprint(wantFailed) ||
				fmt.Sprint(nonzero(s.Changed)) != fmt.Sprint(wantChanged) {
				t.Errorf("%s, %s: nodes %v failed %v changed %v\nwant %v %v %v", step, name, s.Nodes, s.Failed, s.Changed,
					wantNodes, wantFailed, wantChanged)
			}
			if g := gauge(t, tr); fmt.Sprint(g) != fmt.Sprint(want) {
				t.Errorf("%s, %s: reportdb_fleet_inactive_nodes %v, want %v", step, name, g, want)
			}
			// the hourly counts keep every stored report
			start, end := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), now.Add(24*time.Hour)
			wantHours, wantFailing := scannedHours(t, api)
			if got, gotF := trackedHours(tr, start, end); fmt.Sprint(got) != fmt.Sprint(wantHours) || fmt.Sprint(gotF) != fmt.Sprint(wantFailing) {
				t.Errorf("%s, %s: hourly counts\n got %v %v\nwant %v %v", step, name, got, gotF, wantHours, wantFailing)
			}
		}
	}

	// deactivated: gone from the series at once, without a load
	b := nodes[len(nodes)-1]
	apitest.Deactivate(t, h, b.certname, b.at.Add(time.Minute))
	s := tr.Snapshot()
	if nodeTotal(s) != all-1 || s.Inactive["deactivated"] != 1 {
		t.Fatalf("after deactivating %s: %d nodes (want %d), inactive %v", b.certname, nodeTotal(s), all-1, s.Inactive)
	}
	// a stale deactivation (older than the node's latest report) changes nothing
	a := nodes[len(nodes)-2]
	apitest.Deactivate(t, h, a.certname, a.at.Add(-time.Minute))
	if s := tr.Snapshot(); nodeTotal(s) != all-1 {
		t.Errorf("a stale deactivation removed %s", a.certname)
	}
	agrees("deactivated", map[string]int{"deactivated": 1, "expired": 0})

	// expired (by retention, on this or another instance): gone at the
	// next load; the oldest two nodes, one of them then deactivated too
	horizon := nodes[1].at.Add(time.Millisecond)
	expired, err := db.ExpireNodes(context.Background(), horizon.UnixMilli(), now.UnixMilli())
	if err != nil {
		t.Fatal(err)
	}
	if len(expired) != 2 {
		t.Fatalf("expired %v, want the two oldest nodes", expired)
	}
	agrees("expired", map[string]int{"deactivated": 1, "expired": 2})
	apitest.Deactivate(t, h, nodes[0].certname, now)
	if s := tr.Snapshot(); s.Inactive["deactivated"] != 2 || s.Inactive["expired"] != 1 {
		t.Errorf("an expired node deactivated: inactive %v, want it counted as deactivated", s.Inactive)
	}
	agrees("expired and deactivated", map[string]int{"deactivated": 2, "expired": 1})

	// a report older than the deactivation is stored but leaves the node
	// out; a newer one brings it back
	storeReport(t, h, b.certname, b.at.Add(-time.Hour), "changed")
	if s := tr.Snapshot(); nodeTotal(s) != all-3 || s.Inactive["deactivated"] != 2 {
		t.Errorf("an older report of a deactivated node: %d nodes (want %d), inactive %v", nodeTotal(s), all-3, s.Inactive)
	}
	agrees("an older report", map[string]int{"deactivated": 2, "expired": 1})
	storeReport(t, h, b.certname, b.at.Add(time.Hour), "failed")
	if s := tr.Snapshot(); nodeTotal(s) != all-2 || s.Inactive["deactivated"] != 1 {
		t.Errorf("a newer report of a deactivated node: %d nodes (want %d), inactive %v", nodeTotal(s), all-2, s.Inactive)
	}
	agrees("a newer report", map[string]int{"deactivated": 1, "expired": 1})

	// an unknown node deactivated is added, deactivated
	apitest.Deactivate(t, h, "never.example.com", now)
	if s := tr.Snapshot(); s.Inactive["deactivated"] != 2 || nodeTotal(s) != all-2 {
		t.Errorf("an unknown node deactivated: inactive %v, %d nodes", s.Inactive, nodeTotal(s))
	}
	agrees("an unknown node", map[string]int{"deactivated": 2, "expired": 1})
}

// afterQuery is an API that runs hook once, right after the first query
// whose JSON contains match has answered: while a load runs.
type afterQuery struct {
	service.Querier
	match string
	hook  func()
}

func (a *afterQuery) Query(ctx context.Context, r service.Request, row func(json.RawMessage) error) (int, error) {
	n, err := a.Querier.Query(ctx, r, row)
	if q, _ := json.Marshal(r.Query); err == nil && a.hook != nil && strings.Contains(string(q), a.match) {
		a.hook()
		a.hook = nil
	}
	return n, err
}

// TestForgetDuringLoad: a node deactivated after a load's query saw it
// active stays out when the load ends; a node deactivated then brought
// back by a newer report during the load is in.
func TestForgetDuringLoad(t *testing.T) {
	tr := fleet.New(unresponsive, func() time.Time { return now })
	h, _ := lifecycleServer(t, tr)
	var certs []string
	for _, n := range rows(t, h.Queries(), []any{"from", "nodes", []any{"extract", []any{"certname"}}}) {
		certs = append(certs, n["certname"].(string))
	}
	sort.Strings(certs)
	gone, back := certs[0], certs[1]
	api := &afterQuery{Querier: h.Queries(), match: "latest_report?", hook: func() {
		apitest.Deactivate(t, h, gone, now)
		apitest.Deactivate(t, h, back, now)
		storeReport(t, h, back, now.Add(time.Minute), "unchanged")
	}}
	if err := tr.Load(context.Background(), api); err != nil {
		t.Fatal(err)
	}
	wantNodes, _, _, _ := expected(t, h.Queries())
	if s := tr.Snapshot(); fmt.Sprint(s.Nodes) != fmt.Sprint(wantNodes) || s.Inactive["deactivated"] != 1 {
		t.Errorf("after a load during which %s was deactivated and %s deactivated and reported again:\n got %v inactive %v\nwant %v, 1 deactivated",
			gone, back, s.Nodes, s.Inactive, wantNodes)
	}
}
