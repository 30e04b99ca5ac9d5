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

func orderedPlan(t *testing.T, q string, order []query.OrderSpec, limit, offset int64) *query.Plan {
	t.Helper()
	o := &query.Options{OrderBy: order, OrderBySet: len(order) > 0, Limit: limit, LimitSet: limit > 0,
		Offset: offset, OffsetSet: offset > 0}
	var ast any
	if q != "" {
		ast = testcorpus.JSON(t, q)
	}
	p, err := query.Compile(query.Reports, ast, o)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return p
}

// TestNarrowed: a statement over reports ordered first by start_time or
// end_time, with a limit, is narrowed as Narrowed asks: its head bounds
// the ordering column and the report ids (one side, with the
// placeholder that also bounds the report's metrics, logs and events
// where the dialect reads them from other tables), its rest only the
// column; a plan on the latest reports, ordered otherwise or in the
// other direction, without a limit, or a count is not narrowed.
func TestNarrowed(t *testing.T) {
	desc := []query.OrderSpec{{Field: "start_time", Desc: true}, {Field: "certname"}}
	head := sqlgen.Narrow{Column: "start_time", Desc: true, Bound: 1736323200000, Lo: 7 << 32, Hi: 9 << 32}
	arg := func(b *sqlgen.Built, v any) string {
		for i, a := range b.Args {
			if a == v {
				return postgres.Dialect{}.Placeholder(i + 1)
			}
		}
		t.Fatalf("no argument %v in %v", v, b.Args)
		return ""
	}
	p := orderedPlan(t, `["=","certname","a.example.com"]`, desc, 10, 0)
	if c, d, ok := sqlgen.NarrowOrder(p); c != "start_time" || !d || !ok {
		t.Errorf("NarrowOrder: %q %v %v", c, d, ok)
	}
	b, err := sqlgen.Select(postgres.Dialect{}, p, sqlgen.Narrowed(head))
	if err != nil {
		t.Fatal(err)
	}
	lo := arg(b, int64(7<<32))
	for _, want := range []string{"r.start_time >= " + arg(b, head.Bound) + " AND r.id >= " + lo,
		"FROM report_data d WHERE d.id = r.id AND d.id >= " + lo, "e.report_id = r.id AND e.report_id >= " + lo} {
		if !b.Narrowed || !strings.Contains(b.SQL, want) {
			t.Errorf("head: narrowed %v, want %q in %s", b.Narrowed, want, b.SQL)
		}
	}
	// a deep page: the late row lookup's outer reports are bounded too
	b, err = sqlgen.Select(postgres.Dialect{}, orderedPlan(t, "", desc, 100, 5000), sqlgen.Narrowed(head))
	if err != nil {
		t.Fatal(err)
	}
	if lo := arg(b, int64(7<<32)); !b.Narrowed || !strings.Contains(b.SQL, ") pg ON pg.id = r.id WHERE r.id >= "+lo) {
		t.Errorf("deep page head: %s", b.SQL)
	}
	rest := head
	rest.Rest = true
	b, err = sqlgen.Select(postgres.Dialect{}, p, sqlgen.Narrowed(rest))
	if err != nil {
		t.Fatal(err)
	}
	if !b.Narrowed || !strings.Contains(b.SQL, "r.start_time < "+arg(b, head.Bound)) || strings.Contains(b.SQL, "d.id >=") ||
		strings.Contains(b.SQL, "r.id >=") {
		t.Errorf("rest: %s", b.SQL)
	}
	// ascending: at most the bound, below Hi
	asc := sqlgen.Narrow{Column: "end_time", Bound: 1736323200000, Lo: 7 << 32, Hi: 9 << 32}
	b, err = sqlgen.Select(sqlite.Dialect{}, orderedPlan(t, "", []query.OrderSpec{{Field: "end_time"}}, 5, 0), sqlgen.Narrowed(asc))
	if err != nil {
		t.Fatal(err)
	}
	if !b.Narrowed || !strings.Contains(b.SQL, "r.end_time <= ?") || !strings.Contains(b.SQL, "AND r.id < ?") {
		t.Errorf("ascending head: %s", b.SQL)
	}
	for name, p := range map[string]*query.Plan{
		"latest":    orderedPlan(t, `["=","latest_report?",true]`, desc, 10, 0),
		"certname":  orderedPlan(t, "", []query.OrderSpec{{Field: "certname"}, {Field: "start_time", Desc: true}}, 10, 0),
		"no limit":  orderedPlan(t, "", desc, 0, 0),
		"ascending": orderedPlan(t, "", []query.OrderSpec{{Field: "start_time"}}, 10, 0),
		"producer":  orderedPlan(t, "", []query.OrderSpec{{Field: "producer_timestamp", Desc: true}}, 10, 0),
	} {
		b, err := sqlgen.Select(postgres.Dialect{}, p, sqlgen.Narrowed(head))
		if err != nil {
			t.Fatal(err)
		}
		if b.Narrowed || strings.Contains(b.SQL, "r.id >=") || strings.Contains(b.SQL, "d.id >=") {
			t.Errorf("%s: narrowed: %s", name, b.SQL)
		}
	}
	c, err := sqlgen.Count(postgres.Dialect{}, p, sqlgen.Narrowed(head))
	if err != nil {
		t.Fatal(err)
	}
	if c.Narrowed || strings.Contains(c.SQL, "r.id >=") {
		t.Errorf("count: narrowed: %s", c.SQL)
	}
}

