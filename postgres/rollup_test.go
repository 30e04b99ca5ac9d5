package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"reportdb/internal/pgtest"
)

// mergedRow is a merged rollup row: its dimensions, count and the
// transaction that wrote its current version.
type mergedRow struct {
	dims string
	n    int64
	xmin string
}

// TestCompactionMergesInPlace: compaction adds a bucket's deltas to its
// merged rows in place. A merged row no delta touched keeps its version
// (the bucket is not rewritten), a touched one gets the sum, a
// combination without a merged row gets one, a row that comes to zero is
// deleted, and NULL dimensions (report_rollup's) match each other.
func TestCompactionMergesInPlace(t *testing.T) {
	ctx := context.Background()
	u := pgtest.NewDatabase(t)
	db := openURL(t, u)
	conn := getConn(t, u)
	defer conn.Close(ctx)
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := conn.Exec(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	compact := func() {
		t.Helper()
		if _, err := db.CompactRollups(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// the bucket's rows: resource title -> row
	rows := func() map[string]mergedRow {
		t.Helper()
		rs, err := conn.Query(ctx, `SELECT resource_title, n, xmin::text, merged FROM distinct_rollup
			WHERE width = 300000 AND bucket = 600000 ORDER BY 1`)
		if err != nil {
			t.Fatal(err)
		}
		defer rs.Close()
		m := map[string]mergedRow{}
		for rs.Next() {
			var r mergedRow
			var merged bool
			if err := rs.Scan(&r.dims, &r.n, &r.xmin, &merged); err != nil {
				t.Fatal(err)
			}
			if !merged {
				t.Fatalf("unmerged row %v after compaction", r)
			}
			if _, dup := m[r.dims]; dup {
				t.Fatalf("two merged rows for %s", r.dims)
			}
			m[r.dims] = r
		}
		if err := rs.Err(); err != nil {
			t.Fatal(err)
		}
		return m
	}
	delta := `INSERT INTO distinct_rollup (width, bucket, status, resource_type, resource_title, n)
		VALUES (300000, 600000, 'success', 'File', $1, $2)`
	for i, title := range []string{"a", "b", "c", "d"} {
		exec(delta, title, i+1)
		exec(delta, title, 10)
	}
	compact()
	before := rows()
	if len(before) != 4 || before["a"].n != 11 || before["d"].n != 14 {
		t.Fatalf("after the first merge: %v", before)
	}
	exec(delta, "a", 5)  // added to a merged row
	exec(delta, "b", -7) // b is 12: still there
	exec(delta, "b", -5) // and now zero
	exec(delta, "e", 3)  // a new combination
	exec(delta, "f", 2)  // a combination that sums to zero: never merged
	exec(delta, "f", -2)
	compact()
	after := rows()
	if len(after) != 4 || after["a"].n != 16 || after["e"].n != 3 || after["c"] != before["c"] || after["d"] != before["d"] {
		t.Fatalf("after the second merge:\nbefore %v\nafter  %v", before, after)
	}
	if _, ok := after["b"]; ok {
		t.Fatalf("b sums to zero and was kept: %v", after)
	}
	if after["a"].xmin == before["a"].xmin {
		t.Fatalf("a's row was not updated: %v", after)
	}

	// NULL dimensions are one combination
	rdelta := `INSERT INTO report_rollup (width, bucket, type, environment, status, noop, noop_pending,
		cached_catalog_status, n) VALUES (3600000, 0, 'agent', 'production', NULL, NULL, true, NULL, $1)`
	for _, n := range []int{1, 2, 4} {
		exec(rdelta, n)
		compact()
	}
	var count, sum int64
	if err := conn.QueryRow(ctx, `SELECT count(*), sum(n) FROM report_rollup WHERE width = 3600000 AND bucket = 0`).Scan(&count, &sum); err != nil {
		t.Fatal(err)
	}
	if count != 1 || sum != 7 {
		t.Fatalf("report_rollup with NULL dimensions: %d rows summing to %d, want 1 row of 7", count, sum)
	}
}

// TestConcurrentCompaction: instances compacting while deltas arrive
// (one at a time: an advisory lock) keep the sums exact and one merged
// row per combination and bucket.
func TestConcurrentCompaction(t *testing.T) {
	ctx := context.Background()
	u := pgtest.NewDatabase(t)
	dbs := []interface {
		CompactRollups(context.Context) (int, error)
	}{openURL(t, u), openURL(t, u), openURL(t, u)}
	conn := getConn(t, u)
	defer conn.Close(ctx)
	const writes = 300
	var wg sync.WaitGroup
	done := make(chan struct{})
	errs := make(chan error, len(dbs)+1)
	for _, db := range dbs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				if _, err := db.CompactRollups(ctx); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	want := map[string]int64{}
	for i := 0; i < writes; i++ {
		title := fmt.Sprintf("r%d", i%7)
		n := int64(i%5 + 1)
		want[title] += n
		if _, err := conn.Exec(ctx, `INSERT INTO distinct_rollup (width, bucket, status, resource_type, resource_title, n)
			VALUES (300000, 0, 'failure', 'Exec', $1, $2)`, title, n); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if _, err := dbs[0].CompactRollups(ctx); err != nil {
		t.Fatal(err)
	}
	rs, err := conn.Query(ctx, `SELECT resource_title, count(*), sum(n), bool_and(merged) FROM distinct_rollup GROUP BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	got := 0
	for rs.Next() {
		var title string
		var rows, sum int64
		var merged bool
		if err := rs.Scan(&title, &rows, &sum, &merged); err != nil {
			t.Fatal(err)
		}
		if rows != 1 || !merged || sum != want[title] {
			t.Errorf("%s: %d rows (merged %v) summing to %d, want one merged row of %d", title, rows, merged, sum, want[title])
		}
		got++
	}
	if got != len(want) {
		t.Fatalf("%d combinations, want %d", got, len(want))
	}
}

// TestCompactionWaitsForOther: a compaction that starts while another
// instance holds the compaction lock waits for it, then merges what is
// left, so that a final compaction (an import's) never returns with deltas
// unmerged.
func TestCompactionWaitsForOther(t *testing.T) {
	ctx := context.Background()
	u := pgtest.NewDatabase(t)
	db := openURL(t, u)
	conn := getConn(t, u)
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `INSERT INTO distinct_rollup (width, bucket, status, resource_type, resource_title, n)
		VALUES (300000, 0, 'success', 'File', '/a', 1), (300000, 0, 'success', 'File', '/a', 2)`); err != nil {
		t.Fatal(err)
	}
	other := getConn(t, u)
	defer other.Close(ctx)
	if _, err := other.Exec(ctx, "SELECT pg_advisory_lock($1)", int64(0x726462_04)); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := db.CompactRollups(ctx)
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("compaction returned (err %v) while another held the lock", err)
	case <-time.After(300 * time.Millisecond):
	}
	if _, err := other.Exec(ctx, "SELECT pg_advisory_unlock($1)", int64(0x726462_04)); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var unmerged, sum int64
	if err := conn.QueryRow(ctx, `SELECT count(*) FILTER (WHERE NOT merged), sum(n) FROM distinct_rollup`).Scan(&unmerged, &sum); err != nil {
		t.Fatal(err)
	}
	if unmerged != 0 || sum != 3 {
		t.Fatalf("after the wait: %d unmerged rows, sum %d", unmerged, sum)
	}
}
