package query_test

import (
	"testing"

	"reportdb/internal/testcorpus"
	"reportdb/query"
)

// TestFiltersOrSorts: a field counts wherever it selects or orders rows,
// subqueries included, and not when it is only extracted.
func TestFiltersOrSorts(t *testing.T) {
	ce := query.Nodes.Field("catalog_environment")
	for _, c := range []struct {
		entity, query string
		orderBy       string
		want          bool
	}{
		{"nodes", `["=","catalog_environment","production"]`, "", true},
		{"nodes", `["and",["=","certname","a"],["not",["~","catalog_environment","^prod"]]]`, "", true},
		{"nodes", `["or",["null?","catalog_environment",true],["in","catalog_environment",["array",["a","b"]]]]`, "", true},
		{"nodes", `["=","report_environment","production"]`, "", false},
		{"nodes", `["extract",["certname","catalog_environment"],["=","certname","a"]]`, "", false},
		{"nodes", ``, "catalog_environment", true},
		{"nodes", `["in","catalog_environment",["extract","environment",["select_reports",["=","status","failed"]]]]`, "", true},
		// Puppetboard's events and reports of one environment
		{"events", `["in","certname",["extract","certname",["select_nodes",["=","catalog_environment","production"]]]]`, "", true},
		{"reports", `["and",["=","status","failed"],["subquery","nodes",["=","catalog_environment","production"]]]`, "", true},
		{"reports", `["in","environment",["extract","catalog_environment",["select_nodes",["=","certname","a"]]]]`, "", true},
		{"reports", `["in","certname",["extract","certname",["select_nodes",["=","report_environment","production"]]]]`, "", false},
		// facts_environment is another field
		{"nodes", `["=","facts_environment","production"]`, "", false},
	} {
		o := &query.Options{}
		if c.orderBy != "" {
			o.OrderBy, o.OrderBySet = []query.OrderSpec{{Field: c.orderBy}}, true
		}
		var q any
		if c.query != "" {
			q = testcorpus.JSON(t, c.query)
		}
		p, err := query.Compile(query.Lookup(c.entity), q, o)
		if err != nil {
			t.Errorf("%s %s: %v", c.entity, c.query, err)
			continue
		}
		if got := p.FiltersOrSorts(ce); got != c.want {
			t.Errorf("%s %s order_by %q: %v, want %v", c.entity, c.query, c.orderBy, got, c.want)
		}
	}
	// the root endpoint and PQL reach the same plans
	p, err := query.CompileRoot(testcorpus.JSON(t, `["from","nodes",["=","catalog_environment","production"]]`), &query.Options{})
	if err != nil || !p.FiltersOrSorts(ce) {
		t.Errorf("root: %v", err)
	}
}