// TestNarrowedByHash: a plan on one report's hash is narrowed by the day
// of its report (Narrow.Unique): report ids at or above Lo, on the events
// and on the reports they join; a plan whose hash is under OR, or that
// groups or counts, is not.
func TestNarrowedByHash(t *testing.T) {
	w := sqlgen.Narrow{Unique: true, Lo: 7 << 32}
	ev := plan(t, query.Events, `["and",["=","report","abc"],["=","status","failure"]]`)
	if !sqlgen.NarrowHash(ev) {
		t.Fatal("events of a report: not narrowable")
	}
	b, err := sqlgen.Select(postgres.Dialect{}, ev, sqlgen.Narrowed(w))
	if err != nil {
		t.Fatal(err)
	}
	if !b.Narrowed || !strings.Contains(b.SQL, "e.report_id >= $") || !strings.Contains(b.SQL, "r.id >= $") {
		t.Errorf("events of a report: %s", b.SQL)
	}
	rp := plan(t, query.Reports, `["=","hash","abc"]`)
	b, err = sqlgen.Select(postgres.Dialect{}, rp, sqlgen.Narrowed(w))
	if err != nil {
		t.Fatal(err)
	}
	if !b.Narrowed || !strings.Contains(b.SQL, "r.id >= $") || !strings.Contains(b.SQL, "d.id >= $") {
		t.Errorf("a report: %s", b.SQL)
	}
	for _, c := range []struct {
		e *query.Entity
		q string
	}{
		{query.Reports, `["or",["=","hash","abc"],["=","configuration_version","abc"]]`},
		{query.Events, `["extract",[["function","count"]],["=","report","abc"]]`},
		{query.Events, `["=","status","failure"]`},
		{query.Reports, `["and",["=","hash","abc"],["=","latest_report?",true]]`},
	} {
		p := plan(t, c.e, c.q)
		b, err := sqlgen.Select(postgres.Dialect{}, p, sqlgen.Narrowed(w))
		if err != nil {
			t.Fatal(err)
		}
		if b.Narrowed || strings.Contains(b.SQL, "r.id >= $") {
			t.Errorf("%s: narrowed: %s", c.q, b.SQL)
		}
	}
}

// TestNarrowedEvents: a statement over events ordered first by timestamp,
// with a limit and no window of timestamps, is narrowed on the events'
// timestamp and report ids (and the reports' ids when it joins them);
// with a window of timestamps (read from its days already), ordered
// otherwise, or without a limit, it is not.
func TestNarrowedEvents(t *testing.T) {
	eventsPlan := func(q string, order []query.OrderSpec, limit int64) *query.Plan {
		t.Helper()
		o := &query.Options{OrderBy: order, OrderBySet: len(order) > 0, Limit: limit, LimitSet: limit > 0}
		p, err := query.Compile(query.Events, testcorpus.JSON(t, q), o)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return p
	}
	desc := []query.OrderSpec{{Field: "timestamp", Desc: true}}
	w := sqlgen.Narrow{Column: "timestamp", Desc: true, Bound: 1736323200000, Lo: 7 << 32}
	p := eventsPlan(`["~","resource_title","^/etc/nginx/"]`, desc, 1000)
	if c, d, ok := sqlgen.NarrowOrder(p); !ok || c != "timestamp" || !d {
		t.Fatalf("NarrowOrder: %q %v %v", c, d, ok)
	}
	b, err := sqlgen.Select(postgres.Dialect{}, p, sqlgen.Narrowed(w))
	if err != nil {
		t.Fatal(err)
	}
	if !b.Narrowed || !strings.Contains(b.SQL, "e.timestamp >= $") || !strings.Contains(b.SQL, "e.report_id >= $") ||
		!strings.Contains(b.SQL, "r.id >= $") {
		t.Errorf("head: %s", b.SQL)
	}
	// a regular expression is planned with its values (ValueSensitive):
	// the head's days are bounded on both sides, so that the plan opens
	// their partitions alone; a statement planned generically keeps one
	// side (see narrowID)
	hi := sqlgen.Narrow{Column: "timestamp", Desc: true, Bound: 1736323200000, Lo: 7 << 32, Hi: 9 << 32}
	if b, err = sqlgen.Select(postgres.Dialect{}, p, sqlgen.Narrowed(hi)); err != nil {
		t.Fatal(err)
	}
	lo, up := "", ""
	for i, a := range b.Args {
		switch a {
		case int64(7 << 32):
			lo = postgres.Dialect{}.Placeholder(i + 1)
		case int64(9 << 32):
			up = postgres.Dialect{}.Placeholder(i + 1)
		}
	}
	if !b.ValueSensitive || lo == "" || up == "" ||
		!strings.Contains(b.SQL, "e.report_id >= "+lo+" AND r.id >= "+lo+" AND e.report_id < "+up+" AND r.id < "+up) {
		t.Errorf("sensitive head: sensitive %v, args %v: %s", b.ValueSensitive, b.Args, b.SQL)
	}
	asc := hi
	asc.Desc = false
	pa := eventsPlan(`["~","resource_title","^/etc/nginx/"]`, []query.OrderSpec{{Field: "timestamp"}}, 1000)
	if b, err = sqlgen.Select(postgres.Dialect{}, pa, sqlgen.Narrowed(asc)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.SQL, "e.timestamp <= $") || !strings.Contains(b.SQL, "e.report_id < $") ||
		!strings.Contains(b.SQL, "e.report_id >= $") {
		t.Errorf("sensitive ascending head: %s", b.SQL)
	}
	pc := eventsPlan(`["=","certname","a.example.com"]`, desc, 10)
	if b, err = sqlgen.Select(postgres.Dialect{}, pc, sqlgen.Narrowed(hi)); err != nil {
		t.Fatal(err)
	}
	if b.ValueSensitive || !strings.Contains(b.SQL, "e.report_id >= $") || strings.Contains(b.SQL, "report_id < $") {
		t.Errorf("generic head: sensitive %v: %s", b.ValueSensitive, b.SQL)
	}
	w.Rest = true
	b, err = sqlgen.Select(postgres.Dialect{}, p, sqlgen.Narrowed(w))
	if err != nil {
		t.Fatal(err)
	}
	if !b.Narrowed || !strings.Contains(b.SQL, "e.timestamp < $") || strings.Contains(b.SQL, "report_id >= $") {
		t.Errorf("rest: %s", b.SQL)
	}
	for _, c := range []struct {
		q     string
		order []query.OrderSpec
		limit int64
	}{
		{`[">","timestamp","2026-01-01T00:00:00Z"]`, desc, 10},
		{`["=","status","failure"]`, []query.OrderSpec{{Field: "certname"}}, 10},
		{`["=","status","failure"]`, desc, 0},
	} {
		if _, _, ok := sqlgen.NarrowOrder(eventsPlan(c.q, c.order, c.limit)); ok {
			t.Errorf("%s %v limit %d: narrowed", c.q, c.order, c.limit)
		}
	}
}

