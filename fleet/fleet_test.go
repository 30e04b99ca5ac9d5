package fleet_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"reportdb"
	"reportdb/fleet"
	"reportdb/httpapi"
	"reportdb/ingest"
	"reportdb/internal/benchfleet"
	"reportdb/internal/conformance"
	"reportdb/service"
	"reportdb/sqlite"
)

// now is just after the corpus's newest report; with 2 days the corpus has
// responsive and unresponsive nodes.
var now = time.Date(2025, 1, 11, 9, 0, 0, 0, time.UTC)

const unresponsive = 48 * time.Hour

func corpusServer(t *testing.T, tr *fleet.Tracker) *httpapi.Server {
	db, err := sqlite.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	c := ingest.NewCommitter(db, 64)
	c.OnStored = tr.Observe
	t.Cleanup(c.Close)
	h := httpapi.New(httpapi.Config{}, db, c, slog.New(slog.NewTextHandler(io.Discard, nil)))
	conformance.LoadCorpus(t, h)
	return h
}

func rows(t *testing.T, api service.Querier, q any) []map[string]any {
	t.Helper()
	var out []map[string]any
	if _, err := api.Query(context.Background(), service.Request{Query: q}, func(r json.RawMessage) error {
		var m map[string]any
		if err := json.Unmarshal(r, &m); err != nil {
			return err
		}
		out = append(out, m)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// expected computes the fleet series from the API's answers.
func expected(t *testing.T, api service.Querier) (nodes map[[2]string]int, failed, changed map[string]int, age float64) {
	nodes, failed, changed = map[[2]string]int{}, map[string]int{}, map[string]int{}
	cutoff := now.Add(-unresponsive)
	env := map[string]string{}
	for _, n := range rows(t, api, []any{"from", "nodes"}) {
		e, _ := n["report_environment"].(string)
		env[n["certname"].(string)] = e
		ts, _ := n["report_timestamp"].(string)
		tm, err := time.Parse(time.RFC3339Nano, ts)
		st, _ := n["latest_report_status"].(string)
		switch {
		case err != nil || tm.Before(cutoff):
			st = "unresponsive"
		case st != "failed" && n["latest_report_noop_pending"] == true:
			st = "noop_pending"
		}
		nodes[[2]string{st, e}]++
	}
	// newest = age of the newest end_time
	age = math.Inf(1)
	for _, n := range rows(t, api, []any{"from", "nodes"}) {
		if ts, ok := n["report_timestamp"].(string); ok {
			tm, _ := time.Parse(time.RFC3339Nano, ts)
			age = math.Min(age, float64(now.Sub(tm))/float64(time.Second))
		}
	}
	seen := map[string]bool{}
	for _, e := range rows(t, api, []any{"from", "events", []any{"extract", []any{"certname", "status", "resource_type", "resource_title"},
		[]any{"=", "latest_report?", true}}}) {
		c, s := e["certname"].(string), e["status"].(string)
		k := c + "\x00" + s + "\x00" + e["resource_type"].(string) + "\x00" + e["resource_title"].(string)
		if seen[k] {
			continue
		}
		seen[k] = true
		switch s {
		case "failure":
			failed[env[c]]++
		case "success":
			changed[env[c]]++
		}
	}
	return nodes, failed, changed, age
}

func TestFleetSeriesMatchTheAPI(t *testing.T) {
	tr := fleet.New(unresponsive, func() time.Time { return now })
	h := corpusServer(t, tr)
	api := h.Queries()
	wantNodes, wantFailed, wantChanged, wantAge := expected(t, api)

	check := func(name string, tr *fleet.Tracker) {
		t.Helper()
		s := tr.Snapshot()
		if fmt.Sprint(s.Nodes) != fmt.Sprint(wantNodes) {
			t.Errorf("%s: nodes\n got %v\nwant %v", name, s.Nodes, wantNodes)
		}
		unresp := 0
		for k, n := range wantNodes {
			if k[0] == "unresponsive" {
				unresp += n
			}
		}
		if s.Unresponsive != unresp || unresp == 0 || unresp == len(wantNodes) {
			t.Errorf("%s: unresponsive %d, want %d (and some responsive)", name, s.Unresponsive, unresp)
		}
		for env := range wantChanged {
			if s.Failed[env] != wantFailed[env] || s.Changed[env] != wantChanged[env] {
				t.Errorf("%s: env %s failed/changed %d/%d, want %d/%d", name, env, s.Failed[env], s.Changed[env], wantFailed[env], wantChanged[env])
			}
		}
		if got := float64(now.UnixMilli()-s.NewestEnd) / 1000; got != wantAge {
			t.Errorf("%s: newest report age %v, want %v", name, got, wantAge)
		}
	}
	// hourly report counts and failing resources (the dashboard's chart),
	// counted from the tables (the tracker loads them from the rollups)
	start, end := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), now
	wantHours, wantFailing := scannedHours(t, api)
	checkHours := func(name string, tr *fleet.Tracker) {
		t.Helper()
		got, gotF := trackedHours(tr, start, end)
		if fmt.Sprint(got) != fmt.Sprint(wantHours) {
			t.Errorf("%s: reports per hour\n got %v\nwant %v", name, got, wantHours)
		}
		fs := tr.Failing(start, end, 1000)
		if fmt.Sprint(gotF) != fmt.Sprint(wantFailing) || len(wantFailing) == 0 {
			t.Errorf("%s: failing resources\n got %v\nwant %v", name, gotF, wantFailing)
		}
		for i := 1; i < len(fs); i++ {
			if fs[i].Count > fs[i-1].Count {
				t.Errorf("%s: failing resources not sorted: %v", name, fs)
			}
		}
	}
	check("observed at ingest", tr)
	checkHours("observed at ingest", tr)

	// a fresh tracker loading from the database agrees
	loaded := fleet.New(unresponsive, func() time.Time { return now })
	if err := loaded.Load(context.Background(), api); err != nil {
		t.Fatal(err)
	}
	check("loaded", loaded)
	checkHours("loaded", loaded)
	// a report stored after the load is added to the loaded counts
	st := "failed"
	loaded.Observe(&reportdb.Report{Certname: "new.example.com", ProducerTimestamp: time.Date(2025, 1, 6, 6, 30, 0, 0, time.UTC).UnixMilli(),
		EndTime: now.UnixMilli(), ReceiveTime: time.Now().UnixMilli(), Status: &st, Environment: "production"})
	if got := loaded.HourCounts(start, end)[5*24+6]["failed"]; got != wantHours["2025-01-06 06 failed"]+1 {
		t.Errorf("a report observed after the load: %d failed at 2025-01-06 06, want %d", got, wantHours["2025-01-06 06 failed"]+1)
	}

	// the exported series carry the same numbers
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(tr)
	total := 0
	for _, n := range wantNodes {
		total += n
	}
	var sum float64
	for k, n := range wantNodes {
		if k[0] == "failed" {
			sum += float64(n)
		}
	}

	// run durations: every stored report's time/total
	var count int
	var durSum float64
	for _, r := range rows(t, api, []any{"from", "reports", []any{"extract", []any{"metrics"}}}) {
		for _, m := range r["metrics"].(map[string]any)["data"].([]any) {
			mm := m.(map[string]any)
			if mm["category"] == "time" && mm["name"] == "total" {
				count++
				durSum += mm["value"].(float64)
			}
		}
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, mf := range mfs {
		if mf.GetName() == "reportdb_fleet_nodes" {
			got := map[[2]string]int{}
			for _, m := range mf.GetMetric() {
				l := map[string]string{}
				for _, lp := range m.GetLabel() {
					l[lp.GetName()] = lp.GetValue()
				}
				got[[2]string{l["status"], l["environment"]}] = int(m.GetGauge().GetValue())
			}
			if fmt.Sprint(got) != fmt.Sprint(wantNodes) {
				t.Errorf("reportdb_fleet_nodes\n got %v\nwant %v", got, wantNodes)
			}
		}
		if mf.GetName() == "reportdb_fleet_unresponsive_nodes" && int(mf.GetMetric()[0].GetGauge().GetValue()) != tr.Snapshot().Unresponsive {
			t.Errorf("reportdb_fleet_unresponsive_nodes %v", mf.GetMetric()[0].GetGauge().GetValue())
		}
		if mf.GetName() == "reportdb_fleet_run_duration_seconds" {
			found = true
			hm := mf.GetMetric()[0].GetHistogram()
			if int(hm.GetSampleCount()) != count || math.Abs(hm.GetSampleSum()-durSum) > 1e-6 || count == 0 {
				t.Errorf("run duration histogram: %d runs, sum %v; want %d, %v", hm.GetSampleCount(), hm.GetSampleSum(), count, durSum)
			}
		}
	}
	if !found {
		t.Error("no reportdb_fleet_run_duration_seconds")
	}
}

// scannedHours counts the reports per hour and status ("YYYY-MM-DD HH
// status") and the failure events per resource ("Type[title]") with
// queries the rollups do not cover (a filter on a field they do not keep),
// so that the answers come from the tables.
func scannedHours(t *testing.T, api service.Querier) (hours, failing map[string]int) {
	t.Helper()
	hourFn := []any{"function", "to_string", "producer_timestamp", "YYYY-MM-DD HH24"}
	hours, failing = map[string]int{}, map[string]int{}
	// every node's reports, inactive ones too: the history of the reports
	// stored (fleet/hours.go)
	anyNode := []any{"=", "node_state", "any"}
	for _, g := range rows(t, api, []any{"from", "reports", []any{"extract", []any{[]any{"function", "count"}, "status", hourFn},
		[]any{"and", []any{"null?", "hash", false}, anyNode}, []any{"group_by", "status", hourFn}}}) {
		hours[g["to_string"].(string)+" "+g["status"].(string)] = int(g["count"].(float64))
	}
	for _, g := range rows(t, api, []any{"from", "events", []any{"extract", []any{[]any{"function", "count"}, "resource_type", "resource_title"},
		[]any{"and", []any{"=", "status", "failure"}, []any{"null?", "report", false}, anyNode}, []any{"group_by", "resource_type", "resource_title"}}}) {
		failing[g["resource_type"].(string)+"["+g["resource_title"].(string)+"]"] = int(g["count"].(float64))
	}
	return hours, failing
}

// trackedHours is what tr holds for [start, end), keyed as scannedHours
// keys it.
func trackedHours(tr *fleet.Tracker, start, end time.Time) (hours, failing map[string]int) {
	hours, failing = map[string]int{}, map[string]int{}
	for i, m := range tr.HourCounts(start, end) {
		for st, n := range m {
			hours[start.Add(time.Duration(i)*time.Hour).Format("2006-01-02 15")+" "+st] = n
		}
	}
	for _, f := range tr.Failing(start, end, 1<<30) {
		failing[f.Type+"["+f.Title+"]"] = f.Count
	}
	return hours, failing
}

// midLoad is an API that stores reports right after each of the hourly
// queries of a load has answered: while the load runs, after the query's
// snapshot.
type midLoad struct {
	service.Querier
	after func(q string)
}

func (m midLoad) Query(ctx context.Context, r service.Request, row func(json.RawMessage) error) (int, error) {
	n, err := m.Querier.Query(ctx, r, row)
	if q, _ := json.Marshal(r.Query); err == nil && strings.Contains(string(q), "HH24") {
		m.after(string(q))
	}
	return n, err
}

// TestHourlyCountsStoredDuringLoad: reports stored while a load runs,
// after one of its queries answered, are counted once: by the load's
// queries that began after they were stored, and from what the tracker
// observed for the others.
func TestHourlyCountsStoredDuringLoad(t *testing.T) {
	tr := fleet.New(unresponsive, func() time.Time { return now })
	db, err := sqlite.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c := ingest.NewCommitter(db, 64)
	c.OnStored = tr.Observe
	defer c.Close()
	h := httpapi.New(httpapi.Config{}, db, c, slog.New(slog.NewTextHandler(io.Discard, nil)))
	reports := benchfleet.Wire8(t, 3)
	submit := func(rs []benchfleet.Report) {
		for _, r := range rs {
			q := url.Values{"command": {"store_report"}, "version": {"8"}, "certname": {r.Certname}}
			req := httptest.NewRequest("POST", "/pdb/cmd/v1?"+q.Encode(), bytes.NewReader(r.Body))
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != 200 {
				t.Fatalf("submitting %s: %d %s", r.Certname, rec.Code, rec.Body.String())
			}
		}
	}
	third := len(reports) / 3
	submit(reports[:third])
	// after each hourly query, a third of the reports more
	rest := reports[third:]
	calls := 0
	api := midLoad{h.Queries(), func(string) {
		calls++
		submit(rest[:third])
		rest = rest[third:]
	}}
	loaded := fleet.New(unresponsive, func() time.Time { return now })
	c.OnStored = func(r *reportdb.Report) { tr.Observe(r); loaded.Observe(r) }
	if err := loaded.Load(context.Background(), api); err != nil {
		t.Fatal(err)
	}
	if calls != 2 || len(rest) != 0 {
		t.Fatalf("%d hourly queries, %d reports left; want 2 and 0", calls, len(rest))
	}
	wantHours, wantFailing := scannedHours(t, h.Queries())
	if len(wantFailing) == 0 {
		t.Fatal("no failure events: the test tests nothing")
	}
	start, end := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), now.Add(72*time.Hour)
	for name, tr := range map[string]*fleet.Tracker{"observed": tr, "loaded during ingest": loaded} {
		got, gotF := trackedHours(tr, start, end)
		if fmt.Sprint(got) != fmt.Sprint(wantHours) {
			t.Errorf("%s: reports per hour\n got %v\nwant %v", name, got, wantHours)
		}
		if fmt.Sprint(gotF) != fmt.Sprint(wantFailing) {
			t.Errorf("%s: failing resources\n got %v\nwant %v", name, gotF, wantFailing)
		}
	}
}

// TestOlderReportDoesNotReplaceLatest: the latest report is the one with
// the newest producer_timestamp, as the store's latest_report.
func TestOlderReportDoesNotReplaceLatest(t *testing.T) {
	tr := fleet.New(time.Hour, func() time.Time { return time.UnixMilli(10_000_000) })
	failed, changed := "failed", "changed"
	tr.Observe(&reportdb.Report{Certname: "a", ProducerTimestamp: 2000, EndTime: 9_999_000, Status: &changed, Environment: "production"})
	tr.Observe(&reportdb.Report{Certname: "a", ProducerTimestamp: 1000, EndTime: 9_999_000, Status: &failed, Environment: "production",
		Events: []reportdb.Event{{Status: "failure", ResourceType: "File", ResourceTitle: "/x"}}})
	s := tr.Snapshot()
	if s.Nodes[[2]string{"changed", "production"}] != 1 || s.Failed["production"] != 0 {
		t.Fatalf("an older report replaced the latest: %+v", s)
	}
}

// BenchmarkCollect is the scrape cost of the fleet series at 10,000 nodes.
func BenchmarkCollect(b *testing.B) {
	tr := fleet.New(time.Hour, nil)
	envs := []string{"production", "staging", "development"}
	sts := []string{"changed", "unchanged", "failed"}
	nowMs := time.Now().UnixMilli()
	for i := 0; i < 10000; i++ {
		st := sts[i%3]
		tr.Observe(&reportdb.Report{Certname: fmt.Sprintf("node%05d.example.com", i), ProducerTimestamp: nowMs,
			EndTime: nowMs - int64(i%200)*60_000, Status: &st, Environment: envs[i%3],
			Metrics: []byte(`[{"category":"time","name":"total","value":12.5}]`)})
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(tr)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := reg.Gather(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkObserve is the cost ingest pays per stored report.
func BenchmarkObserve(b *testing.B) {
	tr := fleet.New(time.Hour, nil)
	st := "changed"
	metrics := []byte(`[{"category":"resources","name":"changed","value":2},{"category":"resources","name":"failed","value":0},` +
		`{"category":"resources","name":"total","value":250},{"category":"time","name":"config_retrieval","value":3.2},` +
		`{"category":"time","name":"file","value":1.1},{"category":"time","name":"package","value":4.5},` +
		`{"category":"time","name":"total","value":12.5},{"category":"events","name":"success","value":2},` +
		`{"category":"events","name":"failure","value":0},{"category":"events","name":"total","value":2},` +
		`{"category":"changes","name":"total","value":2}]`)
	events := make([]reportdb.Event, 20)
	for i := range events {
		events[i] = reportdb.Event{Status: "success", ResourceType: "File", ResourceTitle: fmt.Sprintf("/etc/f%d", i), Timestamp: 1_700_000_000_000}
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		tr.Observe(&reportdb.Report{Certname: fmt.Sprintf("node%05d", i%10000), ProducerTimestamp: int64(1_700_000_000_000 + i),
			EndTime: 1_700_000_000_000, Status: &st, Environment: "production", Metrics: metrics, Events: events})
	}
}
