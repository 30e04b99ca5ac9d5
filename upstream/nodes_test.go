package upstream_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"reportdb"
	"reportdb/engine"
	"reportdb/httpapi"
	"reportdb/internal/apitest"
	"reportdb/internal/testcorpus"
	"reportdb/jsonv"
	"reportdb/query"
	"reportdb/upstream"
)

// upstreamNodes are the upstream's node rows: web03 and db01 are corpus
// nodes (db01 deactivated upstream), factsonly is the upstream's alone,
// app01.prod has no catalog upstream.
const upstreamNodes = `[
 {"certname":"web03.prod.example.com","facts_timestamp":"2026-11-20T10:00:00.000Z","catalog_timestamp":"2026-11-20T10:00:05.000Z","catalog_environment":"production","facts_environment":"facts_env","deactivated":null,"expired":null},
 {"certname":"db01.prod.example.com","facts_timestamp":"2026-11-21T10:00:00.000Z","catalog_timestamp":null,"catalog_environment":"staging","facts_environment":"facts_env","deactivated":"2026-11-22T00:00:00.000Z","expired":null},
 {"certname":"factsonly.example.com","facts_timestamp":"2026-11-22T10:00:00.000Z","catalog_timestamp":null,"catalog_environment":null,"facts_environment":"other","deactivated":null,"expired":null},
 {"certname":"app01.prod.example.com","facts_timestamp":"2026-11-19T10:00:00.000Z","catalog_timestamp":null,"catalog_environment":null,"facts_environment":"facts_env","deactivated":null,"expired":null}
]`

