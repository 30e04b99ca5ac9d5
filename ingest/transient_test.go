package ingest

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"path/filepath"
	"sync/atomic"
	"testing"

	"reportdb"
	"reportdb/spool"
	"reportdb/sqlite"
	"reportdb/store"
)

// sqliteBusyError is the error SQLite really gives a writer while another
// connection holds the database's write lock (with no busy timeout, so
// that the test does not wait for the store's).
func sqliteBusyError(t *testing.T, dir string) error {
	t.Helper()
	open := func() *sql.DB {
		db, err := sql.Open("sqlite", "file:"+url.PathEscape(filepath.Join(dir, sqlite.FileName))+"?_pragma=busy_timeout(0)")
		if err != nil {
			t.Fatal(err)
		}
		db.SetMaxOpenConns(1)
		t.Cleanup(func() { db.Close() })
		return db
	}
	holder, other := open(), open()
	if _, err := holder.Exec("BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	_, err := other.Exec("BEGIN IMMEDIATE")
	if _, rerr := holder.Exec("ROLLBACK"); rerr != nil {
		t.Fatal(rerr)
	}
	if err == nil {
		t.Fatal("a second writer took the write lock")
	}
	return err
}

// busyOnce is a SQLite store whose next batches fail as when another
// process holds the write lock past the busy timeout (busy of them).
type busyOnce struct {
	*sqlite.DB
	err  error
	busy atomic.Int32
}

func (b *busyOnce) StoreReports(ctx context.Context, rs []*reportdb.Report) ([]reportdb.Outcome, []error, error) {
	if b.busy.Add(-1) >= 0 {
		return nil, nil, b.err
	}
	return b.DB.StoreReports(ctx, rs)
}

// A report that SQLite cannot store because its write lock is held
// elsewhere is answered with a 503 to retry without a spool, and spooled
// (acknowledged, then delivered) with one; never a 500.
func TestSQLiteBusyIsTransient(t *testing.T) {
	dir := t.TempDir()
	db, err := sqlite.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// what the store makes of SQLite's busy error (sqlite's
	// TestStoreReportsBusyIsTransient)
	busy := store.Transient(sqliteBusyError(t, dir), "the database is locked by another writer")
	if e := storeError(busy); !store.IsTransient(e) || reportdb.ErrorCode(e) != reportdb.EUNAVAILABLE {
		t.Fatalf("%q: %v (%s), want a transient 503", busy, e, reportdb.ErrorCode(e))
	}
	if e := storeError(errors.New("NOT NULL constraint failed: reports.certname")); store.IsTransient(e) {
		t.Fatalf("a constraint violation is transient: %v", e)
	}

	b := &busyOnce{DB: db, err: busy}
	reports := testReports(t, 2)
	b.busy.Store(1)
	direct := NewCommitter(b, 8)
	defer direct.Close()
	_, err = direct.Submit(context.Background(), reports[0])
	var re *reportdb.Error
	if !errors.As(err, &re) || re.Code != reportdb.EUNAVAILABLE || re.RetryAfter <= 0 {
		t.Fatalf("without a spool: %v, want a 503 with Retry-After", err)
	}

	sp, err := spool.Open(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	spooled := NewCommitter(b, 8)
	spooled.UseSpool(sp, nil)
	defer spooled.Close()
	b.busy.Store(1)
	if o, err := spooled.Submit(context.Background(), reports[1]); err != nil || o != reportdb.Queued {
		t.Fatalf("with a spool: %v %v, want queued", o, err)
	}
	waitDrained(t, spooled)
	if n := countReports(t, db); n != 1 {
		t.Fatalf("%d reports stored, want 1", n)
	}
}

// A transient failure from the backend (store.Transient) is spooled when
// there is a spool, whatever the database's health check says: the
// backend retried already, and the report is not at fault.
func TestTransientFailureSpooled(t *testing.T) {
	f := openFlaky(t)
	sp, err := spool.Open(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	c := NewCommitter(f, 8)
	c.UseSpool(sp, nil)
	defer c.Close()
	if got := c.afterFailure(store.Transient(errors.New("ERROR: deadlock detected (SQLSTATE 40P01)"), "deadlock detected")); got != spoolIt {
		t.Fatalf("a transient failure: %v, want spooled", got)
	}
	if got := c.afterFailure(&reportdb.Error{Code: reportdb.EINVALID, Message: "bad"}); got != returnIt {
		t.Fatalf("a refused report: %v, want returned", got)
	}
}
