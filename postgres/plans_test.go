package postgres_test

import (
	"context"
	"testing"

	"reportdb/internal/pgtest"
	"reportdb/postgres"
	"reportdb/store"
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
