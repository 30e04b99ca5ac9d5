package sqlgen_test

import (
	"fmt"
	"strings"
	"testing"

	"reportdb/internal/testcorpus"
	"reportdb/postgres"
	"reportdb/query"
	"reportdb/query/opt"
	"reportdb/query/sqlgen"
	"reportdb/schema/dialect"
	"reportdb/sqlite"
)

func plan(t *testing.T, e *query.Entity, q string) *query.Plan {
	t.Helper()
	p, err := query.Compile(e, testcorpus.JSON(t, q), &query.Options{})
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return p
}

// TestJoinsFromPlan: a statement joins the tables its plan's fields need,
// and only those (decided from the plan, in both dialects).
func TestJoinsFromPlan(t *testing.T) {
	for _, d := range []dialect.Dialect{sqlite.Dialect{}, postgres.Dialect{}} {
		for _, c := range []struct {
			e        *query.Entity
			q        string
			join     string
			wantJoin bool
		}{
			{query.Events, `["extract",["status","resource_title"],["=","status","failure"]]`, "JOIN reports r", false},
			{query.Events, `["extract",["status"],["=","certname","a"]]`, "JOIN reports r", true},
			{query.Events, `["extract",["certname"],["=","status","failure"]]`, "JOIN reports r", true},
			{query.Events, ``, "JOIN reports r", true}, // full rows have report fields
			{query.Events, `["extract",[["function","count"]],["=","latest_report?",true]]`, "JOIN reports r", false},
			{query.Nodes, `["extract",["certname"]]`, "reports lr ON", false},
			{query.Nodes, `["extract",["certname"],["=","latest_report_status","failed"]]`, "reports lr ON", true},
			{query.Nodes, ``, "reports lr ON", true},
		} {
			b, err := chosen(d, plan(t, c.e, c.q))
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(b.SQL, c.join); got != c.wantJoin {
				t.Errorf("%T %s %s: join %q = %v, want %v\n%s", d, c.e.Name, c.q, c.join, got, c.wantJoin, b.SQL)
			}
		}
	}
}

// TestLatestReportsCopy: on PostgreSQL, reports restricted to the nodes'
// latest reports by a top-level term read the copies in latest_reports
// (one row per node) instead of reports, and events so restricted are read
// report by report from the copies (a LATERAL nested loop); any other
// shape, and SQLite, test the certnames pointers.
func TestLatestReportsCopy(t *testing.T) {
	const reads, lateral = "FROM latest_reports r", "FROM latest_reports r CROSS JOIN LATERAL"
	for _, c := range []struct {
		e      *query.Entity
		q      string
		pg     string // what the PostgreSQL statement has ("": it reads no copy)
		others string // a term that must remain
	}{
		{query.Reports, `["=","latest_report?",true]`, reads, ""},
		{query.Reports, `["and",["=","latest_report?",true],["=","status","failed"]]`, reads, "r.status = "},
		{query.Reports, `["and",["=","certname","a"],["=","latest_report?",true]]`, reads, "r.certname = "},
		{query.Reports, `["extract",["certname",["function","count"]],["=","latest_report?",true],["group_by","certname"]]`, reads, ""},
		{query.Reports, `["=","latest_report?",false]`, "", ""},
		{query.Reports, `["or",["=","latest_report?",true],["=","status","failed"]]`, "", ""},
		{query.Reports, `["not",["=","latest_report?",true]]`, "", ""},
		{query.Reports, `["=","status","failed"]`, "", ""},
		// counted by status from latest_rollup, the copies read for the
		// events of other statuses only when there are any (statuscounts.go)
		{query.Events, `["extract",[["function","count"],"status"],["=","latest_report?",true],["group_by","status"]]`,
			reads + " WHERE (SELECT t.others FROM t) > 0", ""},
		{query.Events, `["extract",[["function","count"],"resource_type"],["=","latest_report?",true],["group_by","resource_type"]]`, lateral, ""},
		{query.Events, `["and",["=","latest_report?",true],["=","certname","a"]]`, lateral, ""},
		{query.Events, `["and",["=","latest_report?",true],["=","status","failure"]]`, lateral, ""},
		{query.Events, `["=","latest_report?",false]`, "", ""},
		{query.Events, `["or",["=","latest_report?",true],["=","status","failure"]]`, "", ""},
	} {
		for _, d := range []dialect.Dialect{sqlite.Dialect{}, postgres.Dialect{}} {
			b, err := chosen(d, plan(t, c.e, c.q))
			if err != nil {
				t.Fatal(err)
			}
			want := ""
			if _, pg := d.(postgres.Dialect); pg {
				want = c.pg
			}
			if got := strings.Contains(b.SQL, reads); got != (want != "") || want != "" && !strings.Contains(b.SQL, want) {
				t.Errorf("%T %s %s: reads latest_reports = %v, want %q\n%s", d, c.e.Name, c.q, got, want, b.SQL)
			}
			if want != "" && (strings.Contains(b.SQL, "FROM certnames") || strings.Contains(b.SQL, "JOIN reports r")) {
				t.Errorf("%T %s %s: still reads the pointers or reports beside the copies\n%s", d, c.e.Name, c.q, b.SQL)
			}
			if c.others != "" && !strings.Contains(b.SQL, c.others) {
				t.Errorf("%T %s %s: lost the other terms (%q)\n%s", d, c.e.Name, c.q, c.others, b.SQL)
			}
		}
	}
}

