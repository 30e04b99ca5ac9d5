package sqlite_test

import (
	"testing"

	"reportdb/sqlite"
	"reportdb/store"
	"reportdb/storetest"
)

func open(t *testing.T) store.Backend {
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
