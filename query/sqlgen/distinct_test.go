package sqlgen_test

import (
	"strings"
	"testing"

	"reportdb/internal/testcorpus"
	"reportdb/postgres"
	"reportdb/query"
	"reportdb/schema/dialect"
	"reportdb/sqlite"
)

// TestDistinctCovered: which event-counts requests are answered from the
// distinct tables (under their guard) and which only scan. The answers
// themselves are compared on random data by storetest.RunDistinctCounts.
func TestDistinctCovered(t *testing.T) {
	const day = `["and",[">","timestamp","2026-01-01T00:00:00Z"],["<=","timestamp","2026-01-02T00:00:00Z"]]`
	w := &query.DistinctWindow{Start: 1767225600000, End: 1767312000000}
	for _, c := range []struct {
		name        string
		q           string
		summarize   string
		countBy     string
		distinct    *query.DistinctWindow
		corrective  bool
		wantCovered bool
	}{
		{"time range", day, "resource", "", w, false, true},
		{"no query", ``, "resource", "", w, false, true},
		{"one bound", `[">=","timestamp","2026-01-01T06:30:00Z"]`, "resource", "", w, false, true},
		{"not distinct", day, "resource", "", nil, false, false},
		{"by certname", day, "certname", "", w, false, false},
		{"by class", day, "containing_class", "", w, false, false},
		{"count_by certname", day, "resource", "certname", w, false, false},
		{"corrective", day, "resource", "", w, true, false},
		{"other field", `["and",[">","timestamp","2026-01-01T00:00:00Z"],["=","status","failure"]]`, "resource", "", w, false, false},
		{"or", `["or",[">","timestamp","2026-01-01T00:00:00Z"],["<","timestamp","2025-01-01T00:00:00Z"]]`, "resource", "", w, false, false},
		{"latest", `["=","latest_report?",true]`, "resource", "", w, false, false},
	} {
		o := &query.Options{SummarizeBy: c.summarize, CountBy: c.countBy, Distinct: c.distinct}
		if c.q != "" {
			o.Query, o.QuerySet = testcorpus.JSON(t, c.q), true
		}
		p, err := query.CompileEventCounts(o, c.corrective)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, d := range []dialect.Dialect{sqlite.Dialect{}, postgres.Dialect{}} {
			b, err := chosenCounts(d, p, false)
			if err != nil {
				t.Fatal(err)
			}
			covered := strings.Contains(b.SQL, "distinct_rollup") && strings.Contains(b.SQL, "JOIN resource_latest l")
			if covered != c.wantCovered {
				t.Errorf("%T %s: covered = %v, want %v\n%s", d, c.name, covered, c.wantCovered, b.SQL)
			}
			if covered && !strings.Contains(b.SQL, "NOT EXISTS (SELECT 1 FROM (SELECT r.certname") {
				t.Errorf("%T %s: no guard\n%s", d, c.name, b.SQL)
			}
		}
	}
}

// TestDistinctEventWindows: on a dialect that keeps the days' spans of
// event timestamps (PostgreSQL), every subquery of a distinct_resources
// statement that reads events bounds their report ids (and the joined
// reports') by a pair of arguments, one EventWindow each: the edges of
// the window, the events after its end (the guard and the previous
// timestamps' counts), and the scan over the window itself. SQLite has
// none.
func TestDistinctEventWindows(t *testing.T) {
	const day = `["and",[">","timestamp","2026-01-01T00:00:00Z"],["<=","timestamp","2026-01-02T00:00:00Z"]]`
	w := &query.DistinctWindow{Start: 1767225600000, End: 1767312000000}
	o := &query.Options{SummarizeBy: "resource", Distinct: w, Query: testcorpus.JSON(t, day), QuerySet: true}
	p, err := query.CompileEventCounts(o, false)
	if err != nil {
		t.Fatal(err)
	}
	b, err := chosenCounts(postgres.Dialect{}, p, false)
	if err != nil {
		t.Fatal(err)
	}
	reads := strings.Count(b.SQL, "FROM resource_events e")
	if len(b.EventWindows) == 0 || len(b.EventWindows) != reads {
		t.Fatalf("%d event windows for %d subqueries over events\n%s", len(b.EventWindows), reads, b.SQL)
	}
	var scan, after bool
	for _, ew := range b.EventWindows {
		lo, hi := postgres.Dialect{}.Placeholder(ew.Lo+1), postgres.Dialect{}.Placeholder(ew.Hi+1)
		if !strings.Contains(b.SQL, "e.report_id >= "+lo+" AND e.report_id < "+hi) {
			t.Errorf("window %+v: no bound on the events' report ids", ew)
		}
		if ew.From > ew.To || ew.To < w.Start {
			t.Errorf("window %+v: outside the request's", ew)
		}
		scan = scan || (ew.From == w.Start && ew.To == w.End)
		after = after || ew.From == w.End+1
	}
	if !scan || !after || !b.ValueSensitive {
		t.Errorf("scan window %v, after-the-end window %v, planned with values %v", scan, after, b.ValueSensitive)
	}
	if b, err := chosenCounts(sqlite.Dialect{}, p, false); err != nil || len(b.EventWindows) != 0 {
		t.Errorf("SQLite: %d event windows (%v)", len(b.EventWindows), err)
	}
}
