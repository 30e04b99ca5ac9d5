package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"reportdb/engine"
	"reportdb/internal/pgtest"
	"reportdb/postgres"
	"reportdb/storetest"
)

func open(t *testing.T) engine.Backend {
	db, err := postgres.Open(context.Background(), pgtest.NewDatabase(t), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestContract(t *testing.T) {
	storetest.Run(t, open)
}

// TestMigrationFill: migrations 0006, 0007 and 0019, run on a database
// that holds reports, fill failure_rollup, distinct_rollup's five-minute
// buckets and report_type_rollup as ingest would have.
func TestMigrationFill(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	db, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	exec := func(sql string) error { _, err := conn.Exec(ctx, sql); return err }
	storetest.RunMigrationFill(t, db, exec,
		"DELETE FROM failure_rollup; DELETE FROM distinct_rollup WHERE width = 300000; DELETE FROM report_type_rollup",
		"DROP TABLE failure_rollup; DROP TABLE report_type_rollup",
		"migrations/0006_failure_rollup.sql", "migrations/0007_distinct_five_minutes.sql", "migrations/0019_report_type_rollup.sql")
}
