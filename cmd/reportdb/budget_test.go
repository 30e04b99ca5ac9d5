package main

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"reportdb/internal/config"
	"reportdb/internal/pgtest"
)

// TestQueryTimeoutCancelsPostgresWork: a query past --query-timeout gets
// 503 and its statement is cancelled in PostgreSQL, not left running after
// the HTTP answer. The query is held by a lock the test takes, so without
// the cancellation it would stay in pg_stat_activity.
func TestQueryTimeoutCancelsPostgresWork(t *testing.T) {
	heldQueryCancelled(t, 500*time.Millisecond, "/pdb/query/v4/reports",
		"The query was cancelled because it ran longer than the query timeout")
}

// TestTimeoutParameterCancelsPostgresWork: PuppetDB 8's timeout parameter
// (OpenVoxDB's src/puppetlabs/puppetdb/http/query.clj, parse-timeout)
// ends a query well before --query-timeout, the same way.
func TestTimeoutParameterCancelsPostgresWork(t *testing.T) {
	heldQueryCancelled(t, time.Minute, "/pdb/query/v4/reports?timeout=0.5",
		"The query was cancelled because it ran longer than its timeout parameter (0.5 seconds)")
}

// heldQueryCancelled runs target, held by a lock, on a server with
// queryTimeout: it must be answered 503 with want within 5 s, and its
// statement be gone from pg_stat_activity shortly after.
func heldQueryCancelled(t *testing.T, queryTimeout time.Duration, target, want string) {
	cfg := config.Defaults()
	cfg.Listen = "127.0.0.1:0"
	cfg.DataDir = t.TempDir()
	cfg.Database = pgtest.NewDatabase(t)
	cfg.QueryTimeout = queryTimeout
	base := "http://" + startInProcess(t, cfg).HTTP
	body, cn := corpusReport(t, 0)
	if status, msg, err := submit(http.DefaultClient, base, body, cn); err != nil || status != 200 {
		t.Fatalf("submission: %d %q %v", status, msg, err)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, cfg.Database)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "LOCK TABLE reports IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	// a second connection observes (pg_stat_activity is a snapshot per
	// transaction)
	obs, err := pgx.Connect(ctx, cfg.Database)
	if err != nil {
		t.Fatal(err)
	}
	defer obs.Close(ctx)
	waiting := func() int {
		var n int
		err := obs.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
			AND application_name = 'reportdb' AND state = 'active' AND wait_event_type = 'Lock'`).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	type answer struct {
		code int
		msg  string
	}
	done := make(chan answer, 1)
	start := time.Now()
	go func() {
		resp, err := http.Get(base + target)
		if err != nil {
			done <- answer{0, err.Error()}
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		done <- answer{resp.StatusCode, string(b)}
	}()
	// the query is seen waiting on the lock (the observation works)...
	seen := false
	for !seen && time.Since(start) < 400*time.Millisecond {
		seen = waiting() > 0
		time.Sleep(20 * time.Millisecond)
	}
	if !seen {
		t.Fatal("the held query never showed in pg_stat_activity")
	}
	a := <-done
	if a.code != 503 || a.msg != want {
		t.Fatalf("query held past the timeout: %d %q", a.code, a.msg)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("answered after %v", d)
	}
	// ...and gone once the timeout answered
	deadline := time.Now().Add(3 * time.Second)
	for waiting() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the timed-out query still runs in PostgreSQL %v after its answer", time.Since(start))
		}
		time.Sleep(50 * time.Millisecond)
	}
}
