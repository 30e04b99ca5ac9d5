package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"reportdb"
	"reportdb/ingest"
	"reportdb/internal/pgtest"
	"reportdb/jsonv"
	"reportdb/postgres"
	"reportdb/spool"
	"reportdb/store"
	"reportdb/wire"
)

// decodedReport is reportBody(certname, ts) decoded, as ingest hands it to
// a backend.
func decodedReport(t *testing.T, certname string, ts int64) *reportdb.Report {
	t.Helper()
	v, err := jsonv.Parse(reportBody(certname, ts))
	if err != nil {
		t.Fatal(err)
	}
	r, err := wire.Decode(8, v, time.Now().UnixMilli())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// withParam is the database URL u with a session setting added (pgx passes
// unknown URL parameters to the server as settings).
func withParam(u, name, value string) string {
	sep := "?"
	if strings.Contains(u, "?") {
		sep = "&"
	}
	return u + sep + name + "=" + value
}

// TestTransientClassification: the failures PostgreSQL really produces
// when a statement meets others (a deadlock, a lock not granted within
// lock_timeout), when its connection is killed and when the server cannot
// be reached are transient; an error of the statement itself, and the
// caller giving up, are not.
func TestTransientClassification(t *testing.T) {
	ctx := context.Background()
	u := pgtest.NewDatabase(t)
	a, b := getConn(t, u), getConn(t, u)
	defer a.Close(ctx)
	defer b.Close(ctx)
	mustExec(t, a, "CREATE TABLE x (id int PRIMARY KEY)", "CREATE TABLE y (id int PRIMARY KEY)",
		"INSERT INTO x VALUES (1)", "INSERT INTO y VALUES (1)")

	transient := func(what string, err error, want bool) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s: no error", what)
		}
		if reason, got := postgres.TransientReason(err); got != want {
			t.Errorf("%s (%v): transient %v (%q), want %v", what, err, got, reason, want)
		}
	}

	// a deadlock: each transaction holds the row the other one wants
	ta, err := a.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := b.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mustTx := func(tx pgx.Tx, sql string) {
		if _, err := tx.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	mustTx(ta, "UPDATE x SET id = 1")
	mustTx(tb, "UPDATE y SET id = 1")
	type result struct {
		tx  pgx.Tx
		err error
	}
	done := make(chan result, 2)
	go func() { _, err := ta.Exec(ctx, "UPDATE y SET id = 1"); done <- result{ta, err} }()
	waitForLockWaiter(t, u)
	go func() { _, err := tb.Exec(ctx, "UPDATE x SET id = 1"); done <- result{tb, err} }()
	var deadlock error
	for i := 0; i < 2; i++ {
		r := <-done
		if r.err != nil {
			deadlock = r.err
		}
		// the survivor goes on once the victim's transaction ends
		r.tx.Rollback(ctx)
	}
	transient("deadlock", deadlock, true)

	// a lock not granted within lock_timeout
	mustExec(t, a, "BEGIN", "LOCK TABLE x IN ACCESS EXCLUSIVE MODE")
	mustExec(t, b, "SET lock_timeout = '50ms'")
	_, err = b.Exec(ctx, "SELECT * FROM x")
	transient("lock timeout", err, true)
	mustExec(t, a, "ROLLBACK")
	mustExec(t, b, "RESET lock_timeout")

	// the statement's own fault
	_, err = b.Exec(ctx, "INSERT INTO x VALUES (1)")
	transient("unique violation", err, false)
	_, err = b.Exec(ctx, "SELECT 1/0")
	transient("division by zero", err, false)

	// the connection killed by the server (an administrator, a restart)
	var pid int
	if err := b.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	mustExec(t, a, fmt.Sprintf("SELECT pg_terminate_backend(%d)", pid))
	_, err = b.Exec(ctx, "SELECT 1")
	transient("terminated connection", err, true)

	// a server that cannot be reached
	_, err = pgx.Connect(ctx, "postgres://postgres@127.0.0.1:1/x?sslmode=disable&connect_timeout=2")
	transient("connection refused", err, true)

	// the caller giving up
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = a.Exec(cctx, "SELECT 1")
	transient("cancelled context", err, false)

	// what a submitter of a report gets for a transient failure
	e := store.Transient(deadlock, "deadlock detected")
	var re *reportdb.Error
	if !errors.As(e, &re) || re.Code != reportdb.EUNAVAILABLE || re.RetryAfter <= 0 || !store.IsTransient(e) ||
		!strings.Contains(e.Error(), "deadlock detected") {
		t.Fatalf("store.Transient: %#v", e)
	}
}

