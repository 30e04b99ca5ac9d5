package main

import (
	"context"
	"fmt"

	"reportdb/engine"
	"reportdb/postgres"
	"reportdb/sqlite"
)

// openBackend opens PostgreSQL when a database URL is configured, the
// embedded SQLite store in dataDir otherwise, whose queries get
// sqliteMemory bytes each (0: the default). Either way the schema is
// migrated first.
func openBackend(ctx context.Context, databaseURL, dataDir string, maxConns int, sqliteMemory int64) (engine.Backend, string, error) {
	if databaseURL != "" {
		if err := checkDatabaseURL(databaseURL); err != nil {
			return nil, "", err
		}
		db, err := postgres.Open(ctx, databaseURL, postgres.Options{MaxConns: int32(maxConns)})
		if err != nil {
			return nil, "", databaseError(databaseURL, err)
		}
		return db, "postgres", nil
	}
	db, err := sqlite.OpenOptions(dataDir, sqlite.Options{QueryMemory: sqliteMemory})
	if err != nil {
		return nil, "", fmt.Errorf("open embedded database in %s: %w", dataDir, err)
	}
	return db, "sqlite", nil
}
