package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

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

// parseDuration accepts Go durations plus days ("14d", "1d12h"); "0"
// means zero.
func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "0" || s == "" {
		return 0, nil
	}
	var total time.Duration
	if i := strings.IndexByte(s, 'd'); i > 0 {
		days, err := strconv.ParseFloat(s[:i], 64)
		if err != nil {
			return 0, fmt.Errorf("invalid duration %q", s)
		}
		total = time.Duration(days * float64(24*time.Hour))
		s = s[i+1:]
		if s == "" {
			return total, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q (use e.g. 14d, 36h, 90m)", s)
	}
	return total + d, nil
}

// durationFlag is a flag.Value for parseDuration.
type durationFlag struct{ d *time.Duration }

func (f durationFlag) String() string {
	if f.d == nil {
		return ""
	}
	if *f.d%(24*time.Hour) == 0 && *f.d > 0 {
		return strconv.FormatInt(int64(*f.d/(24*time.Hour)), 10) + "d"
	}
	return f.d.String()
}

func (f durationFlag) Set(s string) error {
	d, err := parseDuration(s)
	if err != nil {
		return err
	}
	*f.d = d
	return nil
}
