package sqlite

import (
	"context"
	"database/sql"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"reportdb"
	"reportdb/internal/testcorpus"
	"reportdb/jsonv"
	"reportdb/store"
	"reportdb/wire"
)

// TestStoreReportsBusyIsTransient: while another process holds the
// database's write lock past the busy timeout, storing fails as a
// transient failure (503 to retry, or the spool), not as an internal one;
// once the lock is free the same reports are stored.
func TestStoreReportsBusyIsTransient(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	other, err := sql.Open("sqlite", "file:"+url.PathEscape(filepath.Join(dir, FileName)))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	other.SetMaxOpenConns(1)
	if _, err := other.Exec("BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}

	m, cdir := testcorpus.LoadManifest(t)
	v, err := jsonv.Parse(testcorpus.ReadFile(t, filepath.Join(cdir, m.Submissions[0].Wire8)))
	if err != nil {
		t.Fatal(err)
	}
	r, err := wire.Decode(8, v, time.Now().UnixMilli())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, _, err = db.StoreReports(ctx, []*reportdb.Report{r}) // waits the busy timeout
	if !store.IsTransient(err) || reportdb.ErrorCode(err) != reportdb.EUNAVAILABLE {
		t.Fatalf("storing beside another writer: %v (%s), want a transient 503", err, reportdb.ErrorCode(err))
	}
	if _, err := other.Exec("ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if o, _, err := db.StoreReports(ctx, []*reportdb.Report{r}); err != nil || o[0] != reportdb.Stored {
		t.Fatalf("once the lock is free: %v %v", o, err)
	}
}
