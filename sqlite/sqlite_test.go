package sqlite_test

import (
	"database/sql"
	"net/url"
	"path/filepath"
	"testing"

	"reportdb/engine"
	"reportdb/sqlite"
	"reportdb/storetest"
)

func open(t *testing.T) engine.Backend {
	db, err := sqlite.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestContract(t *testing.T) {
	storetest.Run(t, open)
}

// TestMigrationFill: migrations 0005, 0006 and 0009, run on a database
// that holds reports, fill failure_rollup, distinct_rollup's five-minute
// buckets and report_type_rollup as ingest would have.
func TestMigrationFill(t *testing.T) {
	dir := t.TempDir()
	db, err := sqlite.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := sql.Open("sqlite", "file:"+url.PathEscape(filepath.Join(dir, sqlite.FileName))+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	exec := func(q string) error { _, err := conn.Exec(q); return err }
	storetest.RunMigrationFill(t, db, exec,
		"DELETE FROM failure_rollup; DELETE FROM distinct_rollup WHERE width = 300000; DELETE FROM report_type_rollup",
		"DROP TABLE failure_rollup; DROP TABLE report_type_rollup",
		"migrations/0005_failure_rollup.sql", "migrations/0006_distinct_five_minutes.sql", "migrations/0009_report_type_rollup.sql")
}
