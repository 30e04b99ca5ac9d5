package sqlgen_test

import (
	"math"
	"strings"
	"testing"

	"reportdb/postgres"
	"reportdb/query"
	"reportdb/query/sqlgen"
	"reportdb/schema/dialect"
)

// TestEventTimeWindow: the window of event timestamps a plan can return
// comes from the comparisons of the timestamp ANDed at its top; a
// comparison under OR or NOT, another entity's or another field's
// timestamp, and distinct_resources plans give none.
func TestEventTimeWindow(t *testing.T) {
	const a, b = int64(1736323200000), int64(1736326800000) // 2025-01-08T08:00Z, 09:00Z
	for _, c := range []struct {
		e        *query.Entity
		q        string
		from, to int64
		ok       bool
	}{
		{query.Events, `[">","timestamp","2025-01-08T08:00:00Z"]`, a, math.MaxInt64, true},
		{query.Events, `["and",[">=","timestamp","2025-01-08T08:00:00Z"],["<","timestamp","2025-01-08T09:00:00Z"],["=","status","failure"]]`, a, b, true},
		{query.Events, `["and",["=","status","failure"],["and",["<=","timestamp","2025-01-08T09:00:00Z"]]]`, math.MinInt64, b, true},
		{query.Events, `["=","timestamp","2025-01-08T08:00:00Z"]`, a, a, true},
		{query.Events, `["and",[">","timestamp","2025-01-08T09:00:00Z"],["<","timestamp","2025-01-08T08:00:00Z"]]`, b, a, true},
		{query.Events, `["or",[">","timestamp","2025-01-08T08:00:00Z"],["=","status","failure"]]`, 0, 0, false},
		{query.Events, `["not",[">","timestamp","2025-01-08T08:00:00Z"]]`, 0, 0, false},
		{query.Events, `[">","run_end_time","2025-01-08T08:00:00Z"]`, 0, 0, false},
		{query.Events, `["=","status","failure"]`, 0, 0, false},
		{query.Reports, `[">","producer_timestamp","2025-01-08T08:00:00Z"]`, 0, 0, false},
	} {
		from, to, ok := sqlgen.EventTimeWindow(plan(t, c.e, c.q))
		if ok != c.ok || (ok && (from != c.from || to != c.to)) {
			t.Errorf("%s: window [%d, %d] %v, want [%d, %d] %v", c.q, from, to, ok, c.from, c.to, c.ok)
		}
	}
}

// TestBoundReportIDs: with BoundReportIDs, a statement over events bounds
// the events' report ids (and the joined reports' ids) by two arguments
// that Built.ReportIDArgs points at, in the rows and the count
// statements; a plan answered from a rollup gets none.
func TestBoundReportIDs(t *testing.T) {
	d := postgres.Dialect{}
	p := plan(t, query.Events, `["and",[">","timestamp","2025-01-08T08:00:00Z"],["=","message","m"]]`)
	for name, render := range map[string]func(dialect.Dialect, *query.Plan, ...sqlgen.Option) (*sqlgen.Built, error){
		"select": sqlgen.Select, "count": sqlgen.Count} {
		b, err := render(d, p, sqlgen.BoundReportIDs())
		if err != nil {
			t.Fatal(err)
		}
		if len(b.ReportIDArgs) != 2 {
			t.Fatalf("%s: ReportIDArgs %v in %s", name, b.ReportIDArgs, b.SQL)
		}
		lo, hi := d.Placeholder(b.ReportIDArgs[0]+1), d.Placeholder(b.ReportIDArgs[1]+1)
		for _, col := range []string{"e.report_id", "r.id"} {
			if !strings.Contains(b.SQL, col+" >= "+lo+" AND "+col+" < "+hi) {
				t.Errorf("%s: no range on %s in %s", name, col, b.SQL)
			}
		}
		plain, err := render(d, p)
		if err != nil {
			t.Fatal(err)
		}
		if len(plain.ReportIDArgs) != 0 || strings.Contains(plain.SQL, "report_id >=") {
			t.Errorf("%s without the option: %s", name, plain.SQL)
		}
	}
	rolled := plan(t, query.Events, `["extract",[["function","count"],"status"],[">","timestamp","2025-01-08T08:00:00Z"],["group_by","status"]]`)
	b, err := sqlgen.Select(d, rolled, sqlgen.BoundReportIDs(), sqlgen.Using(sqlgen.ViaRollup))
	if err != nil {
		t.Fatal(err)
	}
	if len(b.ReportIDArgs) != 0 {
		t.Errorf("a rollup's statement bounds report ids: %s", b.SQL)
	}
}
