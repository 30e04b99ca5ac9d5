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

// TestSplitReports: a page of events whose filter and order read the
// events alone, with at least one of its reports' columns in the
// projection, is split on PostgreSQL (the events with their report id,
// then the reports by id), and the split maps every output column; any
// other plan, and every plan on SQLite, is not.
func TestSplitReports(t *testing.T) {
	byTime := []query.OrderSpec{{Field: "timestamp", Desc: true}}
	plan := func(q string, order []query.OrderSpec, limit int64) *query.Plan {
		t.Helper()
		o := &query.Options{OrderBy: order, OrderBySet: len(order) > 0, Limit: limit, LimitSet: limit > 0}
		var ast any
		if q != "" {
			ast = testcorpus.JSON(t, q)
		}
		p, err := query.Compile(query.Events, ast, o)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return p
	}
	pg := postgres.Dialect{}
	for _, c := range []struct {
		q     string
		order []query.OrderSpec
		limit int64
		split bool
	}{
		{`["~","resource_title","^/etc/nginx/"]`, byTime, 1000, true},
		{`["and",["=","status","failure"],[">","timestamp","2026-01-01T00:00:00Z"]]`, byTime, 100, true},
		{`["extract",["certname","timestamp"],["=","resource_type","File"]]`, byTime, 10, true},
		{``, []query.OrderSpec{{Field: "line"}}, sqlgen.MaxSplitLimit, true},
		// no limit, or too large a page
		{`["~","resource_title","^/etc/nginx/"]`, byTime, 0, false},
		{`["~","resource_title","^/etc/nginx/"]`, byTime, sqlgen.MaxSplitLimit + 1, false},
		// a filter or an order on the reports' columns
		{`["=","certname","a.example.com"]`, byTime, 10, false},
		{`["=","status","failure"]`, []query.OrderSpec{{Field: "certname"}}, 10, false},
		{`["=","report","abc"]`, byTime, 10, false},
		// the latest reports, a subquery
		{`["=","latest_report?",true]`, byTime, 10, false},
		{`["in","resource_title",["extract",["resource_title"],["select_events",["=","status","failure"]]]]`, byTime, 10, false},
		// no report column, functions, grouping
		{`["extract",["timestamp","status"],["=","status","failure"]]`, byTime, 10, false},
		{`["extract",[["function","count"],"certname"],["=","status","failure"],["group_by","certname"]]`, nil, 10, false},
	} {
		p := plan(c.q, c.order, c.limit)
		s, ok := sqlgen.SplitReports(pg, p)
		if ok != c.split {
			t.Errorf("%s limit %d: split %v, want %v", c.q, c.limit, ok, c.split)
		}
		if _, ok := sqlgen.SplitReports(sqlite.Dialect{}, p); ok {
			t.Errorf("%s: split on SQLite", c.q)
		}
		if !ok {
			continue
		}
		// every column is the event's or its report's, in order
		whole, err := sqlgen.Select(pg, p)
		if err != nil {
			t.Fatal(err)
		}
		events, err := sqlgen.Select(pg, s.Events)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(events.SQL, "JOIN reports") || strings.Contains(events.SQL, "r.") {
			t.Errorf("%s: the events' statement reads reports: %s", c.q, events.SQL)
		}
		if last := events.Columns[len(events.Columns)-1]; last.Name != "report_id" {
			t.Errorf("%s: last column %q", c.q, last.Name)
		}
		if len(s.Out) != len(whole.Columns) || len(s.Columns) != len(whole.Columns) {
			t.Fatalf("%s: %d outputs, %d columns for %d", c.q, len(s.Out), len(s.Columns), len(whole.Columns))
		}
		for i, o := range s.Out {
			name := whole.Columns[i].Name
			if s.Columns[i] != whole.Columns[i] {
				t.Errorf("%s: column %d %+v, want %+v", c.q, i, s.Columns[i], whole.Columns[i])
			}
			f := query.Events.Field(name)
			if p.Columns != nil {
				f = p.Columns[i].Field
			}
			if (o < 0) != (f.Table == query.ReportsTable) {
				t.Errorf("%s: %s maps to %d", c.q, name, o)
			}
			if o >= 0 && events.Columns[o].Name != name {
				t.Errorf("%s: %s read from the events' %s", c.q, name, events.Columns[o].Name)
			}
		}
		b := s.ReportsOf([]int64{5<<32 + 1, 7<<32 + 9})
		if !strings.Contains(b.SQL, "r.id = ANY($1::bigint[]) AND r.id >= $2 AND r.id < $3") ||
			b.Args[1] != int64(5<<32) || b.Args[2] != int64(8<<32) {
			t.Errorf("%s: reports by id: %s %v", c.q, b.SQL, b.Args)
		}
	}
}
