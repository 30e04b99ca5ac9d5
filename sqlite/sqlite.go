// Package sqlite is the embedded storage backend: one SQLite database file
// (pure-Go driver modernc.org/sqlite, so the binary stays static) in WAL
// mode. Writes go through one connection (SQLite has a single writer);
// reads use a pool of read-only connections that see consistent snapshots
// while writes proceed.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"reportdb/query/sqlgen"
	"reportdb/store"
)

//go:embed migrations/*.sql
var migrations embed.FS

// FileName is the database file inside the data directory.
const FileName = "reportdb.sqlite"

// DB is the SQLite backend.
type DB struct {
	path   string
	writer *sql.DB
	reader *sql.DB
	mu     sync.Mutex // serialises writers (one SQLite writer at a time)
}

var _ store.Backend = (*DB)(nil)

// Open opens (creating if needed) the database in directory dir and applies
// pending migrations.
func Open(dir string) (*DB, error) {
	registerFunctions()
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	path := filepath.Join(dir, FileName)
	common := "_pragma=busy_timeout(10000)&_pragma=foreign_keys(ON)&_pragma=journal_mode(WAL)"
	writer, err := sql.Open("sqlite", "file:"+url.PathEscape(path)+"?"+common+
		"&_pragma=synchronous(FULL)&_txlock=immediate")
	if err != nil {
		return nil, err
	}
	writer.SetMaxOpenConns(1)
	writer.SetConnMaxIdleTime(0)
	db := &DB{path: path, writer: writer}
	if err := db.migrate(); err != nil {
		writer.Close()
		return nil, err
	}
	reader, err := sql.Open("sqlite", "file:"+url.PathEscape(path)+"?"+common+"&_pragma=query_only(1)")
	if err != nil {
		writer.Close()
		return nil, err
	}
	n := 2 * runtime.GOMAXPROCS(0)
	if n < 4 {
		n = 4
	}
	reader.SetMaxOpenConns(n)
	reader.SetMaxIdleConns(n)
	db.reader = reader
	return db, nil
}

// migrate applies the embedded migrations newer than PRAGMA user_version.
func (db *DB) migrate() error {
	var version int
	if err := db.writer.QueryRow("PRAGMA user_version").Scan(&version); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	entries, err := migrations.ReadDir("migrations")
	if err != nil {
		return err
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	for _, name := range names {
		n, err := strconv.Atoi(strings.SplitN(name, "_", 2)[0])
		if err != nil {
			return fmt.Errorf("migration %s: bad name", name)
		}
		if n <= version {
			continue
		}
		body, err := migrations.ReadFile("migrations/" + name)
		if err != nil {
			return err
		}
		tx, err := db.writer.Begin()
		if err != nil {
			return err
		}
		if _, err := tx.Exec(string(body)); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %s: %w", name, err)
		}
		if _, err := tx.Exec(fmt.Sprintf("PRAGMA user_version = %d", n)); err != nil {
			tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migration %s: %w", name, err)
		}
	}
	return nil
}

// Dialect implements store.Backend.
func (db *DB) Dialect() sqlgen.Dialect { return Dialect{} }

// Close implements store.Backend.
func (db *DB) Close() error {
	err1 := db.reader.Close()
	err2 := db.writer.Close()
	if err1 != nil {
		return err1
	}
	return err2
}

// Snapshot implements store.Backend.
func (db *DB) Snapshot(ctx context.Context, fn func(store.Querier) error) error {
	tx, err := db.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	return fn(querier{tx})
}

// Query implements store.Querier for a single statement.
func (db *DB) Query(ctx context.Context, s string, args []any) (store.Rows, error) {
	rows, err := db.reader.QueryContext(ctx, s, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rows}, nil
}

type querier struct{ tx *sql.Tx }

func (q querier) Query(ctx context.Context, s string, args []any) (store.Rows, error) {
	rows, err := q.tx.QueryContext(ctx, s, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rows}, nil
}

type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() { r.Rows.Close() }

func (r sqlRows) NumColumns() int {
	cols, _ := r.Rows.Columns()
	return len(cols)
}

// DeleteReportsBefore implements store.Backend.
func (db *DB) DeleteReportsBefore(ctx context.Context, cutoff int64) (int64, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `UPDATE certnames SET latest_report_id = NULL
		WHERE latest_report_id IN (SELECT id FROM reports WHERE producer_timestamp < ?)`, cutoff); err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM resource_events
		WHERE report_id IN (SELECT id FROM reports WHERE producer_timestamp < ?)`, cutoff); err != nil {
		return 0, err
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM reports WHERE producer_timestamp < ?`, cutoff)
	if err != nil {
		return 0, err
	}
	n, _ := res.RowsAffected()
	if _, err := tx.ExecContext(ctx, `DELETE FROM environments
		WHERE name NOT IN (SELECT DISTINCT environment FROM reports)`); err != nil {
		return 0, err
	}
	return n, tx.Commit()
}
