package query_test

import (
	"testing"

	"reportdb/jsonv"
	"reportdb/query"
)

// TestCountsFromReports: event counts summarised by certname whose filter
// only tests report-level fields are read from the per-report counts; any
// event-level condition, another summary, a distinct window or the
// corrective split needs the events.
func TestCountsFromReports(t *testing.T) {
	cases := []struct {
		query, summarize string
		distinct         bool
		corrective       bool
		want             bool
	}{
		{``, "certname", false, false, true},
		{`["=","latest_report?",true]`, "certname", false, false, true},
		{`["and",["=","environment","qa"],["not",["=","certname","a"]],[">","run_start_time","2025-01-01"]]`, "certname", false, false, true},
		{`["subquery","reports",["=","status","failed"]]`, "certname", false, false, true},
		{`["=","status","failure"]`, "certname", false, false, false},
		{`["or",["=","latest_report?",true],["=","resource_type","File"]]`, "certname", false, false, false},
		{`["=","latest_report?",true]`, "resource", false, false, false},
		{`["=","latest_report?",true]`, "certname", true, false, false},
		{`["=","latest_report?",true]`, "certname", false, true, false},
	}
	for _, c := range cases {
		o := &query.Options{SummarizeBy: c.summarize}
		if c.query != "" {
			v, err := jsonv.Parse([]byte(c.query))
			if err != nil {
				t.Fatal(err)
			}
			o.Query = v
		}
		if c.distinct {
			o.Distinct = &query.DistinctWindow{Start: 0, End: 1 << 50}
		}
		p, err := query.CompileEventCounts(o, c.corrective)
		if err != nil {
			t.Fatalf("%s: %v", c.query, err)
		}
		if p.FromReports != c.want {
			t.Errorf("%s summarize_by=%s distinct=%v corrective=%v: FromReports = %v, want %v",
				c.query, c.summarize, c.distinct, c.corrective, p.FromReports, c.want)
		}
	}
}
