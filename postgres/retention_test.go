package postgres_test

import (
	"context"
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"reportdb/postgres"
)

// TestRetentionFinishesInterruptedDrop: retention detaches a day
// partition, then subtracts its rows from the rollups and drops it in one
// transaction. A deadlock with ingest in that transaction is retried in
// place; any other failure (a lost connection, shutdown) leaves the day
// table detached and not dropped, its rows invisible but still counted
// by the rollups, and the next run finishes it, whatever its cutoff.
// After each run the rollups count exactly the rows that are left.
func TestRetentionFinishesInterruptedDrop(t *testing.T) {
	u, db, h := newServer(t)
	ctx := context.Background()
	day := int64(24 * time.Hour / time.Millisecond)
	base := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	for d := int64(0); d < 4; d++ {
		for _, cn := range []string{"a", "b", "c"} {
			submit(t, h, cn, reportBody(cn, base+d*day+int64(cn[0]-'a')*3600000+1000))
		}
	}
	conn := getConn(t, u)
	defer conn.Close(ctx)
	count := func(sql string) int64 {
		t.Helper()
		var n int64
		if err := conn.QueryRow(ctx, sql).Scan(&n); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return n
	}
	// the rollups' day buckets against the rows, and the answer of a
	// count the rollups serve against the rows
	exact := func(stage string, reports int64) {
		t.Helper()
		if n := count(`SELECT count(*) FROM reports`); n != reports {
			t.Errorf("%s: %d reports, want %d", stage, n, reports)
		}
		for _, c := range [][2]string{
			{`SELECT count(*) FROM reports`, `SELECT COALESCE(sum(n), 0) FROM report_rollup WHERE width = 86400000`},
			{`SELECT count(*) FROM reports`, `SELECT COALESCE(sum(n), 0) FROM report_type_rollup WHERE width = 86400000`},
			{`SELECT count(*) FROM resource_events`, `SELECT COALESCE(sum(n), 0) FROM event_rollup WHERE width = 86400000`},
		} {
			if rows, rolled := count(c[0]), count(c[1]); rows != rolled {
				t.Errorf("%s: %s = %d but the rollup counts %d", stage, c[0], rows, rolled)
			}
		}
		got := getRows(t, h, "/pdb/query/v4/reports", url.Values{"query": {`["extract",[["function","count"]]]`}})
		if len(got) != 1 || got[0]["count"] != float64(reports) {
			t.Errorf("%s: count of reports answered %v, want %d", stage, got, reports)
		}
	}
	standalone := func(table string) bool {
		return count(`SELECT count(*) FROM pg_class WHERE relname = '`+table+`' AND NOT relispartition`) == 1
	}
	exists := func(table string) bool {
		return count(`SELECT count(*) FROM pg_class WHERE relname = '`+table+`'`) == 1
	}
	exact("before retention", 12)
	t.Cleanup(func() { postgres.SetBeforeDropCommit(nil) })

	// a deadlock in the drop transaction of the first day's events: run
	// again in place, the run succeeds
	deadlocks := 0
	postgres.SetBeforeDropCommit(func(table string) error {
		if table == "resource_events_20250301" && deadlocks == 0 {
			deadlocks++
			return &pgconn.PgError{Code: "40P01", Message: "deadlock detected"}
		}
		return nil
	})
	if n, err := db.DeleteReportsBefore(ctx, base+day); err != nil || n != 3 {
		t.Fatalf("retention after a deadlock: %d reports deleted, %v; want 3", n, err)
	}
	if deadlocks != 1 {
		t.Fatalf("the hook failed %d drops, want 1", deadlocks)
	}
	if exists("resource_events_20250301") || exists("reports_20250301") {
		t.Error("the first day's tables are left")
	}
	exact("after a deadlock", 9)

	// the second day's reports table fails to drop: the run fails with
	// it detached, and the rollups still count its reports
	lost := errors.New("connection lost")
	postgres.SetBeforeDropCommit(func(table string) error {
		if table == "reports_20250302" {
			return lost
		}
		return nil
	})
	if _, err := db.DeleteReportsBefore(ctx, base+2*day); !errors.Is(err, lost) {
		t.Fatalf("retention with a failing drop: %v, want the failure", err)
	}
	if !standalone("reports_20250302") || exists("resource_events_20250302") {
		t.Fatal("the failed run did not leave the second day's reports detached and its events dropped")
	}
	for _, rollup := range []string{"report_rollup", "report_type_rollup"} {
		if rows, rolled := count(`SELECT count(*) FROM reports`), count(`SELECT sum(n) FROM `+rollup+` WHERE width = 86400000`); rows != 6 || rolled != 9 {
			t.Fatalf("after the failed run: %d reports, %s counts %d; want 6 and 9", rows, rollup, rolled)
		}
	}

	// the next run, with a cutoff that no longer covers that day,
	// finishes it
	postgres.SetBeforeDropCommit(nil)
	if n, err := db.DeleteReportsBefore(ctx, base+day); err != nil || n != 3 {
		t.Fatalf("retention after the failed run: %d reports deleted, %v; want the detached day's 3", n, err)
	}
	if exists("reports_20250302") {
		t.Error("the detached day's reports table is left")
	}
	exact("after the interrupted drop", 6)
	// and reports of that day can be stored again
	submit(t, h, "late", reportBody("late", base+day+5000))
	exact("after a late report", 7)
}
