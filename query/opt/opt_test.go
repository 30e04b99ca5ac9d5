package opt_test

import (
	"testing"

	"reportdb/internal/testcorpus"
	"reportdb/postgres"
	"reportdb/query"
	"reportdb/query/opt"
	"reportdb/schema/dialect"
)

// without is PostgreSQL's dialect with some capabilities cleared.
type without struct {
	postgres.Dialect
	clear func(*dialect.Capabilities)
}

func (w without) Capabilities() dialect.Capabilities {
	c := w.Dialect.Capabilities()
	w.clear(&c)
	return c
}

// TestCapabilitiesDecide: each fast path is chosen only when the
// backend's Capabilities offer it, and the plain scan answers otherwise:
// clearing one field of the value moves exactly the queries that need it.
func TestCapabilitiesDecide(t *testing.T) {
	compile := func(e *query.Entity, q string, o *query.Options) *query.Plan {
		t.Helper()
		var ast any
		if q != "" {
			ast = testcorpus.JSON(t, q)
		}
		p, err := query.Compile(e, ast, o)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return p
	}
	newest := &query.Options{OrderBy: []query.OrderSpec{{Field: "end_time", Desc: true}}, OrderBySet: true,
		Limit: 10, LimitSet: true}
	cases := []struct {
		name  string
		plan  *query.Plan
		with  opt.Path
		clear func(*dialect.Capabilities)
	}{
		{"newest reports", compile(query.Reports, "", newest), opt.Narrowed,
			func(c *dialect.Capabilities) { c.ReportDays = nil }},
		{"report by hash or version", compile(query.Reports, `["and",["=","certname","n"],["or",["=","hash","h"],["=","configuration_version","h"]]]`, &query.Options{}), opt.Keyed,
			func(c *dialect.Capabilities) { c.ReportKeys = nil }},
		{"reports by status", compile(query.Reports, `["extract",[["function","count"],"status"],["group_by","status"]]`, &query.Options{}), opt.Rollup,
			func(c *dialect.Capabilities) { c.Rollups = false }},
		{"latest events by status", compile(query.Events, `["extract",[["function","count"],"status"],["=","latest_report?",true],["group_by","status"]]`, &query.Options{}), opt.StatusCounts,
			func(c *dialect.Capabilities) { c.Rollups = false }},
	}
	for _, c := range cases {
		a, err := opt.Choose(postgres.Dialect{}, c.plan, opt.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if a.Path != c.with {
			t.Errorf("%s: %s, want %s", c.name, a, c.with)
		}
		b, err := opt.Choose(without{clear: c.clear}, c.plan, opt.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if b.Path == c.with || b.Path == "" || len(b.Reasons) == 0 {
			t.Errorf("%s without the capability: %s %q", c.name, b, b.Reasons)
		}
		// a narrowed plan's statement is its head's, rendered by the
		// engine once the days are read; the others differ here
		if c.with != opt.Narrowed && b.Rows.SQL == a.Rows.SQL {
			t.Errorf("%s: the same statement with and without the capability:\n%s", c.name, a.Rows.SQL)
		}
		if (a.Narrow != nil) != (c.with == opt.Narrowed) || b.Narrow != nil {
			t.Errorf("%s: narrowing %v, then %v", c.name, a.Narrow, b.Narrow)
		}
	}
}
