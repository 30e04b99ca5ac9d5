package storetest

import (
	"net/url"
	"testing"

	"reportdb/internal/conformance"
)

// RunDayRollup checks that aggregations grouped by a date-only to_string
// (which sqlgen computes per day first) answer exactly what grouping the
// formatted rows directly does (the path taken when a limit is given).
func RunDayRollup(t *testing.T, open Opener) {
	h := NewServer(t, open(t))
	conformance.LoadCorpus(t, h)
	get := func(q string, limit bool) []string {
		v := url.Values{"query": {q}}
		if limit {
			v.Set("limit", "100000")
		}
		for _, path := range []string{"/pdb/query/v4/events", "/pdb/query/v4/reports"} {
			if (path == "/pdb/query/v4/reports") != (len(q) > 0 && q[len(q)-1] == ' ') {
				continue
			}
			return canonical(fetch(t, h, path, v))
		}
		return nil
	}
	for _, q := range []string{
		`["extract",[["function","count"],["function","to_string","timestamp","YYYY-MM-DD"]],["group_by",["function","to_string","timestamp","YYYY-MM-DD"]]]`,
		`["extract",[["function","to_string","timestamp","YYYY-MM"],["function","count"],["function","avg","line"],["function","min","timestamp"],["function","max","line"],["function","sum","line"],["function","count","file"]],["=","status","success"],["group_by",["function","to_string","timestamp","YYYY-MM"]]]`,
		`["extract",[["function","count"],["function","to_string","timestamp","Day"]],["group_by",["function","to_string","timestamp","Day"]]]`,
		`["extract",[["function","count"],["function","to_string","producer_timestamp","FMDD \"of\" Month"]],["group_by",["function","to_string","producer_timestamp","FMDD \"of\" Month"]]] `,
	} {
		rolled, direct := get(q, false), get(q, true)
		if len(rolled) == 0 {
			t.Fatalf("%s: no rows", q)
		}
		if len(rolled) != len(direct) {
			t.Fatalf("%s: %d rows rolled up, %d direct", q, len(rolled), len(direct))
		}
		for i := range rolled {
			if rolled[i] != direct[i] {
				t.Fatalf("%s:\nrolled up %s\ndirect    %s", q, rolled[i], direct[i])
			}
		}
	}
}
