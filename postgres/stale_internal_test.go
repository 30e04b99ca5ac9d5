package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"reportdb/internal/pgtest"
)

// staleFixture fills resource_latest with rows over many pages, every
// other one older than valid_from (1,000,000), and distinct_rollup with
// buckets of both widths on both sides of it.
func staleFixture(t *testing.T) (*DB, *pgx.Conn) {
	t.Helper()
	ctx := context.Background()
	u := pgtest.NewDatabase(t)
	db, err := Open(ctx, u, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	for _, q := range []string{
		`UPDATE distinct_state SET valid_from = 1000000`,
		// 4,000 rows of ~250 bytes: about 130 pages
		`INSERT INTO resource_latest (certname, resource_type, resource_title, property_key, name_key, ts,
		  n_failure, n_skipped, n_success, n_noop, prev_ts, prev_n_failure, prev_n_skipped, prev_n_success, prev_n_noop)
		 SELECT 'node' || (i % 40), 'File', '/etc/' || i || repeat('x', 200), '', '',
		  CASE WHEN i % 2 = 0 THEN 999999 ELSE 1000000 END, 0, 0, 1, 0, 0, 0, 0, 0, 0
		 FROM generate_series(1, 4000) i`,
		// per width: a bucket ending before valid_from, one ending at it
		// (stale: no window reads it), one ending just after it (kept)
		`INSERT INTO distinct_rollup (width, bucket, status, resource_type, resource_title, n, merged)
		 SELECT w, b, 'success', 'File', '/etc/x', 1, true
		 FROM (VALUES (3600000), (300000)) ws(w),
		  LATERAL (VALUES (1000000 - w - 5000), (1000000 - w), (1000000 - w + 1)) bs(b)`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	return db, conn
}

func countRows(t *testing.T, conn *pgx.Conn, q string) int {
	t.Helper()
	var n int
	if err := conn.QueryRow(context.Background(), q).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// dropStaleLatest, reading resource_latest a few pages per statement,
// deletes exactly its rows older than valid_from, and the distinct_rollup
// buckets ending at or before it.
func TestDropStaleLatestChunks(t *testing.T) {
	db, conn := staleFixture(t)
	defer func(p int64) { staleLatestPages = p }(staleLatestPages)
	staleLatestPages = 7 // not a divisor of the table's pages
	if pages := countRows(t, conn, `SELECT (pg_relation_size('resource_latest') / 8192)::int`); pages < 50 {
		t.Fatalf("fixture spans %d pages, want many chunks", pages)
	}
	c, err := db.pool.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	if err := dropStaleLatest(context.Background(), c.Conn()); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, conn, `SELECT count(*) FROM resource_latest WHERE ts < 1000000`); n != 0 {
		t.Errorf("%d stale rows left", n)
	}
	if n := countRows(t, conn, `SELECT count(*) FROM resource_latest WHERE ts >= 1000000`); n != 2000 {
		t.Errorf("%d rows at or after valid_from kept, want 2000", n)
	}
	if n := countRows(t, conn, `SELECT count(*) FROM distinct_rollup WHERE bucket + width <= 1000000`); n != 0 {
		t.Errorf("%d stale distinct buckets left", n)
	}
	if n := countRows(t, conn, `SELECT count(*) FROM distinct_rollup`); n != 2 {
		t.Errorf("%d distinct buckets kept, want 2 (one per width)", n)
	}
}

// An ingest updating a stale key does not wait for the whole table's
// scan: while the delete is held at the table's last page (a row locked
// by another transaction), a key on the first page is already deleted
// and committed, and an update of it does not wait (with one DELETE of
// the whole table, it waited for that DELETE, here past its lock_timeout).
func TestDropStaleLatestDoesNotHoldTheTable(t *testing.T) {
	db, conn := staleFixture(t)
	ctx := context.Background()
	defer func(p int64) { staleLatestPages = p }(staleLatestPages)
	staleLatestPages = 8

	// a stale row on the last page, locked
	holder, err := pgx.Connect(ctx, conn.Config().ConnString())
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(ctx)
	tx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	var lastTitle, firstTitle string
	if err := tx.QueryRow(ctx, `SELECT resource_title FROM resource_latest WHERE ts < 1000000
		ORDER BY ctid DESC LIMIT 1 FOR UPDATE`).Scan(&lastTitle); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, `SELECT resource_title FROM resource_latest WHERE ts < 1000000
		ORDER BY ctid LIMIT 1`).Scan(&firstTitle); err != nil {
		t.Fatal(err)
	}

	c, err := db.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	pid := c.Conn().PgConn().PID()
	errc := make(chan error, 1)
	go func() { errc <- dropStaleLatest(ctx, c.Conn()) }()

	// wait until the delete waits for the locked row
	deadline := time.Now().Add(20 * time.Second)
	for {
		var waiting bool
		if err := conn.QueryRow(ctx, `SELECT coalesce(wait_event_type = 'Lock', false) FROM pg_stat_activity WHERE pid = $1`,
			pid).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the delete never waited for the locked row")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := conn.Exec(ctx, `SET lock_timeout = '2s'`); err != nil {
		t.Fatal(err)
	}
	tag, err := conn.Exec(ctx, `UPDATE resource_latest SET ts = 2000000 WHERE resource_title = $1`, firstTitle)
	if err != nil {
		t.Fatalf("updating a key of the first page while the delete is at the last: %v", err)
	}
	if tag.RowsAffected() != 0 {
		t.Errorf("the first page's stale key was not deleted yet (%d rows updated)", tag.RowsAffected())
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, conn, `SELECT count(*) FROM resource_latest WHERE ts < 1000000`); n != 0 {
		t.Errorf("%d stale rows left (the locked one was %q)", n, lastTitle)
	}
}
