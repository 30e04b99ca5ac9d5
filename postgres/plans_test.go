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
	"reportdb/storetest"
)

// Statements whose plan depends on their parameter values (ranges, regular
// expressions: store.Statement.ValueSensitive) must not become cached
// prepared statements, which
// PostgreSQL may switch to a value-blind generic plan; plain lookups must.
// With one connection, pg_prepared_statements of that session tells which
// statements were prepared.
func TestValueSensitiveStatementsAreNotPrepared(t *testing.T) {
	ctx := context.Background()
	db, err := postgres.Open(ctx, pgtest.NewDatabase(t), postgres.Options{MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cases := []struct {
		sql      string
		args     []any
		prepared bool // = not ValueSensitive
	}{
		{"SELECT count(*) FROM reports r WHERE r.certname = $1", []any{"a.example.com"}, true},
		{"SELECT count(*) FROM resource_events e WHERE e.timestamp > $1 AND e.status = $2", []any{int64(0), "success"}, false},
		{"SELECT count(*) FROM reports r WHERE r.producer_timestamp >= $1 AND r.producer_timestamp < $2", []any{int64(0), int64(1)}, false},
		{"SELECT count(*) FROM resource_events e WHERE e.resource_title ~ $1", []any{"^/etc/"}, false},
	}
	for _, c := range cases {
		for i := 0; i < 7; i++ { // past PostgreSQL's five custom plans
			rows, err := db.Query(ctx, store.Statement{SQL: c.sql, Args: c.args, ValueSensitive: !c.prepared})
			if err != nil {
				t.Fatalf("%s: %v", c.sql, err)
			}
			for rows.Next() {
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			rows.Close()
		}
	}
	for _, c := range cases {
		rows, err := db.Query(ctx, store.Statement{SQL: "SELECT count(*), coalesce(sum(generic_plans), 0) FROM pg_prepared_statements WHERE statement = $1", Args: []any{c.sql}})
		if err != nil {
			t.Fatal(err)
		}
		var n, generic any
		if !rows.Next() {
			t.Fatal("no row")
		}
		if err := rows.Scan(&n, &generic); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		if got := n.(int64) > 0; got != c.prepared {
			t.Errorf("%s: prepared = %v, want %v (generic plans %v)", c.sql, got, c.prepared, generic)
		}
	}
}

// Newest-first event queries filtered by status, type or title walk the
// timestamp index backwards: the filter's columns are keys of that index
// (migration 0011), so the filter is an index condition, tested on the
// index entry, and only matching events are read from the table. With the
// timestamp alone it was a filter on every event walked.
func TestEventFiltersAreIndexConditions(t *testing.T) {
	u := pgtest.NewDatabase(t)
	db := openURL(t, u)
	h := storetest.NewServer(t, db)
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
	for _, c := range []struct{ filter, column string }{
		{"e.status = 'failure'", "status"},
		{"e.resource_type = 'File'", "resource_type"},
		{"e.resource_title >= '/etc/nginx/' AND e.resource_title < '/etc/nginx0'", "resource_title"},
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
			if f, ok := n["Filter"]; ok {
				t.Errorf("%s: %v filters %v after reading the table", c.filter, n["Relation Name"], f)
			}
		}
	}
}
