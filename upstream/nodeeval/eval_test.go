package nodeeval_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"reportdb/engine"
	"reportdb/httpapi"
	"reportdb/internal/apitest"
	"reportdb/internal/testcorpus"
	"reportdb/jsonv"
	"reportdb/query"
	"reportdb/query/pql"
	"reportdb/upstream"
	"reportdb/upstream/nodeeval"
)

// The evaluator answers a plan on rows in memory; the engine answers it in
// SQL. Both are run here on the corpus, over the same plans, and must give
// the same rows (the same bytes per row), the same order where the query
// fixes one, and the same total: first the recorded conformance cases (the
// reports, events and root queries it can evaluate: filters, order,
// paging, count), then node queries of the kinds the real clients send.

type fixture struct {
	eng   *engine.Engine
	local upstream.Local
	h     *httpapi.Server
	all   map[*query.Entity][]*jsonv.Object // every row of an entity
}

func newFixture(t *testing.T) *fixture {
	f := apitest.Corpus(t, httpapi.Config{})
	db, h := f.DB, f.API
	eng := engine.New(db)
	return &fixture{eng: eng, local: upstream.EngineLocal(eng, time.Minute), h: h, all: map[*query.Entity][]*jsonv.Object{}}
}

// sqlAnswer runs plan through the engine: its rows as compact JSON, and
// the total.
func (f *fixture) sqlAnswer(t *testing.T, plan *query.Plan) ([]string, int64, error) {
	var out []string
	var n int64
	err := f.eng.Query(context.Background(), plan, true, func(rows *engine.Rows, total int64) error {
		n = total
		for rows.Next() {
			b, err := rows.AppendJSON(nil)
			if err != nil {
				return err
			}
			out = append(out, string(b))
		}
		return rows.Err()
	})
	return out, n, err
}

// memAnswer evaluates plan in memory on every row of its entity.
func (f *fixture) memAnswer(t *testing.T, plan *query.Plan) ([]string, int64, error) {
	all := &query.Options{}
	if plan.Entity == query.Nodes {
		all.Query, all.QuerySet = []any{"=", "node_state", "any"}, true
	}
	rows, ok := f.all[plan.Entity]
	if !ok {
		p, err := query.CompileEntity(plan.Entity, all)
		if err != nil {
			t.Fatal(err)
		}
		if rows, err = f.local(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		f.all[plan.Entity] = rows
	}
	res, total, err := nodeeval.Eval(plan, rows, func(p *query.Plan) ([]*jsonv.Object, error) { return f.local(context.Background(), p) })
	var out []string
	for _, r := range res {
		out = append(out, jsonv.Compact(r))
	}
	return out, int64(total), err
}

// same compares the two answers: the same multiset of rows, the same
// total, and when ordered the same sequence (strict) or the same sequence
// of order-by values (keys, where rows tie).
func same(plan *query.Plan, sqlRows, memRows []string, sqlTotal, memTotal int64, mode string) string {
	if sqlTotal != memTotal {
		return fmt.Sprintf("total: SQL %d, in memory %d", sqlTotal, memTotal)
	}
	a, b := append([]string(nil), sqlRows...), append([]string(nil), memRows...)
	sort.Strings(a)
	sort.Strings(b)
	if strings.Join(a, "\n") != strings.Join(b, "\n") {
		return fmt.Sprintf("rows differ:\n  SQL       %d %.600s\n  in memory %d %.600s", len(sqlRows), strings.Join(sqlRows, " "), len(memRows), strings.Join(memRows, " "))
	}
	switch mode {
	case "strict":
		if strings.Join(sqlRows, "\n") != strings.Join(memRows, "\n") {
			return fmt.Sprintf("order differs:\n  SQL       %.600s\n  in memory %.600s", strings.Join(sqlRows, " "), strings.Join(memRows, " "))
		}
	case "keys":
		if k1, k2 := orderKeys(plan, sqlRows), orderKeys(plan, memRows); k1 != k2 {
			return fmt.Sprintf("order differs:\n  SQL       %.600s\n  in memory %.600s", k1, k2)
		}
	}
	return ""
}

func canonical(t *testing.T, rows []string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		v, err := jsonv.Parse([]byte(r))
		if err != nil {
			t.Fatalf("%v: %.200s", err, r)
		}
		out[i] = jsonv.Compact(v)
	}
	return out
}

