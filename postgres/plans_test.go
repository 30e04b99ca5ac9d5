package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"reportdb/internal/pgtest"
	"reportdb/postgres"
	"reportdb/store"
)

// Plain lookups are prepared and planned once, generically, from their
// first execution on (PostgreSQL's default makes five custom plans first,
// and more for as long as a generic plan's estimate looks dearer, which
// over many partitions is every time). Statements whose plan depends on
// their parameter values (ranges, regular expressions:
// store.Statement.ValueSensitive) are planned with their values at every
// execution, and leave the session planning generically afterwards, also
// when they fail, in a snapshot or not. With one connection,
// pg_prepared_statements of that session tells how each statement was
// planned.
func TestValueSensitiveStatementsArePlannedWithTheirValues(t *testing.T) {
	ctx := context.Background()
	db, err := postgres.Open(ctx, pgtest.NewDatabase(t), postgres.Options{MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	lookup := store.Statement{SQL: "SELECT count(*) FROM reports r WHERE r.certname = $1", Args: []any{"a.example.com"}}
	sensitive := []store.Statement{
		{SQL: "SELECT count(*) FROM resource_events e WHERE e.timestamp > $1 AND e.status = $2", Args: []any{int64(0), "success"}},
		{SQL: "SELECT count(*) FROM reports r WHERE r.producer_timestamp >= $1 AND r.producer_timestamp < $2", Args: []any{int64(0), int64(1)}},
		{SQL: "SELECT count(*) FROM resource_events e WHERE e.resource_title ~ $1", Args: []any{"^/etc/"}},
	}
	for i := range sensitive {
		sensitive[i].ValueSensitive = true
	}
	run := func(q store.Querier, st store.Statement) error {
		rows, err := q.Query(ctx, st)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
		}
		return rows.Err()
	}
	plans := func(sql string) (generic, custom int64) {
		rows, err := db.Query(ctx, store.Statement{SQL: "SELECT coalesce(sum(generic_plans), -1)::bigint, coalesce(sum(custom_plans), -1)::bigint FROM pg_prepared_statements WHERE statement = $1", Args: []any{sql}})
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var g, c any
		if !rows.Next() {
			t.Fatal("no row")
		}
		if err := rows.Scan(&g, &c); err != nil {
			t.Fatal(err)
		}
		return g.(int64), c.(int64)
	}
	for i := 0; i < 7; i++ { // past PostgreSQL's five custom plans
		for _, st := range append([]store.Statement{lookup}, sensitive...) {
			if err := run(db, st); err != nil {
				t.Fatalf("%s: %v", st.SQL, err)
			}
		}
	}
	for _, st := range sensitive {
		if g, c := plans(st.SQL); g != 0 || c != 7 {
			t.Errorf("%s: %d generic and %d custom plans in 7 executions, want 7 custom", st.SQL, g, c)
		}
	}
	if g, c := plans(lookup.SQL); g != 7 || c != 0 {
		t.Errorf("%s: %d generic and %d custom plans in 7 executions, want 7 generic", lookup.SQL, g, c)
	}
	// a value-sensitive statement that fails (an invalid regular
	// expression), alone and in a snapshot, then the lookup again
	bad := store.Statement{SQL: "SELECT count(*) FROM resource_events e WHERE e.resource_title ~ $1", Args: []any{"("}, ValueSensitive: true}
	if err := run(db, bad); err == nil {
		t.Fatal("an invalid regular expression did not fail")
	}
	err = db.Snapshot(ctx, func(q store.Querier) error {
		if err := run(q, sensitive[0]); err != nil {
			return err
		}
		return run(q, bad)
	})
	if err == nil {
		t.Fatal("an invalid regular expression did not fail in a snapshot")
	}
	if err := db.Snapshot(ctx, func(q store.Querier) error { return run(q, sensitive[1]) }); err != nil {
		t.Fatal(err)
	}
	if err := run(db, lookup); err != nil {
		t.Fatal(err)
	}
	if g, c := plans(lookup.SQL); g != 8 || c != 0 {
		t.Errorf("after failed value-sensitive statements: %s: %d generic and %d custom plans in 8 executions, want 8 generic", lookup.SQL, g, c)
	}
}

// Newest-first event queries filtered by status, type or title walk the
// timestamp index backwards: the filter's columns are keys of that index
// (migration 0011), so the filter is an index condition, tested on the
// index entry, and only matching events are read from the table. With the
// timestamp alone it was a filter on every event walked.
func TestEventFiltersAreIndexConditions(t *testing.T) {
	u, _, h := newServer(t)
	base := time.Now().UnixMilli() - 3_600_000
	for r := 0; r < 3; r++ {
		cn := fmt.Sprintf("idx%02d.example.com", r)
		submit(t, h, cn, reportBody(cn, base+int64(r)*60_000))
	}
	conn := getConn(t, u)
	defer conn.Close(context.Background())
	ctx := context.Background()
	// the tables are tiny: forbid what would win on them (reading all
	// and sorting) so that the plan is the one large tables get
	for _, s := range []string{"SET enable_seqscan = off", "SET enable_bitmapscan = off", "SET enable_sort = off"} {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		filter, column string
		recheck        bool // the index holds a key of the column: the table row is checked again
	}{
		{"e.status = 'failure'", "status", false},
		{"e.resource_type = 'File'", "resource_type", false},
		// what sqlgen writes for ["~", "resource_title", "^/etc/nginx/"]
		{"e.resource_title >= '/etc/nginx/' AND e.resource_title < '/etc/nginx0'" +
			" AND title_key(e.resource_title) >= title_key('/etc/nginx/') AND title_key(e.resource_title) < title_key('/etc/nginx0')",
			"resource_title", true},
	} {
		var plan string
		if err := conn.QueryRow(ctx, "EXPLAIN (FORMAT JSON) SELECT e.report_id FROM resource_events e WHERE "+
			c.filter+" ORDER BY e.timestamp DESC LIMIT 100").Scan(&plan); err != nil {
			t.Fatal(err)
		}
		var nodes []map[string]any
		var walk func(any)
		walk = func(x any) {
			switch x := x.(type) {
			case map[string]any:
				if x["Node Type"] == "Index Scan" || x["Node Type"] == "Index Only Scan" {
					nodes = append(nodes, x)
				}
				for _, v := range x {
					walk(v)
				}
			case []any:
				for _, v := range x {
					walk(v)
				}
			}
		}
		var doc any
		if err := json.Unmarshal([]byte(plan), &doc); err != nil {
			t.Fatal(err)
		}
		walk(doc)
		if len(nodes) == 0 {
			t.Fatalf("%s: no index scan in %s", c.filter, plan)
		}
		for _, n := range nodes {
			cond, _ := n["Index Cond"].(string)
			if !strings.Contains(n["Index Name"].(string), "timestamp") || !strings.Contains(cond, c.column) {
				t.Errorf("%s: %v scans %v with index condition %q, want the timestamp index with %s in it",
					c.filter, n["Relation Name"], n["Index Name"], cond, c.column)
			}
			if f, ok := n["Filter"]; ok && !c.recheck {
				t.Errorf("%s: %v filters %v after reading the table", c.filter, n["Relation Name"], f)
			}
		}
	}
}
