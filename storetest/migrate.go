package storetest

import (
	"fmt"
	"math/rand"
	"net/url"
	"os"
	"testing"
	"time"

	"reportdb"
	"reportdb/engine"
)

// RunMigrationFill checks a migration that adds write-time tables to a
// database already holding reports: it must fill them as ingest would
// have. It stores random reports into b, runs clear (SQL that empties what
// the migrations fill, as before they ran), checks that the answers which
// read those tables now differ from the scan's (a check on the check),
// runs drop (SQL that removes what the migrations create) and the
// migrations (files, read relative to the test's directory), and
// compares again: the failing resources (failure_rollup),
// distinct_resources windows (distinct_rollup) and reports per day
// (report_type_rollup) must equal the scan's, row for row. exec runs SQL
// on b's database.
func RunMigrationFill(t *testing.T, b engine.Backend, exec func(sql string) error, clear, drop string, migrations ...string) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	h := NewServer(t, b)
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	var reports []*reportdb.Report
	newest := int64(0)
	for i := 0; i < 120; i++ {
		r := randomEventsReport(t, rng, i+1, base+rng.Int63n(30*3600000))
		reports = append(reports, r)
		for _, e := range r.Events {
			newest = max(newest, e.Timestamp)
		}
	}
	for len(reports) > 0 {
		n := min(len(reports), 1+rng.Intn(10))
		mustStore(t, b, reports[:n]...)
		reports = reports[n:]
	}

	type pair struct{ path, covered, scan string }
	var queries []pair
	queries = append(queries, pair{"/pdb/query/v4/events",
		`["extract",[["function","count"],"resource_type","resource_title"],["=","status","failure"],["group_by","resource_type","resource_title"]]`,
		`["extract",[["function","count"],"resource_type","resource_title"],["and",["=","status","failure"],["not",["=","certname","no.such.node"]]],["group_by","resource_type","resource_title"]]`})
	hour := `["function","to_string","timestamp","YYYY-MM-DD HH24"]`
	queries = append(queries, pair{"/pdb/query/v4/events",
		`["extract",[["function","count"],"resource_title",` + hour + `],["=","status","failure"],["group_by","resource_title",` + hour + `]]`,
		`["extract",[["function","count"],"resource_title",` + hour + `],["and",["=","status","failure"],["null?","report",false]],["group_by","resource_title",` + hour + `]]`})
	day := `["function","to_string","producer_timestamp","YYYY-MM-DD"]`
	queries = append(queries, pair{"/pdb/query/v4/reports",
		`["extract",[["function","count"],` + day + `],["group_by",` + day + `]]`,
		`["extract",[["function","count"],` + day + `],["not",["=","certname","no.such.node"]],["group_by",` + day + `]]`})
	// distinct windows ending at the newest event (so the tables answer),
	// starting anywhere: their edges fall inside hours and five minutes
	var windows []url.Values
	for i := 0; i < 12; i++ {
		start := newest - rng.Int63n(30*3600000)
		windows = append(windows, url.Values{"summarize_by": {"resource"}, "distinct_resources": {"true"},
			"distinct_start_time": {iso(start)}, "distinct_end_time": {iso(newest)}})
	}
	distinctFilter := func(w url.Values, covered bool) string {
		f := fmt.Sprintf(`[">=","timestamp",%q],["<=","timestamp",%q]`, w.Get("distinct_start_time"), w.Get("distinct_end_time"))
		if !covered {
			f += `,["not",["=","certname","no.such.node"]]`
		}
		return `["and",` + f + `]`
	}
	differing := func() (n int) {
		t.Helper()
		for _, q := range queries {
			if fetchBody(t, h, q.path, url.Values{"query": {q.covered}}) != fetchBody(t, h, q.path, url.Values{"query": {q.scan}}) {
				n++
			}
		}
		for _, w := range windows {
			p1, p2 := url.Values{}, url.Values{}
			for k, v := range w {
				p1[k], p2[k] = v, v
			}
			p1.Set("query", distinctFilter(w, true))
			p2.Set("query", distinctFilter(w, false))
			if fetchBody(t, h, "/pdb/query/v4/event-counts", p1) != fetchBody(t, h, "/pdb/query/v4/event-counts", p2) {
				n++
			}
		}
		return n
	}
	if n := differing(); n != 0 {
		t.Fatalf("before clearing: %d answers differ from the scan", n)
	}
	if err := exec(clear); err != nil {
		t.Fatal(err)
	}
	if differing() == 0 {
		t.Fatal("clearing the tables changed no answer: the test tests nothing")
	}
	if err := exec(drop); err != nil {
		t.Fatal(err)
	}
	for _, m := range migrations {
		body, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		if err := exec(string(body)); err != nil {
			t.Fatalf("migration %s: %v", m, err)
		}
	}
	if n := differing(); n != 0 {
		t.Fatalf("after the migrations: %d answers differ from the scan", n)
	}
}

// randomEventsReport is report i, produced at producer, with 0-5 events of
// random statuses on four resources of two types, their timestamps on a
// 17-minute grid around the run (so that they tie and cross hour and
// five-minute boundaries), property and name NULL or not.
func randomEventsReport(t testing.TB, rng *rand.Rand, i int, producer int64) *reportdb.Report {
	cert := fmt.Sprintf("node%d.example.com", rng.Intn(4))
	ts := iso(producer)
	r := Report(t, cert, ts, ts, "")
	r.Hash = fmt.Sprintf("%040x", i)
	r.Events = nil
	for j, k := 0, rng.Intn(6); j < k; j++ {
		e := reportdb.Event{
			Status:        []string{"success", "failure", "noop", "skipped"}[rng.Intn(4)],
			ResourceType:  []string{"File", "Service"}[rng.Intn(2)],
			ResourceTitle: fmt.Sprintf("/r/%d", rng.Intn(4)),
			Timestamp:     producer + int64(rng.Intn(5)-3)*17*60000,
			NewValue:      `"a"`,
			OldValue:      `"b"`,
		}
		if p := rng.Intn(3); p > 0 {
			e.Property = ptr([]string{"ensure", "mode"}[p-1])
		}
		if rng.Intn(2) == 0 {
			e.Name = ptr("x")
		}
		r.Events = append(r.Events, e)
	}
	return r
}