// waitForLockWaiter waits until a session of the database at u waits for
// a lock.
func waitForLockWaiter(t *testing.T, u string) {
	t.Helper()
	c := getConn(t, u)
	defer c.Close(context.Background())
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		var n int
		if err := c.QueryRow(context.Background(), `SELECT count(*) FROM pg_locks l
			JOIN pg_stat_activity a ON a.pid = l.pid WHERE NOT l.granted AND a.datname = current_database()`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("no session waits for a lock")
}

// TestStoreRetriesTransientFailures: a batch that fails because a lock it
// needs is held elsewhere (here past lock_timeout) is run again, and
// stored once the lock is released; a batch that keeps failing stores
// nothing and fails with store.Transient (a 503 to retry), never with an
// error of its reports.
func TestStoreRetriesTransientFailures(t *testing.T) {
	ctx := context.Background()
	u := pgtest.NewDatabase(t)
	db := openURL(t, withParam(u, "lock_timeout", "100ms"))
	holder := getConn(t, u)
	defer holder.Close(ctx)
	now := time.Now().UnixMilli()

	// the lock is released after the first failure: the retry stores
	var mu sync.Mutex
	var retried []error
	defer postgres.SetOnStoreRetry(nil)
	postgres.SetOnStoreRetry(func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if len(retried) == 0 {
			mustExec(t, holder, "ROLLBACK")
		}
		retried = append(retried, err)
	})
	mustExec(t, holder, "BEGIN", "LOCK TABLE certnames IN ACCESS EXCLUSIVE MODE")
	reports := []*reportdb.Report{decodedReport(t, "a.example", now), decodedReport(t, "b.example", now+1)}
	outcomes, errs, err := db.StoreReports(ctx, reports)
	if err != nil {
		t.Fatalf("batch failed: %v", err)
	}
	for i := range reports {
		if errs[i] != nil || outcomes[i] != reportdb.Stored {
			t.Fatalf("report %d: %v %v", i, outcomes[i], errs[i])
		}
	}
	mu.Lock()
	if len(retried) == 0 {
		t.Fatal("the batch was not retried")
	}
	if _, ok := postgres.TransientReason(retried[0]); !ok {
		t.Fatalf("retried for %v", retried[0])
	}
	mu.Unlock()

	// the lock held throughout: nothing stored, a transient failure
	postgres.SetOnStoreRetry(nil)
	mustExec(t, holder, "BEGIN", "LOCK TABLE certnames IN ACCESS EXCLUSIVE MODE")
	late := []*reportdb.Report{decodedReport(t, "c.example", now+2), decodedReport(t, "d.example", now+3)}
	_, _, err = db.StoreReports(ctx, late)
	var re *reportdb.Error
	if !store.IsTransient(err) || !errors.As(err, &re) || re.Code != reportdb.EUNAVAILABLE || re.RetryAfter <= 0 {
		t.Fatalf("batch under a lock held throughout: err %v, want a transient 503", err)
	}
	mustExec(t, holder, "ROLLBACK")
	if n := countReports(t, db); n != 2 {
		t.Fatalf("%d reports stored, want 2", n)
	}
}

// TestTransientFailureAnsweredOrSpooled: a report whose storing keeps
// failing for a transient reason gets a 503 with Retry-After without a
// spool, which PuppetDB's clients retry, and is acknowledged from the
// spool with one (and stored once the database takes it); never a 500.
func TestTransientFailureAnsweredOrSpooled(t *testing.T) {
	ctx := context.Background()
	u := pgtest.NewDatabase(t)
	db := openURL(t, withParam(u, "lock_timeout", "100ms"))
	holder := getConn(t, u)
	defer holder.Close(ctx)
	now := time.Now().UnixMilli()
	mustExec(t, holder, "BEGIN", "LOCK TABLE certnames IN ACCESS EXCLUSIVE MODE")

	direct := ingest.NewCommitter(db, 8)
	defer direct.Close()
	_, err := direct.Submit(ctx, decodedReport(t, "a.example", now))
	var re *reportdb.Error
	if !errors.As(err, &re) || re.Code != reportdb.EUNAVAILABLE || re.RetryAfter <= 0 {
		t.Fatalf("without a spool: %v, want a 503 with Retry-After", err)
	}

	sp, err := spool.Open(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	spooled := ingest.NewCommitter(db, 8)
	spooled.UseSpool(sp, nil)
	defer spooled.Close()
	r := decodedReport(t, "b.example", now+1)
	if o, err := spooled.Submit(ctx, r); err != nil || o != reportdb.Queued {
		t.Fatalf("with a spool: %v %v, want queued", o, err)
	}
	mustExec(t, holder, "ROLLBACK")
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if !spooled.AwaitQueued(wctx, r.Hash) {
		t.Fatal("the spooled report was not delivered")
	}
	if n := countReports(t, db); n != 1 {
		t.Fatalf("%d reports stored, want 1", n)
	}
}

func countReports(t *testing.T, db *postgres.DB) int64 {
	t.Helper()
	rows, err := db.Query(context.Background(), store.Statement{SQL: "SELECT count(*) FROM reports"})
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var n any
	rows.Next()
	if err := rows.Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n.(int64)
}
