package postgres

import (
	"context"
	"testing"
	"time"

	"reportdb/internal/pgtest"
	"reportdb/store"
)

// A request's Steps asking for statements get the pool's connection wait
// and the statements' time; Steps that do not (retention's) get neither.
func TestStepTracer(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, pgtest.NewDatabase(t), Options{MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	// the only connection is busy for 150 ms
	held, err := db.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const hold = 150 * time.Millisecond
	go func() {
		time.Sleep(hold)
		held.Release()
	}()
	var req store.Steps
	req.Statements = true
	rctx := store.WithSteps(ctx, &req)
	if _, err := db.pool.Exec(rctx, "SELECT pg_sleep(0.1)"); err != nil {
		t.Fatal(err)
	}
	rows, err := db.pool.Query(rctx, "SELECT generate_series(1, 3)")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
	}
	rows.Close()
	if wait, n := req.Step("conn wait"); n != 2 || wait < hold-10*time.Millisecond {
		t.Errorf("conn wait: %v over %d acquires, want >= %v over 2 (%s)", wait, n, hold, req.String())
	}
	if took, n := req.Step("sql"); n != 2 || took < 100*time.Millisecond {
		t.Errorf("sql: %v over %d statements, want >= 100ms over 2 (%s)", took, n, req.String())
	}

	var run store.Steps // a retention run's: its own steps only
	if _, err := db.pool.Exec(store.WithSteps(ctx, &run), "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	if s := run.String(); s != "" {
		t.Errorf("steps not asking for statements got %q", s)
	}
}