func orderKeys(plan *query.Plan, rows []string) string {
	var b strings.Builder
	for _, r := range rows {
		v, _ := jsonv.Parse([]byte(r))
		o, _ := v.(*jsonv.Object)
		for _, ob := range plan.OrderBy {
			if ob.Field != nil && o != nil {
				x, _ := o.Get(ob.Field.Name)
				b.WriteString(jsonv.Compact(x) + ",")
			}
		}
		b.WriteString(" ")
	}
	return b.String()
}

// caseOptions reads a conformance case's parameters as the API does, for
// the parameters the evaluator knows; why it cannot is returned otherwise.
func caseOptions(c testcorpus.Case, root bool) (*query.Options, any, string) {
	u, err := url.Parse(c.Request.Target)
	if err != nil {
		return nil, nil, "target: " + err.Error()
	}
	params := map[string]any{}
	for k, vs := range u.Query() {
		params[k] = vs[0]
	}
	if c.Request.Method == "POST" && c.Request.BodyRaw != nil {
		v, err := jsonv.Parse([]byte(*c.Request.BodyRaw))
		o, ok := v.(*jsonv.Object)
		if err != nil || !ok {
			return nil, nil, "a POST body that is not an object"
		}
		for i, k := range o.Keys {
			params[k] = o.Values[i]
		}
	}
	o := &query.Options{}
	var ast any
	for k, v := range params {
		s, isString := v.(string)
		switch k {
		case "query":
			o.QuerySet = true
			switch {
			case !isString:
				ast = v
			case root && query.RootQueryIsPQL(s):
				if ast, err = pql.Parse(s); err != nil {
					return nil, nil, "PQL: " + err.Error()
				}
			default:
				if ast, err = jsonv.Parse([]byte(s)); err != nil {
					return nil, nil, "query: " + err.Error()
				}
			}
			o.Query = ast
		case "order_by":
			if isString {
				if v, err = jsonv.Parse([]byte(s)); err != nil {
					return nil, nil, "order_by: " + err.Error()
				}
			}
			specs, _ := v.([]any)
			for _, x := range specs {
				m, _ := x.(*jsonv.Object)
				if m == nil {
					return nil, nil, "order_by entry"
				}
				f, _ := m.Get("field")
				ord, _ := m.Get("order")
				fs, _ := f.(string)
				os, _ := ord.(string)
				o.OrderBy = append(o.OrderBy, query.OrderSpec{Field: fs, Desc: strings.EqualFold(os, "desc")})
			}
			o.OrderBySet = true
		case "limit", "offset":
			if !isString {
				s = jsonv.Compact(v)
			}
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return nil, nil, k + ": " + s
			}
			if k == "limit" {
				o.Limit, o.LimitSet = n, true
			} else {
				o.Offset, o.OffsetSet = n, true
			}
		case "include_total":
			o.IncludeTotal = s == "true" || v == true
		case "pretty": // how the rows are printed, not which
		default:
			return nil, nil, "parameter " + k
		}
	}
	return o, ast, ""
}

// casePlan compiles a conformance case, or says why the evaluator is not
// run on it.
func casePlan(c testcorpus.Case) (*query.Plan, string) {
	if c.Expect.Status != 200 {
		return nil, "an error case"
	}
	root := c.Path == "/pdb/query/v4"
	var e *query.Entity
	switch c.Path {
	case "/pdb/query/v4":
	case "/pdb/query/v4/events":
		e = query.Events
	case "/pdb/query/v4/reports":
		e = query.Reports
	default:
		return nil, "endpoint " + c.Endpoint
	}
	o, ast, why := caseOptions(c, root)
	if why != "" {
		return nil, why
	}
	var plan *query.Plan
	var err error
	if root {
		plan, err = query.CompileRoot(ast, o)
	} else {
		plan, err = query.CompileEntity(e, o)
	}
	if err != nil {
		return nil, "compile: " + err.Error()
	}
	if plan.Distinct != nil {
		return nil, "distinct_resources"
	}
	return plan, ""
}

