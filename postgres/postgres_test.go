package postgres_test

import (
	"context"
	"testing"

	"reportdb/engine"
	"reportdb/internal/pgtest"
	"reportdb/postgres"
	"reportdb/storetest"
)

func open(t *testing.T) engine.Backend {
	db, err := postgres.Open(context.Background(), pgtest.NewDatabase(t), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestContract(t *testing.T) {
	storetest.Run(t, open)
}
