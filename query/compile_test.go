package query_test

import (
	"strings"
	"testing"

	"reportdb/internal/testcorpus"
	"reportdb/query"
)

// TestCompileErrors: PuppetDB's messages, and which of several problems is
// reported first (the order in which PuppetDB validates).
func TestCompileErrors(t *testing.T) {
	for _, c := range []struct {
		entity, query, orderBy, want string
	}{
		{"events", `["=","nosuch",1]`, "", "'nosuch' is not a queryable object for events. Known queryable objects are"},
		{"events", `["=","certname"]`, "", "= requires exactly two arguments"},
		{"events", `["not",["=","a",1],["=","b",2]]`, "", "'not' takes exactly one argument, but 2 were supplied"},
		{"events", `["and"]`, "", "'and' takes at least one argument, but none were supplied"},
		{"events", `"certname"`, "", `"certname" is not a valid query: a query is a JSON array`},
		{"events", `[1,"a"]`, "", "is not a valid query: the operator must be a string"},
		{"events", `["limit",1]`, "", "Unsupported subquery `limit`"},
		{"events", `["frobnicate","a"]`, "", "'frobnicate' is not a valid query operator in"},
		{"events", `["~","line","^1"]`, "", "Operator ~ is not supported on numeric field line"},
		{"events", `["=","line","x"]`, "", `Argument "x" is incompatible with numeric field "line".`},
		{"events", `[">","timestamp","yesterday-ish"]`, "", "'yesterday-ish' is not a valid timestamp value"},
		// order_by is checked before the query
		{"events", `["=","nosuch",1]`, "nosuch", "Unrecognized column 'nosuch' specified in :order_by"},
		// the fields of 'in' are resolved before its target's form is checked
		{"events", `["in","nosuch",["bogus"]]`, "", "'nosuch' is not a queryable object for events"},
		{"events", `["in","certname",["bogus",1]]`, "", "Unsupported subquery `bogus`"},
		{"events", `["in","certname",["array",["a"],["b"]]]`, "", "Operator array requires a vector argument"},
		{"events", `["in","certname",["extract","certname",["select-reports"]]]`, "", "Unsupported subquery `select-reports` - did you mean `select_reports`?"},
		{"events", `["in","certname",["from","reports",["=","certname","a"]]]`, "", `A ["from", ...] subquery used with 'in' must extract fields`},
		{"reports", `["subquery","nosuch",["=","a",1]]`, "", "No implicit relationship for entity 'nosuch': there is no such entity"},
		{"reports", `["extract",["certname"],["=","a",1],["=","b",2]]`, "", `is not a valid expression for "extract"`},
		{"reports", `["extract",["certname",["function","count"]]]`, "", `column "certname" must appear in the GROUP BY clause`},
		{"reports", `["extract",[["function","median","x"]]]`, "", "Unknown function \"median\" in extract"},
	} {
		o := &query.Options{}
		if c.orderBy != "" {
			o.OrderBy, o.OrderBySet = []query.OrderSpec{{Field: c.orderBy}}, true
		}
		_, err := query.Compile(query.Lookup(c.entity), testcorpus.JSON(t, c.query), o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: error %v, want one containing %q", c.entity, c.query, err, c.want)
		}
	}
}

// TestCompilePlans: what the planner makes of valid queries.
func TestCompilePlans(t *testing.T) {
	type check func(*query.Plan) bool
	for _, c := range []struct {
		entity, query string
		ok            check
	}{
		// reports get the implicit type = 'agent' filter unless the query tests type
		{"reports", ``, func(p *query.Plan) bool {
			cmp, ok := p.Filter.(query.Cmp)
			return ok && cmp.Field.Name == "type" && cmp.Value == "agent" && cmp.Literal
		}},
		{"reports", `["=","type","any"]`, func(p *query.Plan) bool { return p.Filter == nil }},
		{"reports", `["or",["=","type","plan"],["=","certname","a"]]`, func(p *query.Plan) bool {
			_, ok := p.Filter.(query.Or)
			return ok
		}},
		// a filter that is always true is none
		{"nodes", `["=","node_state","any"]`, func(p *query.Plan) bool { return p.Filter == nil }},
		{"events", `[]`, func(p *query.Plan) bool { return p.Filter == nil }},
		{"events", `["=","latest_report?",true]`, func(p *query.Plan) bool {
			l, ok := p.Filter.(query.LatestReport)
			return ok && l.Latest
		}},
		{"events", `["in","certname",["array",[]]]`, func(p *query.Plan) bool {
			c, ok := p.Filter.(query.Const)
			return ok && !c.Value
		}},
		{"events", `["subquery","reports",["=","status","failed"]]`, func(p *query.Plan) bool {
			in, ok := p.Filter.(query.InQuery)
			return ok && in.Fields[0].Name == "report" && in.Sub.Entity == query.Reports && in.Sub.Columns[0].Name == "hash"
		}},
		{"reports", `["extract",[["function","count"],"status"],["=","certname","a"],["group_by","status"]]`, func(p *query.Plan) bool {
			return len(p.Columns) == 2 && p.Columns[0].Func == "count" && p.Columns[1].Name == "status" && len(p.GroupBy) == 1
		}},
	} {
		p, err := query.Compile(query.Lookup(c.entity), testcorpus.JSON(t, c.query), &query.Options{})
		if err != nil {
			t.Errorf("%s %s: %v", c.entity, c.query, err)
			continue
		}
		if !c.ok(p) {
			t.Errorf("%s %s: unexpected plan %+v", c.entity, c.query, p)
		}
	}
}

// TestCompileEntityDistinct: distinct_resources checks the legacy engine's
// subset, normalises hyphenated names and marks "only latest" queries.
func TestCompileEntityDistinct(t *testing.T) {
	w := &query.DistinctWindow{Start: 0, End: 1}
	p, err := query.CompileEntity(query.Events, &query.Options{Query: testcorpus.JSON(t, `["=","resource-type","File"]`), Distinct: w})
	if err != nil {
		t.Fatal(err)
	}
	if cmp, ok := p.Filter.(query.Cmp); !ok || cmp.Field.Name != "resource_type" || p.Distinct != w || p.DistinctLatest != nil {
		t.Errorf("hyphenated field: %+v", p)
	}
	p, err = query.CompileEntity(query.Events, &query.Options{Query: testcorpus.JSON(t, `["=","latest_report?",false]`), Distinct: w})
	if err != nil || p.DistinctLatest == nil || *p.DistinctLatest {
		t.Errorf("only-latest: %+v %v", p, err)
	}
	_, err = query.CompileEntity(query.Events, &query.Options{Query: testcorpus.JSON(t, `["null?","file",true]`), Distinct: w})
	if err == nil || !strings.Contains(err.Error(), "is not well-formed: query operator 'null?' is unknown") {
		t.Errorf("legacy engine: %v", err)
	}
	_, err = query.CompileEntity(query.Events, &query.Options{Query: testcorpus.JSON(t, `["in","certname",["array",["a"]]]`), Distinct: w})
	if err == nil || !strings.Contains(err.Error(), "The subquery argument of 'in' must be an 'extract', not 'array'") {
		t.Errorf("legacy in: %v", err)
	}
}
