package query_test

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"reportdb"
	"reportdb/internal/testcorpus"
	"reportdb/query"
	"reportdb/query/pql"
)

// orOf is an "or" of n equalities on certname.
func orOf(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`["=","certname","h%d"]`, i)
	}
	return `["or",` + strings.Join(parts, ",") + `]`
}

// nested wraps leaf in n "not"s.
func nested(n int, leaf string) string {
	return strings.Repeat(`["not",`, n) + leaf + strings.Repeat(`]`, n)
}

func jsonList(n int, item func(i int) any) string {
	xs := make([]any, n)
	for i := range xs {
		xs[i] = item(i)
	}
	b, _ := json.Marshal(xs)
	return string(b)
}

// TestQueryLimits: a query past a size limit is a 400 naming the limit,
// before anything is planned; a query at the limit is planned.
func TestQueryLimits(t *testing.T) {
	eq := `["=","certname","a"]`
	for _, c := range []struct {
		name, entity, query string
		orderBy             int    // entries of the order_by parameter
		want                string // "" for no error
	}{
		{"or at the limit", "events", orOf(query.MaxQueryClauses - 1), 0, ""},
		{"or past the limit", "events", orOf(query.MaxQueryClauses), 0, "it has 501 clauses, more than the limit of 500"},
		{"and of ors", "reports", `["and",` + orOf(300) + `,` + orOf(300) + `]`, 0, "it has 603 clauses"},
		{"order_by parameter", "events", eq, query.MaxQueryClauses, "more than the limit of 500"},
		{"group_by", "events", `["extract",[["function","count"],"certname"],["group_by",` + jsonList(600, func(int) any { return "certname" })[1:] + `]`, 0, "more than the limit of 500"},
		{"extract", "events", `["extract",` + jsonList(600, func(int) any { return "certname" }) + `]`, 0, "more than the limit of 500"},
		{"depth at the limit", "events", nested(query.MaxQueryDepth-1, eq), 0, ""},
		{"depth past the limit", "events", nested(query.MaxQueryDepth, eq), 0, "nest more than 16 levels"},
		{"subqueries", "events", strings.Repeat(`["subquery","reports",`, 40) + `["=","status","failed"]` + strings.Repeat(`]`, 40), 0, "nest more than 16 levels"},
		{"in values at the limit", "events", `["in","certname",["array",` + jsonList(query.MaxInValues, func(i int) any { return fmt.Sprint("h", i) }) + `]]`, 0, ""},
		{"in values past the limit", "events", `["or",["in","certname",["array",` + jsonList(6000, func(i int) any { return fmt.Sprint("h", i) }) + `]],` +
			`["in","line",["array",` + jsonList(6000, func(i int) any { return i }) + `]]]`, 0, `its "in" arrays list 12000 values, more than the limit of 10000`},
		{"regex at the limit", "events", `["~","resource_title","` + strings.Repeat("T", query.MaxRegexBytes) + `"]`, 0, ""},
		{"regex past the limit", "events", `["~","resource_title","` + strings.Repeat("T", 100000) + `"]`, 0,
			"the regular expression for ~ on field resource_title is 100000 bytes long, more than the limit of 16384 bytes"},
		{"regex too complex", "events", `["~","message","` + strings.Repeat("(a{250}){4}", 100) + `"]`, 0, "ERROR: invalid regular expression: regular expression is too complex"},
		// PostgreSQL's text holds no NUL: it refuses one, SQLite read the
		// pattern up to it
		{"regex with NUL", "events", `["~","resource_title","a\u0000zzzzz"]`, 0, `ERROR: invalid byte sequence for encoding "UTF8": 0x00`},
		{"path regex with NUL", "events", `["~","containment_path","a\u0000"]`, 0, `ERROR: invalid byte sequence for encoding "UTF8": 0x00`},
		{"equality with NUL", "reports", `["=","certname","a\u0000"]`, 0, `ERROR: invalid byte sequence for encoding "UTF8": 0x00`},
		{"in with NUL", "reports", `["in","certname",["array",["a","b\u0000"]]]`, 0, `ERROR: invalid byte sequence for encoding "UTF8": 0x00`},
		{"path element with NUL", "events", `["=","containment_path","a\u0000"]`, 0, `ERROR: invalid byte sequence for encoding "UTF8": 0x00`},
	} {
		o := &query.Options{Query: testcorpus.JSON(t, c.query), QuerySet: true}
		for range c.orderBy {
			o.OrderBy = append(o.OrderBy, query.OrderSpec{Field: "certname"})
		}
		o.OrderBySet = c.orderBy > 0
		_, err := query.CompileEntity(query.Lookup(c.entity), o)
		checkLimitErr(t, c.name, err, c.want)
	}
}

func checkLimitErr(t *testing.T, name string, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		return
	}
	if err == nil || reportdb.ErrorCode(err) != reportdb.EINVALID || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: error %v, want a 400 containing %q", name, err, want)
	}
}

