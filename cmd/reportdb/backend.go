package main

import (
	"context"
	"fmt"

	"reportdb/postgres"
	"reportdb/sqlite"
	"reportdb/store"
)

// openBackend opens PostgreSQL when a database URL is configured, the
// embedded SQLite store in the data directory otherwise. Either way the
// schema is migrated first.
func openBackend(ctx context.Context, databaseURL, dataDir string, maxConns int) (store.Backend, string, error) {
	if databaseURL != "" {
		db, err := postgres.Open(ctx, databaseURL, postgres.Options{MaxConns: int32(maxConns)})
		if err != nil {
			return nil, "", fmt.Errorf("open PostgreSQL: %w", err)
		}
		return db, "postgres", nil
	}
	db, err := sqlite.Open(dataDir)
	if err != nil {
		return nil, "", fmt.Errorf("open embedded database in %s: %w", dataDir, err)
	}
	return db, "sqlite", nil
}
