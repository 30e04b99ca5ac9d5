package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMaintainVacuumsClosedDays: Maintain vacuums the partitions of days
// that have ended and changed since their last vacuum, and the reports
// table, but not today's partitions, which are still filling; a second run
// with nothing changed does nothing; an instance that finds another one
// maintaining does nothing.
func TestMaintainVacuumsClosedDays(t *testing.T) {
	ctx := context.Background()
	u, db, h := newServer(t)
	now := time.Now().UTC()
	past := now.Add(-72 * time.Hour)
	for i := 0; i < 3; i++ {
		cn := fmt.Sprintf("n%d", i)
		submit(t, h, cn, reportBody(cn, past.UnixMilli()+int64(i)*1000))
		submit(t, h, cn, reportBody(cn, now.UnixMilli()-int64(i+1)*1000))
	}
	pastEvents := "resource_events_" + past.Format("20060102")
	todayEvents := "resource_events_" + now.Format("20060102")

	// PostgreSQL publishes table statistics asynchronously (up to a few
	// seconds after the inserting transaction): wait for the inserts to show
	conn := getConn(t, u)
	defer conn.Close(ctx)
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n int64
		if err := conn.QueryRow(ctx, "SELECT coalesce((SELECT n_ins_since_vacuum FROM pg_stat_user_tables WHERE relname = $1), 0)", pastEvents).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no insert statistics for %s", pastEvents)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// another instance holding the maintenance lock: nothing is done
	other := getConn(t, u)
	defer other.Close(ctx)
	var got bool
	if err := other.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", int64(0x726462_03)).Scan(&got); err != nil || !got {
		t.Fatalf("lock: %v %v", got, err)
	}
	if did, err := db.Maintain(ctx); err != nil || len(did) != 0 {
		t.Fatalf("while locked elsewhere: %v %v", did, err)
	}
	other.Exec(ctx, "SELECT pg_advisory_unlock($1)", int64(0x726462_03))

	did, err := db.Maintain(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("vacuumed %v", did)
	if !slices.Contains(did, pastEvents) || !slices.Contains(did, "report_data_"+past.Format("20060102")) {
		t.Errorf("closed day's partitions not vacuumed: %v", did)
	}
	if !slices.Contains(did, "reports_"+past.Format("20060102")) {
		t.Errorf("closed day's reports not vacuumed: %v", did)
	}
	for _, name := range did {
		if strings.HasSuffix(name, now.Format("20060102")) {
			t.Errorf("today's partition %s vacuumed", name)
		}
	}
	// the keys of the ended day's reports are archived, today's are not
	var archivedPast, archivedToday int
	if err := conn.QueryRow(ctx, `SELECT count(*) FILTER (WHERE (id >> 32) < $1), count(*) FILTER (WHERE (id >> 32) >= $1)
		FROM report_keys_archive`, now.UnixMilli()/86_400_000+100000).Scan(&archivedPast, &archivedToday); err != nil {
		t.Fatal(err)
	}
	if archivedPast != 6 || archivedToday != 0 {
		t.Errorf("archived keys: %d of ended days, %d of today; want 6 (three reports' two keys), 0", archivedPast, archivedToday)
	}
	if !slices.Contains(did, "report_keys_archive (6 keys archived)") {
		t.Errorf("maintenance did not say it archived keys: %v", did)
	}
	var allVisible, pages int
	if err := conn.QueryRow(ctx, "SELECT relallvisible, relpages FROM pg_class WHERE relname = $1", pastEvents).Scan(&allVisible, &pages); err != nil {
		t.Fatal(err)
	}
	if pages == 0 || allVisible != pages {
		t.Errorf("%s: %d of %d pages all-visible after maintenance", pastEvents, allVisible, pages)
	}
	var todayVacuumed bool
	if err := conn.QueryRow(ctx, "SELECT last_vacuum IS NOT NULL FROM pg_stat_user_tables WHERE relname = $1", todayEvents).Scan(&todayVacuumed); err != nil {
		t.Fatal(err)
	}
	if todayVacuumed {
		t.Errorf("%s was vacuumed", todayEvents)
	}
	// nothing changed since: the closed day is not vacuumed again
	did, err = db.Maintain(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(did, pastEvents) {
		t.Errorf("%s vacuumed again without changes: %v", pastEvents, did)
	}
}

// TestMaintainShrinksLatestReports: when latest_reports has grown to
// several times what its rows take (updates that could not be pruned in
// place while an old snapshot was open), maintenance rewrites it to its
// compact size, and not again while it stays compact; it does not wait
// for the table's lock behind a reader.
func TestMaintainShrinksLatestReports(t *testing.T) {
	ctx := context.Background()
	u, db, h := newServer(t)
	now := time.Now().UTC().Add(-time.Hour)
	for i := 0; i < 40; i++ {
		cn := fmt.Sprintf("n%02d", i)
		submit(t, h, cn, reportBody(cn, now.UnixMilli()+int64(i)))
	}
	conn := getConn(t, u)
	defer conn.Close(ctx)
	size := func() int64 {
		t.Helper()
		var n int64
		if err := conn.QueryRow(ctx, "SELECT pg_relation_size('latest_reports')").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if did, err := db.Maintain(ctx); err != nil || slices.Contains(did, "latest_reports (rewritten)") {
		t.Fatalf("compact table rewritten: %v %v", did, err)
	}
	compact := size()

	// an open snapshot keeps every old version: the updates leave their pages
	old := getConn(t, u)
	defer old.Close(ctx)
	if _, err := old.Exec(ctx, "BEGIN ISOLATION LEVEL REPEATABLE READ"); err != nil {
		t.Fatal(err)
	}
	if _, err := old.Exec(ctx, "SELECT count(*) FROM certnames"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 30; i++ {
		if _, err := conn.Exec(ctx, "UPDATE latest_reports SET ev_total = ev_total"); err != nil {
			t.Fatal(err)
		}
	}
	bloated := size()
	if bloated < 4*compact {
		t.Fatalf("latest_reports did not grow: %d -> %d bytes", compact, bloated)
	}
	// the snapshot also holds a lock on the table now: no rewrite, no error
	if _, err := old.Exec(ctx, "SELECT count(*) FROM latest_reports"); err != nil {
		t.Fatal(err)
	}
	// the statistics the estimate of its compact size reads (maintenance
	// keeps them; here they must not wait for the asynchronous counters)
	if _, err := conn.Exec(ctx, "ANALYZE latest_reports"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if did, err := db.Maintain(ctx); err != nil || slices.Contains(did, "latest_reports (rewritten)") {
		t.Fatalf("rewritten under a reader's lock: %v %v", did, err)
	}
	t.Logf("gave up on the lock after %s", time.Since(start).Round(time.Millisecond))
	if _, err := old.Exec(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	did, err := db.Maintain(ctx)
	if err != nil || !slices.Contains(did, "latest_reports (rewritten)") {
		t.Fatalf("bloated latest_reports (%d bytes, %d compact) not rewritten: %v %v", bloated, compact, did, err)
	}
	if got := size(); got > 2*compact {
		t.Fatalf("after the rewrite: %d bytes (compact %d, bloated %d)", got, compact, bloated)
	}
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM latest_reports").Scan(&n); err != nil || n != 40 {
		t.Fatalf("rows after the rewrite: %d %v", n, err)
	}
	if did, err := db.Maintain(ctx); err != nil || slices.Contains(did, "latest_reports (rewritten)") {
		t.Fatalf("rewritten twice: %v %v", did, err)
	}
}

// TestShrinkAfterLoad: after a bulk load, the rollup tables that deltas
// bloated (rows deleted by compaction, their space freed but kept) and a
// bloated certnames are rewritten to their compact size with their rows
// intact (certnames at its fill factor of 50); compact tables are left
// alone.
func TestShrinkAfterLoad(t *testing.T) {
	ctx := context.Background()
	u, db, h := newServer(t)
	conn := getConn(t, u)
	defer conn.Close(ctx)
	// deltas that compaction will merge away (200,000 rows of one bucket
	// summing to zero), in the table's first pages, then the reports'
	if _, err := conn.Exec(ctx, `INSERT INTO event_rollup (width, bucket, status, resource_type, environment, n)
		SELECT 300000, 0, 'success', 'File', 'e' || (g / 2), CASE WHEN g % 2 = 0 THEN 1 ELSE -1 END
		FROM generate_series(0, 199999) g`); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Add(-time.Hour)
	for i := 0; i < 20; i++ {
		cn := fmt.Sprintf("n%02d", i)
		submit(t, h, cn, reportBody(cn, now.UnixMilli()+int64(i)))
	}
	sum := func() (n int64) {
		t.Helper()
		if err := conn.QueryRow(ctx, "SELECT coalesce(sum(n), 0) FROM event_rollup").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	size := func(table string) (n int64) {
		t.Helper()
		if err := conn.QueryRow(ctx, "SELECT pg_relation_size($1::regclass)", table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	want := sum()
	if want == 0 {
		t.Fatal("no events counted")
	}
	// certnames bloated as a bulk load leaves it: versions of its rows
	// that no one sees any more, their space kept
	if _, err := conn.Exec(ctx, `INSERT INTO certnames (certname) SELECT 'gone' || g FROM generate_series(1, 100000) g`); err != nil {
		t.Fatal(err)
	}
	// a row after them, so that VACUUM cannot cut the freed pages off
	if _, err := conn.Exec(ctx, `INSERT INTO certnames (certname) VALUES ('last.example.com')`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `DELETE FROM certnames WHERE certname LIKE 'gone%'`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "VACUUM certnames"); err != nil {
		t.Fatal(err)
	}
	bloatedNodes := size("certnames")
	if _, err := db.CompactRollups(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CompactRollups(ctx); err != nil {
		t.Fatal(err)
	}
	// vacuumed as compaction leaves them, never analyzed: no statistics
	if _, err := conn.Exec(ctx, "VACUUM event_rollup, report_rollup, latest_reports"); err != nil {
		t.Fatal(err)
	}
	bloated, reports := size("event_rollup"), size("report_rollup")
	did, err := db.ShrinkAfterLoad(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(did, "event_rollup") || !slices.Contains(did, "certnames") || slices.Contains(did, "report_rollup") {
		t.Fatalf("rewritten: %v (event_rollup %d bytes, certnames %d)", did, bloated, bloatedNodes)
	}
	if got := size("certnames"); got*10 > bloatedNodes {
		t.Fatalf("certnames %d bytes after the rewrite, %d before", got, bloatedNodes)
	}
	var nodes int
	var fill []string
	if err := conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM certnames WHERE latest_report_id IS NOT NULL),
		(SELECT reloptions FROM pg_class WHERE oid = 'certnames'::regclass)`).Scan(&nodes, &fill); err != nil {
		t.Fatal(err)
	}
	if nodes != 20 || !slices.Contains(fill, "fillfactor=50") {
		t.Fatalf("after the rewrite: %d nodes with a latest report (want 20), certnames options %v", nodes, fill)
	}
	if got := size("event_rollup"); got*10 > bloated {
		t.Fatalf("event_rollup %d bytes after the rewrite, %d before", got, bloated)
	}
	if got := size("report_rollup"); got != reports {
		t.Fatalf("report_rollup changed size: %d -> %d", reports, got)
	}
	if got := sum(); got != want {
		t.Fatalf("events counted after the rewrite: %d, want %d", got, want)
	}
	if did, err := db.ShrinkAfterLoad(ctx); err != nil || len(did) != 0 {
		t.Fatalf("rewritten again: %v %v", did, err)
	}
}