// TestQueryLimitsEveryEntryPoint: PQL, the root endpoint, event counts
// (query and counts_filter) and aggregate event counts are checked too.
func TestQueryLimitsEveryEntryPoint(t *testing.T) {
	terms := make([]string, query.MaxQueryClauses+1)
	for i := range terms {
		terms[i] = fmt.Sprintf(`certname = "h%d"`, i)
	}
	ast, err := pql.Parse("events { " + strings.Join(terms, " or ") + " }")
	if err != nil {
		t.Fatal(err)
	}
	_, err = query.CompileRoot(ast, &query.Options{})
	checkLimitErr(t, "PQL", err, "more than the limit of 500")

	_, err = query.CompileRoot(testcorpus.JSON(t, `["from","reports",`+orOf(600)+`]`), &query.Options{})
	checkLimitErr(t, "root", err, "more than the limit of 500")

	big := testcorpus.JSON(t, nested(20, `["=","certname","a"]`))
	_, err = query.CompileEventCounts(&query.Options{Query: big, SummarizeBy: "certname"}, false)
	checkLimitErr(t, "event counts", err, "nested too deeply")
	_, err = query.CompileAggregate(&query.Options{Query: big, SummarizeBy: "certname"}, false)
	checkLimitErr(t, "aggregate event counts", err, "nested too deeply")
	_, err = query.CompileEventCounts(&query.Options{SummarizeBy: "certname", CountsFilter: testcorpus.JSON(t, nested(20, `[">","failures",0]`))}, false)
	checkLimitErr(t, "counts_filter", err, "nested too deeply")
	_, err = query.Compile(query.Nodes, testcorpus.JSON(t, orOf(600)), &query.Options{})
	checkLimitErr(t, "Compile", err, "more than the limit of 500")
}

// TestIntegerRange: a number outside the range of the integer column
// behind a field (PostgreSQL's line is integer, report_format smallint)
// becomes the range's bound with an operator that gives every row the
// same answer, so the database is never handed a value its column type
// cannot hold.
func TestIntegerRange(t *testing.T) {
	max32, min32 := int64(math.MaxInt32), int64(math.MinInt32)
	for _, c := range []struct {
		entity, query string
		op            string
		value         any
	}{
		{"events", `[">","line",2147483648]`, ">", max32},
		{"events", `[">=","line",99999999999]`, ">", max32},
		{"events", `["=","line",99999999999999999999999]`, ">", max32},
		{"events", `["<","line",2147483648]`, "<=", max32},
		{"events", `["<=","line",1e30]`, "<=", max32},
		{"events", `["<","line",-2147483649]`, "<", min32},
		{"events", `["=","line",-1e30]`, "<", min32},
		{"events", `[">","line",-2147483649]`, ">=", min32},
		{"events", `[">","line",2147483647]`, ">", max32},
		{"events", `["<","line",-2147483648]`, "<", min32},
		{"events", `[">","line",1.5]`, ">", 1.5},
		{"reports", `["=","report_format",40000]`, ">", int64(math.MaxInt16)},
		{"reports", `["<","report_format",-40000]`, "<", int64(math.MinInt16)},
		{"reports", `["<","report_format",12]`, "<", int64(12)},
		// no value of the list fits: false, and unknown for a NULL line
		{"events", `["in","line",["array",[99999999999]]]`, ">", max32},
	} {
		p, err := query.Compile(query.Lookup(c.entity), testcorpus.JSON(t, c.query), &query.Options{})
		if err != nil {
			t.Errorf("%s: %v", c.query, err)
			continue
		}
		var cmp query.Cmp
		switch f := p.Filter.(type) {
		case query.Cmp:
			cmp = f
		case query.And: // reports: and type = 'agent'
			cmp, _ = f.Args[0].(query.Cmp)
		}
		if cmp.Op != c.op || cmp.Value != c.value {
			t.Errorf("%s: filter %+v, want %s %v", c.query, p.Filter, c.op, c.value)
		}
	}
	p, err := query.Compile(query.Events, testcorpus.JSON(t, `["in","line",["array",[3,99999999999,-1e40,7]]]`), &query.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if in, ok := p.Filter.(query.InValues); !ok || fmt.Sprint(in.Values) != "[3 7]" {
		t.Errorf("in with values out of range: %+v", p.Filter)
	}
	cp, err := query.CompileEventCounts(&query.Options{SummarizeBy: "certname", CountsFilter: testcorpus.JSON(t, `[">","failures",1e30]`)}, false)
	if err != nil {
		t.Fatal(err)
	}
	if f := cp.Filter; f.Op != ">" || f.Value != int64(math.MaxInt64) {
		t.Errorf("counts_filter past bigint: %+v", f)
	}
}

// TestPagingClauseTooLarge: an integer limit or offset too large for any
// row count says so.
func TestPagingClauseTooLarge(t *testing.T) {
	for _, c := range []struct{ query, want string }{
		{`["from","events",["limit",99999999999999999999]]`, "Illegal value '99999999999999999999' for :limit; it is too large (the largest limit is 9223372036854775807)."},
		{`["from","events",["offset",99999999999999999999]]`, "Illegal value '99999999999999999999' for :offset; it is too large (the largest offset is 9223372036854775807)."},
		{`["from","events",["limit",-99999999999999999999]]`, "Illegal value '-99999999999999999999' for :limit; expected a positive non-zero integer."},
		{`["from","events",["limit",1.5]]`, "Illegal value '1.5' for :limit; expected a positive non-zero integer."},
	} {
		_, err := query.CompileRoot(testcorpus.JSON(t, c.query), &query.Options{})
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %q", c.query, err, c.want)
		}
	}
}
