package main

import (
	"context"
	"fmt"
	"log/slog"

	"reportdb/engine"
	"reportdb/httpapi"
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

// openServeBackend is openBackend for serve: PostgreSQL may be down at
// start-up (see postgres.Lazy).
func openServeBackend(ctx context.Context, cfg *serveConfig, log *slog.Logger) (engine.Backend, string, error) {
	if cfg.Database != "" {
		if err := checkDatabaseURL(cfg.Database); err != nil {
			return nil, "", err
		}
		for _, u := range cfg.ReadDatabases {
			if err := checkReadDatabaseURL(u); err != nil {
				return nil, "", err
			}
		}
		db, err := postgres.OpenLazily(ctx, cfg.Database, postgres.LazyOptions{
			Options: postgres.Options{MaxConns: int32(poolSize(cfg)), ReadURLs: cfg.ReadDatabases,
				MaxReplicaLag: cfg.MaxReplicaLag},
			Log:       log,
			Permanent: permanentDatabaseError,
			Describe:  func(err error) error { return databaseError(cfg.Database, err) },
		})
		if err != nil {
			return nil, "", err
		}
		return db, "postgres", nil
	}
	return openBackend(ctx, cfg.Database, cfg.DataDir, cfg.MaxConnections, cfg.SQLiteQueryMemory)
}

// poolSize is the PostgreSQL pool size: max-connections, or automatically
// room for every query slot plus the group-commit writers and a spare
// (status, retention), so that acknowledgements never wait behind queries
// for a connection.
func poolSize(cfg *serveConfig) int {
	if cfg.MaxConnections > 0 {
		return cfg.MaxConnections
	}
	writers := cfg.Writers
	if writers <= 0 {
		writers = postgres.Writers()
	}
	return max(8, querySlots(cfg)+httpapi.SmallQuerySlots+writers+2)
}