func TestConformanceCasesBesideSQL(t *testing.T) {
	f := newFixture(t)
	// the corpus's nodes are all active: the implicit active-nodes filter
	// of a root query holds for every row (the evaluator reads a node's
	// state from node rows only)
	if r := get(t, f, "/pdb/query/v4/nodes?query="+url.QueryEscape(`["extract",[["function","count"]],["=","node_state","inactive"]]`)); r != `[{"count":0}]` {
		t.Fatalf("inactive nodes in the corpus: %s", r)
	}
	compared := 0
	unsupported := map[string]int{}
	excluded := map[string]int{}
	for _, c := range testcorpus.LoadCases(t) {
		plan, why := casePlan(c)
		if why != "" {
			excluded[why]++
			continue
		}
		memPlan, _ := casePlan(c)
		mem, memTotal, err := f.memAnswer(t, memPlan)
		if err != nil {
			unsupported[err.Error()]++
			continue
		}
		sql, sqlTotal, err := f.sqlAnswer(t, plan)
		if err != nil {
			t.Errorf("%s: SQL: %v", c.ID, err)
			continue
		}
		// A report's documents (logs, metrics, resource events) are
		// written as the store holds their text; the evaluator writes
		// what it parsed. Node rows hold no document: their bytes are
		// compared as they are (TestNodeQueriesBesideSQL).
		sql, mem = canonical(t, sql), canonical(t, mem)
		compared++
		if d := same(plan, sql, mem, sqlTotal, memTotal, c.Order.Mode); d != "" {
			t.Errorf("%s %s: %s", c.ID, c.Request.Target, d)
		}
	}
	t.Logf("%d cases compared; not evaluated in memory: %v; not run: %v", compared, unsupported, excluded)
	// a floor, so that a change in the loaders cannot make this pass on
	// nothing
	if compared < 150 {
		t.Errorf("only %d conformance cases compared", compared)
	}
}

func get(t *testing.T, f *fixture, target string) string {
	t.Helper()
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
	if rec.Code != 200 {
		t.Fatalf("%s: %d %s", target, rec.Code, rec.Body)
	}
	return rec.Body.String()
}

// nodeQueries are nodes queries of the kinds Puppetboard, pypuppetdb,
// Puppet's query functions and the dashboard send, and every operator,
// subquery and aggregate the evaluator supports.
var nodeQueries = []struct {
	query, orderBy string
	limit, offset  int64
	mode           string // as a conformance case's order mode
}{
	{query: ``},
	{query: `["=","node_state","any"]`},
	{query: `["=","node_state","inactive"]`},
	{query: `["=",["node","active"],false]`},
	{query: `["=","certname","web01.prod.example.com"]`},
	{query: `["or",["=","certname","web01.prod.example.com"],["=","certname","db01.prod.example.com"],["=","certname","nope"]]`},
	{query: `["~","certname","^web0[1-3]\\.prod"]`},
	{query: `["~","certname","stage|corp"]`},
	{query: `["not",["~","certname","example\\.com$"]]`},
	{query: `["=","latest_report_status","failed"]`},
	{query: `["and",["=","report_environment","production"],["=","latest_report_status","failed"]]`},
	{query: `["and",["=","report_environment","production"],["not",["=","latest_report_status","unchanged"]]]`},
	{query: `["or",["=","latest_report_noop",true],["=","latest_report_corrective_change",true]]`},
	{query: `["=","latest_report_noop_pending",true]`},
	{query: `["<","report_timestamp","2025-01-07T00:00:00Z"]`},
	{query: `[">=","report_timestamp","2025-01-06T10:26:09.344Z"]`},
	{query: `["<=","report_timestamp","2025-01-06T10:26:09.344+01:00"]`},
	{query: `["null?","latest_report_hash",false]`},
	{query: `["null?","facts_timestamp",true]`},
	{query: `["null?","latest_report_job_id",true]`},
	{query: `["=","cached_catalog_status","not_used"]`},
	{query: `["in","certname",["array",["web01.prod.example.com","db01.prod.example.com","nope"]]]`},
	{query: `["in","report_environment",["array",["qa","staging"]]]`},
	{query: `["in","certname",["extract","certname",["select_reports",["=","status","failed"]]]]`},
	{query: `["in","certname",["extract","certname",["select_events",["=","resource_type","File"]]]]`},
	{query: `["in","certname",["extract","certname",["select_nodes",["~","certname","stage"]]]]`},
	{query: `["in",["certname","latest_report_hash"],["extract",["certname","hash"],["select_reports",["=","latest_report?",true]]]]`},
	{query: `["in","report_environment",["extract","name",["select_environments",["~","name","^prod"]]]]`},
	{query: `["extract",["certname","latest_report_status"],["=","report_environment","staging"]]`},
	{query: `["extract",[["function","count"]]]`},
	{query: `["extract",[["function","count"]],["=","node_state","any"]]`},
	{query: `["extract",[["function","count"],"latest_report_status"],["group_by","latest_report_status"]]`},
	{query: `["extract",[["function","count"],"report_environment","latest_report_status"],["=","node_state","any"],["group_by","report_environment","latest_report_status"]]`},
	{query: `["extract",[["function","count"]],["and",["=","catalog_environment","production"],["=","latest_report_status","changed"]]]`},
	{orderBy: `[{"field":"report_timestamp","order":"desc"},{"field":"certname"}]`, limit: 5, mode: "strict"},
	{orderBy: `[{"field":"certname","order":"asc"}]`, limit: 7, offset: 10, mode: "strict"},
	{orderBy: `[{"field":"latest_report_status"},{"field":"certname","order":"desc"}]`, mode: "strict"},
	{orderBy: `[{"field":"report_environment"}]`, mode: "keys"},
	{query: `["=","node_state","any"]`, orderBy: `[{"field":"deactivated","order":"desc"},{"field":"certname"}]`, limit: 3, mode: "strict"},
	{query: `["extract",["certname","report_timestamp"],["~","certname","web"]]`, orderBy: `[{"field":"report_timestamp"},{"field":"certname"}]`, offset: 2, mode: "strict"},
}

