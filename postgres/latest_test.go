package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"reportdb/internal/pgtest"
	"reportdb/postgres"
	"reportdb/storetest"
)

// TestLatestReportsHOT: moving a node's latest report updates its row of
// latest_reports in place (a HOT update: no indexed column changes and
// the page has room), so the table does not grow with the reports stored
// (migration 0005); the same for a resource's row of resource_latest when
// its newest timestamp moves (migration 0008). An index on a column the
// update changes fails it (none is HOT).
func TestLatestRowsHOT(t *testing.T) {
	u, _, h := newServer(t)
	base := time.Now().UnixMilli() - 3_600_000
	const nodes, runs = 10, 8
	for r := 0; r < runs; r++ {
		for n := 0; n < nodes; n++ {
			cn := fmt.Sprintf("hot%02d.example.com", n)
			submit(t, h, cn, reportBody(cn, base+int64(r)*60_000))
		}
	}
	conn := getConn(t, u)
	defer conn.Close(context.Background())
	// statistics reach the cumulative views within a second or so; each
	// node's row of latest_reports and its one resource's row of
	// resource_latest (migration 0008) are updated by each newer run
	for _, table := range []string{"latest_reports", "resource_latest"} {
		var upd, hot int64
		deadline := time.Now().Add(20 * time.Second)
		for {
			if err := conn.QueryRow(context.Background(), `SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables
			WHERE relname = $1`, table).Scan(&upd, &hot); err != nil {
				t.Fatal(err)
			}
			if upd >= nodes*(runs-1) || time.Now().After(deadline) {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if upd < nodes*(runs-1) {
			t.Fatalf("%s: %d updates recorded, want %d", table, upd, nodes*(runs-1))
		}
		// An update is not HOT when its page is full of versions that a
		// concurrent snapshot still sees: a loaded machine makes some (60
		// of 70 were HOT once while a large import ran beside the tests).
		// An index on an updated column makes none HOT, so half tells.
		if hot*2 < upd {
			t.Errorf("%s: %d of %d updates were HOT, want at least half", table, hot, upd)
		}
	}
}

// TestCompactionVacuumsRollups: compaction vacuums the rollup tables it
// merged (at most once per RollupVacuumInterval), so that the rows each
// merge deletes do not pile up between hourly maintenance runs.
func TestCompactionVacuumsRollups(t *testing.T) {
	u := pgtest.NewDatabase(t)
	db, err := postgres.Open(context.Background(), u, postgres.Options{RollupVacuumInterval: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	h := storetest.NewServer(t, db)
	base := time.Now().UnixMilli() - 3_600_000
	for n := 0; n < 5; n++ {
		cn := fmt.Sprintf("vac%02d.example.com", n)
		submit(t, h, cn, reportBody(cn, base+int64(n)*60_000))
	}
	if merged, err := db.CompactRollups(context.Background()); err != nil || merged == 0 {
		t.Fatalf("compaction merged %d buckets, err %v", merged, err)
	}
	conn := getConn(t, u)
	defer conn.Close(context.Background())
	deadline := time.Now().Add(20 * time.Second)
	for {
		var vacuums int64
		if err := conn.QueryRow(context.Background(), `SELECT vacuum_count FROM pg_stat_user_tables
			WHERE relname = 'report_rollup'`).Scan(&vacuums); err != nil {
			t.Fatal(err)
		}
		if vacuums > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("report_rollup was not vacuumed after its buckets were merged")
		}
		time.Sleep(200 * time.Millisecond)
	}
}