// TestValueSensitive: statements comparing a bound value with a range or
// a regular expression are marked, equality lookups are not.
func TestValueSensitive(t *testing.T) {
	for _, c := range []struct {
		q    string
		want bool
	}{
		{`["=","certname","a"]`, false},
		{`["in","status",["array",["failure","noop"]]]`, false},
		{`[">","timestamp","2025-01-01T00:00:00Z"]`, true},
		{`["~","resource_title","^/etc"]`, true},
		{`["~","containment_path","Class"]`, true},
		{`["and",["=","certname","a"],["<=","line",3]]`, true},
	} {
		b, err := chosen(postgres.Dialect{}, plan(t, query.Events, c.q))
		if err != nil {
			t.Fatal(err)
		}
		if b.ValueSensitive != c.want {
			t.Errorf("%s: ValueSensitive = %v, want %v\n%s", c.q, b.ValueSensitive, c.want, b.SQL)
		}
	}
	// a page's offset decides the plan; its limit alone does not
	for _, c := range []struct {
		limit, offset int64
		want          bool
	}{{100, 0, false}, {100, 10000, true}, {0, 5, true}} {
		p := plan(t, query.Reports, `["=","certname","a"]`)
		p.Limit, p.Offset = c.limit, c.offset
		b, err := chosen(postgres.Dialect{}, p)
		if err != nil {
			t.Fatal(err)
		}
		if b.ValueSensitive != c.want {
			t.Errorf("limit %d offset %d: ValueSensitive = %v, want %v\n%s", c.limit, c.offset, b.ValueSensitive, c.want, b.SQL)
		}
	}
}

// TestLatestCopiesPlannedWithValues: a statement that reads the copies
// of the latest reports alone (no blob, no subquery) is planned with its
// values (the copies are one small table); one that reads the day
// partitions beside them is not.
func TestLatestCopiesPlannedWithValues(t *testing.T) {
	for _, c := range []struct {
		e    *query.Entity
		q    string
		want bool
	}{
		{query.Reports, `["extract",["certname","hash","status"],["and",["=","latest_report?",true],["=","status","failed"]]]`, true},
		{query.Reports, `["extract",["certname",["function","count"]],["=","latest_report?",true],["group_by","certname"]]`, true},
		{query.Reports, `["and",["=","latest_report?",true],["=","status","failed"]]`, false}, // logs, metrics, events
		{query.Reports, `["extract",["certname","logs"],["and",["=","latest_report?",true],["=","status","failed"]]]`, false},
		{query.Reports, `["extract",["certname"],["and",["=","latest_report?",true],["in","certname",["extract","certname",["select_events",["=","status","failure"]]]]]]`, false},
		{query.Reports, `["extract",["certname"],["=","status","failed"]]`, false},                                     // the reports
		{query.Events, `["extract",["certname"],["and",["=","latest_report?",true],["=","status","failure"]]]`, false}, // their events
	} {
		b, err := chosen(postgres.Dialect{}, plan(t, c.e, c.q))
		if err != nil {
			t.Fatal(err)
		}
		if b.ValueSensitive != c.want {
			t.Errorf("%s %s: ValueSensitive = %v, want %v\n%s", c.e.Name, c.q, b.ValueSensitive, c.want, b.SQL)
		}
	}
}

// TestCountWrapsRows: the total of include_total counts the rows of the
// same filter without limit and offset.
func TestCountWrapsRows(t *testing.T) {
	p := plan(t, query.Reports, `["=","certname","a"]`)
	p.Limit, p.Offset = 10, 20
	b, err := sqlgen.Count(sqlite.Dialect{}, p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.SQL, "SELECT COUNT(*) FROM (SELECT ") || strings.Contains(b.SQL, "LIMIT") {
		t.Errorf("count statement: %s", b.SQL)
	}
	if len(b.Args) != 1 || b.Args[0] != "a" {
		t.Errorf("count args: %v", b.Args)
	}
}