func TestNodeQueriesBesideSQL(t *testing.T) {
	f := newFixture(t)
	// one node deactivated after its latest report, so that node_state
	// tells nodes apart
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, httptest.NewRequest("POST", "/pdb/cmd/v1?command=deactivate_node&version=3&certname=web02.prod.example.com",
		strings.NewReader(`{"certname":"web02.prod.example.com","producer_timestamp":"2030-01-01T00:00:00.000Z"}`)))
	if rec.Code != 200 {
		t.Fatalf("deactivate: %d %s", rec.Code, rec.Body)
	}
	if r := get(t, f, "/pdb/query/v4/nodes?query="+url.QueryEscape(`["extract",["certname"],["=","node_state","inactive"]]`)); r != `[{"certname":"web02.prod.example.com"}]` {
		t.Fatalf("inactive nodes: %s", r)
	}
	for _, q := range nodeQueries {
		compile := func() *query.Plan {
			o := &query.Options{Query: testcorpus.JSON(t, q.query), QuerySet: q.query != "", Limit: q.limit, LimitSet: q.limit > 0,
				Offset: q.offset, OffsetSet: q.offset > 0}
			if q.orderBy != "" {
				var specs []struct{ Field, Order string }
				if err := json.Unmarshal([]byte(q.orderBy), &specs); err != nil {
					t.Fatal(err)
				}
				for _, s := range specs {
					o.OrderBy = append(o.OrderBy, query.OrderSpec{Field: s.Field, Desc: s.Order == "desc"})
				}
				o.OrderBySet = true
			}
			p, err := query.CompileEntity(query.Nodes, o)
			if err != nil {
				t.Fatalf("%+v: %v", q, err)
			}
			return p
		}
		plan := compile()
		sql, sqlTotal, err := f.sqlAnswer(t, plan)
		if err != nil {
			t.Fatalf("%+v: SQL: %v", q, err)
		}
		mem, memTotal, err := f.memAnswer(t, compile())
		if err != nil {
			t.Errorf("%+v: in memory: %v", q, err)
			continue
		}
		if len(sql) == 0 {
			t.Errorf("%+v: no rows: choose a query that tells the evaluators apart", q)
		}
		if d := same(plan, sql, mem, sqlTotal, memTotal, q.mode); d != "" {
			t.Errorf("%+v: %s", q, d)
		}
	}
}