// TestBoundsStayOutOfSubqueries: the conditions that bound a narrowed,
// keyed or windowed statement to some days are its own: a subquery ("in"
// over a query) asks its question over every day.
func TestBoundsStayOutOfSubqueries(t *testing.T) {
	sub := `["in","certname",["extract","certname",["select_reports",["=","status","failed"]]]]`
	inner := func(t *testing.T, sql string) string {
		t.Helper()
		i := strings.Index(sql, "IN (SELECT")
		if i < 0 {
			t.Fatalf("no subquery: %s", sql)
		}
		depth := 0
		for j := i + 3; j < len(sql); j++ {
			switch sql[j] {
			case '(':
				depth++
			case ')':
				if depth--; depth == 0 {
					return sql[i : j+1]
				}
			}
		}
		t.Fatalf("unbalanced: %s", sql)
		return ""
	}
	ordered := func(e *query.Entity, q, field string) *query.Plan {
		t.Helper()
		o := &query.Options{OrderBy: []query.OrderSpec{{Field: field, Desc: true}}, OrderBySet: true, Limit: 10, LimitSet: true}
		p, err := query.Compile(e, testcorpus.JSON(t, q), o)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		name string
		p    *query.Plan
		opt  sqlgen.Option
	}{
		{"reports narrowed", ordered(query.Reports, sub, "end_time"),
			sqlgen.Narrowed(sqlgen.Narrow{Column: "end_time", Desc: true, Bound: 1, Lo: 7 << 32})},
		{"events narrowed", ordered(query.Events, sub, "timestamp"),
			sqlgen.Narrowed(sqlgen.Narrow{Column: "timestamp", Desc: true, Bound: 1, Lo: 7 << 32})},
		{"reports keyed", plan(t, query.Reports, `["and",["=","hash","abc"],`+sub+`]`), sqlgen.Keyed()},
		{"events windowed", plan(t, query.Events, `["and",[">","timestamp","2026-01-01T00:00:00Z"],`+
			`["in","certname",["extract","certname",["select_events",["=","status","failure"]]]]]`), sqlgen.BoundReportIDs()},
	} {
		b, err := sqlgen.Select(postgres.Dialect{}, c.p, c.opt)
		if err != nil {
			t.Fatal(err)
		}
		if !b.Narrowed && !b.Keyed && len(b.ReportIDArgs) == 0 {
			t.Errorf("%s: not bound at all: %s", c.name, b.SQL)
		}
		if in := inner(t, b.SQL); strings.Contains(in, ">= $") || strings.Contains(in, "ANY(") {
			t.Errorf("%s: the subquery is bounded: %s", c.name, in)
		}
	}
}