// TestLatestRollupCovers: the events of the nodes' latest reports counted
// by status, their total, and the aggregate counts summarised by certname
// are read from latest_rollup on both databases when the rest of the
// filter tests only its dimensions (the report's environment); any other
// shape is not.
func TestLatestRollupCovers(t *testing.T) {
	const rollup = "FROM latest_rollup r"
	byStatus := func(filter string) string {
		return `["extract",[["function","count"],"status"],` + filter + `,["group_by","status"]]`
	}
	latest := `["=","latest_report?",true]`
	for _, c := range []struct {
		q    string
		want bool
	}{
		{byStatus(latest), true},
		{`["extract",[["function","count"]],` + latest + `]`, true},
		{byStatus(`["and",` + latest + `,["=","environment","qa"]]`), true},
		{byStatus(`["and",["not",["~","environment","^pr"]],` + latest + `]`), true},
		{byStatus(`["and",` + latest + `,["=","certname","a"]]`), false},
		{byStatus(`["and",` + latest + `,["=","report","x"]]`), false},
		{byStatus(`["=","latest_report?",false]`), false},
		{byStatus(`["or",` + latest + `,["=","environment","qa"]]`), false},
		{byStatus(`["=","environment","qa"]`), false},
	} {
		for _, d := range []dialect.Dialect{sqlite.Dialect{}, postgres.Dialect{}} {
			b, err := chosen(d, plan(t, query.Events, c.q))
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(b.SQL, rollup); got != c.want {
				t.Errorf("%T %s: reads latest_rollup = %v, want %v\n%s", d, c.q, got, c.want, b.SQL)
			}
		}
	}
	for _, c := range []struct {
		q, countsFilter string
		corrective      bool
		want            bool
	}{
		{latest, "", false, true},
		{`["and",` + latest + `,["=","environment","qa"]]`, "", false, true},
		{`["and",` + latest + `,["=","certname","a"]]`, "", false, false},
		{latest, `[">","failures",0]`, false, false},
		{latest, "", true, false},
		{`["=","environment","qa"]`, "", false, false},
	} {
		o := &query.Options{SummarizeBy: "certname", Query: testcorpus.JSON(t, c.q)}
		if c.countsFilter != "" {
			o.CountsFilter = testcorpus.JSON(t, c.countsFilter)
		}
		ap, err := query.CompileAggregate(o, c.corrective)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range []dialect.Dialect{sqlite.Dialect{}, postgres.Dialect{}} {
			b, err := chosenCounts(d, ap.Pieces[0], true)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(b.SQL, rollup); got != c.want {
				t.Errorf("%T aggregate %s counts_filter %s corrective %v: reads latest_rollup = %v, want %v\n%s",
					d, c.q, c.countsFilter, c.corrective, got, c.want, b.SQL)
			}
		}
	}
}

// TestLongListsBalanced: a long "or" (or "and") is rendered as a tree of
// parenthesised halves, so that its SQL nests logarithmically deep
// (SQLite parses a flat "a OR b OR c ..." into a chain as deep as the
// list is long, and refuses one deeper than 1000); a short one is flat.
func TestLongListsBalanced(t *testing.T) {
	depth := func(sql string) (max int) {
		d := 0
		for _, c := range sql {
			switch c {
			case '(':
				d++
				if d > max {
					max = d
				}
			case ')':
				d--
			}
		}
		return max
	}
	for _, c := range []struct {
		n, maxDepth, maxChain int
	}{{3, 2, 3}, {4, 2, 4}, {499, 9, 4}} {
		terms := make([]string, c.n)
		for i := range terms {
			terms[i] = fmt.Sprintf(`["=","status","s%d"]`, i)
		}
		b, err := chosen(sqlite.Dialect{}, plan(t, query.Reports, `["or",`+strings.Join(terms, ",")+`]`))
		if err != nil {
			t.Fatal(err)
		}
		if got := depth(b.SQL); got > c.maxDepth {
			t.Errorf("or of %d: parentheses nest %d deep, want at most %d\n%.300s", c.n, got, c.maxDepth, b.SQL)
		}
		// no run of ORs between parentheses is longer than maxFlat
		for _, run := range strings.FieldsFunc(b.SQL, func(r rune) bool { return r == '(' || r == ')' }) {
			if k := strings.Count(run, " OR ") + 1; k > c.maxChain {
				t.Errorf("or of %d: a flat run of %d terms: %.200s", c.n, k, run)
			}
		}
		if got := strings.Count(b.SQL, "r.status = "); got != c.n {
			t.Errorf("or of %d: %d terms rendered", c.n, got)
		}
	}
}

// chosen is the rows statement the access-path optimiser chooses for p on
// d: which statement answers (a rollup, the latest reports' copies, ...)
// is its choice, not the renderer's.
func chosen(d dialect.Dialect, p *query.Plan) (*sqlgen.Built, error) {
	a, err := opt.Choose(d, p, opt.Options{})
	if err != nil {
		return nil, err
	}
	return a.Rows, nil
}

// chosenCounts is the statement the optimiser chooses for an event-counts
// plan (aggregate: an aggregate-event-counts element) on d.
func chosenCounts(d dialect.Dialect, p *query.CountsPlan, aggregate bool) (*sqlgen.Built, error) {
	a, err := opt.ChooseCounts(d, p, aggregate, false)
	if err != nil {
		return nil, err
	}
	return a.Rows, nil
}
