package sqlgen_test

import (
	"slices"
	"strings"
	"testing"

	"reportdb/postgres"
	"reportdb/query"
	"reportdb/query/sqlgen"
	"reportdb/schema/dialect"
	"reportdb/sqlite"
)

// TestKeyLookup: the keys of a plan are those of every report its filter
// can hold for: a hash; a configuration version with the node's certname
// (at the top, or within the alternative); alternatives of these. A
// filter with an alternative that names no key, a configuration version
// of no one node, a hash under NOT, or a plan that groups or counts has
// none.
func TestKeyLookup(t *testing.T) {
	h, c := sqlgen.HashKey, sqlgen.VersionKey
	for _, k := range []struct {
		e    *query.Entity
		q    string
		want []string // nil: no keys
	}{
		{query.Reports, `["=","hash","abc"]`, []string{h("abc")}},
		{query.Reports, `["and",["=","certname","n1"],["or",["=","hash","X"],["=","configuration_version","X"]]]`,
			[]string{h("X"), c("n1", "X")}},
		{query.Reports, `["and",["=","configuration_version","v2"],["=","status","failed"],["=","certname","n2"]]`,
			[]string{c("n2", "v2")}},
		{query.Reports, `["or",["=","hash","a"],["and",["=","certname","n3"],["=","configuration_version","v"]],
			["or",["=","hash","b"],["=","hash","c"]]]`, []string{h("a"), c("n3", "v"), h("b"), h("c")}},
		{query.Events, `["and",["=","certname","n1"],["=","configuration_version","v1"]]`, []string{c("n1", "v1")}},
		{query.Events, `["=","report","abc"]`, []string{h("abc")}},
		{query.Reports, `["=","configuration_version","v1"]`, nil},
		{query.Reports, `["or",["=","hash","a"],["=","status","failed"]]`, nil},
		{query.Reports, `["and",["=","certname","n1"],["or",["=","hash","a"],["~","configuration_version","v"]]]`, nil},
		{query.Reports, `["not",["=","hash","a"]]`, nil},
		{query.Reports, `["or",["=","certname","n1"],["=","configuration_version","v"]]`, nil},
		{query.Reports, `["extract",[["function","count"]],["=","hash","a"]]`, nil},
		{query.Events, `["extract",["status",["function","count"]],["=","report","a"],["group_by","status"]]`, nil},
		{query.Reports, `["=","certname","n1"]`, nil},
	} {
		keys, ok := sqlgen.KeyLookup(plan(t, k.e, k.q))
		if ok != (k.want != nil) || !slices.Equal(keys, k.want) {
			t.Errorf("%s: keys %q (%v), want %q", k.q, keys, ok, k.want)
		}
	}
}

// TestKeyed: a keyed statement requires the report's id to be one of
// the bound ids and within their days, on the reports and (over events)
// the events, and bounds the report's metrics, logs and events by the
// same range; its count too. A plan on the latest reports, or one
// without keys, is not keyed, nor on a dialect that keeps no keys.
func TestKeyed(t *testing.T) {
	rp := plan(t, query.Reports, `["and",["=","certname","n1"],["or",["=","hash","X"],["=","configuration_version","X"]]]`)
	for _, render := range []func(dialect.Dialect, *query.Plan, ...sqlgen.Option) (*sqlgen.Built, error){sqlgen.Select, sqlgen.Count} {
		b, err := render(postgres.Dialect{}, rp, sqlgen.Keyed())
		if err != nil {
			t.Fatal(err)
		}
		if !b.Keyed || len(b.KeyArgs) != 3 {
			t.Fatalf("not keyed: %v %s", b.KeyArgs, b.SQL)
		}
		ph := func(i int) string { return postgres.Dialect{}.Placeholder(b.KeyArgs[i] + 1) }
		for _, want := range []string{"r.id = ANY(" + ph(0) + "::bigint[])", "r.id >= " + ph(1) + " AND r.id < " + ph(2)} {
			if !strings.Contains(b.SQL, want) {
				t.Errorf("no %q in %s", want, b.SQL)
			}
		}
		if strings.Contains(b.SQL, "report_data") &&
			!strings.Contains(b.SQL, "d.id >= "+ph(1)+" AND d.id < "+ph(2)) {
			t.Errorf("blobs not bounded: %s", b.SQL)
		}
	}
	ev := plan(t, query.Events, `["and",["=","certname","n1"],["=","configuration_version","v1"]]`)
	b, err := sqlgen.Select(postgres.Dialect{}, ev, sqlgen.Keyed())
	if err != nil {
		t.Fatal(err)
	}
	if !b.Keyed || !strings.Contains(b.SQL, "e.report_id >= $") || !strings.Contains(b.SQL, "r.id = ANY($") {
		t.Errorf("events of a configuration version: %s", b.SQL)
	}
	for _, c := range []struct {
		d dialect.Dialect
		e *query.Entity
		q string
	}{
		{postgres.Dialect{}, query.Reports, `["and",["=","hash","abc"],["=","latest_report?",true]]`},
		{postgres.Dialect{}, query.Reports, `["=","certname","n1"]`},
		{sqlite.Dialect{}, query.Reports, `["=","hash","abc"]`},
	} {
		b, err := sqlgen.Select(c.d, plan(t, c.e, c.q), sqlgen.Keyed())
		if err != nil {
			t.Fatal(err)
		}
		if b.Keyed || b.KeyArgs != nil || strings.Contains(b.SQL, "ANY(") {
			t.Errorf("%s: keyed: %s", c.q, b.SQL)
		}
	}
}