// fakePuppetDB answers /pdb/query/v4/nodes with upstreamNodes, recording
// the queries it gets.
func fakePuppetDB(t *testing.T) (*upstream.Client, *httptest.Server, *[]string) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.URL.Path+"?"+r.URL.Query().Get("query"))
		if r.URL.Path != "/pdb/query/v4/nodes" {
			http.Error(w, "not here", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json;charset=utf-8")
		w.Write([]byte(upstreamNodes))
	}))
	t.Cleanup(srv.Close)
	c, err := upstream.New(upstream.Options{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return c, srv, &got
}

// corpusEngine is the query engine over a store holding the corpus.
func corpusEngine(t *testing.T) *engine.Engine {
	return engine.New(apitest.Corpus(t, httpapi.Config{}).DB)
}

func compileNodes(t *testing.T, q string, o query.Options) *query.Plan {
	t.Helper()
	o.Query, o.QuerySet = testcorpus.JSON(t, q), q != ""
	p, err := query.CompileEntity(query.Nodes, &o)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return p
}

func certnames(rows []any) []string {
	var out []string
	for _, r := range rows {
		c, _ := r.(*jsonv.Object).Get("certname")
		s, _ := c.(string)
		out = append(out, s)
	}
	return out
}

func TestNodesMerge(t *testing.T) {
	up, _, got := fakePuppetDB(t)
	n := upstream.Nodes{Upstream: up, Local: upstream.EngineLocal(corpusEngine(t), time.Minute)}
	ctx := context.Background()

	rows, err := n.Rows(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// the corpus's 40 nodes, then the upstream's one it lacks
	if c, _ := rows[len(rows)-1].Get("certname"); len(rows) != 41 || c != "factsonly.example.com" || len(rows[40].Keys) != len(query.Nodes.Output) {
		t.Fatalf("%d rows, last %v", len(rows), rows[len(rows)-1])
	}
	if q := (*got)[0]; q != `/pdb/query/v4/nodes?["extract",["certname","facts_timestamp","catalog_timestamp","catalog_environment","facts_environment","deactivated","expired"],["=","node_state","any"]]` {
		t.Errorf("asked the upstream %s", q)
	}
	w, err := n.Node(ctx, "web03.prod.example.com")
	if err != nil || w == nil {
		t.Fatal(w, err)
	}
	for f, want := range map[string]any{"facts_environment": "facts_env", "catalog_environment": "production", "report_environment": "production",
		"facts_timestamp": "2026-11-20T10:00:00.000Z", "latest_report_status": "changed"} {
		if v, _ := w.Get(f); v != want {
			t.Errorf("web03 %s = %v, want %v", f, v, want)
		}
	}
	if f, _ := n.Node(ctx, "factsonly.example.com"); f == nil {
		t.Error("factsonly.example.com missing")
	} else if v, _ := f.Get("report_timestamp"); v != nil {
		t.Errorf("factsonly has a report: %v", v)
	}
	if none, err := n.Node(ctx, "nope.example.com"); none != nil || err != nil {
		t.Errorf("an unknown node: %v %v", none, err)
	}

	// filters over upstream fields, report fields, both; node_state;
	// subqueries on merged nodes and on reportdb's reports
	for q, want := range map[string]string{
		``:                                      "40 nodes",
		`["=","facts_environment","facts_env"]`: "app01.prod.example.com web03.prod.example.com",
		`["and",["=","catalog_environment","production"],["=","latest_report_status","changed"]]`:                                            "web03.prod.example.com",
		`["and",["=","node_state","inactive"],["~","certname","^db01"]]`:                                                                     "db01.prod.example.com",
		`[">","facts_timestamp","2026-11-21T00:00:00Z"]`:                                                                                     "factsonly.example.com",
		`["and",["null?","report_timestamp",true],["=","node_state","active"]]`:                                                              "factsonly.example.com",
		`["not",["=","facts_environment","facts_env"]]`:                                                                                      "factsonly.example.com",
		`["in","certname",["extract","certname",["select_nodes",["=","facts_environment","other"]]]]`:                                        "factsonly.example.com",
		`["and",["in","certname",["extract","certname",["select_reports",["=","status","changed"]]]],["=","facts_environment","facts_env"]]`: "app01.prod.example.com web03.prod.example.com",
	} {
		rows, _, err := n.Query(ctx, compileNodes(t, q, query.Options{OrderBy: []query.OrderSpec{{Field: "certname"}}, OrderBySet: true}))
		if err != nil {
			t.Errorf("%s: %v", q, err)
			continue
		}
		names := strings.Join(certnames(rows), " ")
		if strings.HasSuffix(want, " nodes") {
			names = strings.Repeat("x", len(rows)) // compare the count
			want = strings.Repeat("x", 40)
		}
		if names != want {
			t.Errorf("%s: %s, want %s", q, names, want)
		}
	}

	// order by an upstream field, paging, the total before paging
	out, total, err := n.Query(ctx, compileNodes(t, "", query.Options{OrderBy: []query.OrderSpec{{Field: "facts_timestamp"}}, OrderBySet: true,
		Limit: 2, LimitSet: true, Offset: 1, OffsetSet: true}))
	if err != nil || total != 40 || strings.Join(certnames(out), " ") != "web03.prod.example.com factsonly.example.com" {
		t.Fatalf("ordered page: %v of %d, %v", certnames(out), total, err)
	}
	out, _, err = n.Query(ctx, compileNodes(t, `["extract",[["function","count"],"facts_environment"],["null?","facts_environment",false],["group_by","facts_environment"]]`, query.Options{}))
	if err != nil || len(out) != 2 || jsonv.Compact(out[0]) != `{"count":2,"facts_environment":"facts_env"}` || jsonv.Compact(out[1]) != `{"count":1,"facts_environment":"other"}` {
		t.Fatalf("count by facts_environment: %v %v", out, err)
	}

	// what the merge cannot answer: a 400 saying why
	for q, want := range map[string]string{
		`["in","certname",["extract","certname",["select_facts",["=","name","os"]]]]`: "cannot hold a subquery on facts",
		`["extract",[["function","max","report_timestamp"]]]`:                         "only the count() function",
	} {
		_, _, err := n.Query(ctx, compileNodes(t, q, query.Options{}))
		var e *reportdb.Error
		if !errors.As(err, &e) || e.Code != reportdb.EINVALID || !strings.Contains(e.Message, want) {
			t.Errorf("%s: %v, want a 400 with %q", q, err, want)
		}
	}
}

// With --catalog-environment-from-reports, a node the upstream has no
// catalog of keeps the environment of its latest report.
func TestNodesMergeCatalogEnvironmentFromReports(t *testing.T) {
	query.SetCatalogEnvironmentFromReports(true)
	t.Cleanup(func() { query.SetCatalogEnvironmentFromReports(false) })
	up, _, _ := fakePuppetDB(t)
	n := upstream.Nodes{Upstream: up, Local: upstream.EngineLocal(corpusEngine(t), time.Minute)}
	for cn, want := range map[string]any{"app01.prod.example.com": "production", "web03.prod.example.com": "production",
		"db01.prod.example.com": "staging", "factsonly.example.com": nil} {
		row, err := n.Node(context.Background(), cn)
		if err != nil || row == nil {
			t.Fatal(cn, row, err)
		}
		if v, _ := row.Get("catalog_environment"); v != want {
			t.Errorf("%s: catalog_environment %v, want %v", cn, v, want)
		}
	}
}

// An upstream that does not answer, or fails, is a 503; reportdb's own
// failure is its own error.
func TestNodesUpstreamDown(t *testing.T) {
	up, srv, _ := fakePuppetDB(t)
	local := func(context.Context, *query.Plan) ([]*jsonv.Object, error) { return nil, nil }
	srv.Close()
	_, err := upstream.Nodes{Upstream: up, Local: local}.Rows(context.Background())
	var e *reportdb.Error
	if !errors.As(err, &e) || e.Code != reportdb.EUNAVAILABLE || !strings.Contains(e.Message, "upstream PuppetDB is unavailable") {
		t.Errorf("upstream down: %v", err)
	}

	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", 500) }))
	defer failing.Close()
	up, _ = upstream.New(upstream.Options{URL: failing.URL})
	_, err = upstream.Nodes{Upstream: up, Local: local}.Rows(context.Background())
	if !errors.As(err, &e) || e.Code != reportdb.EUNAVAILABLE || !strings.Contains(e.Message, "upstream PuppetDB failed") {
		t.Errorf("upstream failing: %v", err)
	}

	mine := errors.New("store down")
	_, err = upstream.Nodes{Upstream: up, Local: func(context.Context, *query.Plan) ([]*jsonv.Object, error) { return nil, mine }}.Rows(context.Background())
	if err != mine {
		t.Errorf("local failure: %v", err)
	}
}
