package sqlite_test

import (
	"testing"

	"reportdb/engine"
	"reportdb/sqlite"
	"reportdb/storetest"
)

func open(t *testing.T) engine.Backend {
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
