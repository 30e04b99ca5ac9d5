package sqlgen_test

import (
	"strings"
	"testing"

	"reportdb/internal/testcorpus"
	"reportdb/postgres"
	"reportdb/query"
	"reportdb/query/sqlgen"
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
		for _, d := range []sqlgen.Dialect{sqlite.Dialect{}, postgres.Dialect{}} {
			b, err := sqlgen.EventCounts(d, p)
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
