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

	"reportdb/schema"
	"reportdb/schema/dialect"
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

// Options tune the store.
type Options struct {
	// QueryMemory bounds the memory one query uses inside SQLite (which runs
	// in the reportdb process): the page cache of each reader connection,
	// which also bounds the in-memory part of sorts, GROUP BY and DISTINCT;
	// what does not fit spills to temporary files (temp_store=FILE). 0:
	// DefaultQueryMemory.
	QueryMemory int64
}

// DefaultQueryMemory is the default Options.QueryMemory (SQLite's own default
// page cache is 2 MB).
const DefaultQueryMemory = 8 << 20

// Open opens (creating if needed) the database in directory dir with the
// default options and applies pending migrations.
func Open(dir string) (*DB, error) { return OpenOptions(dir, Options{}) }

// OpenOptions is Open with options.
func OpenOptions(dir string, o Options) (*DB, error) {
	if o.QueryMemory <= 0 {
		o.QueryMemory = DefaultQueryMemory
	}
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
	// cache_size in KiB when negative
	budget := fmt.Sprintf("&_pragma=cache_size(-%d)&_pragma=temp_store(FILE)", max(o.QueryMemory>>10, 64))
	reader, err := sql.Open("sqlite", "file:"+url.PathEscape(path)+"?"+common+"&_pragma=query_only(1)"+budget)
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

// Dialect implements engine.Backend.
func (db *DB) Dialect() dialect.Dialect { return Dialect{} }

// Close implements store.Backend.
func (db *DB) Close() error {
	err1 := db.reader.Close()
	err2 := db.writer.Close()
	if err1 != nil {
		return err1
	}
	return err2
}

// Ping implements store.Backend.
func (db *DB) Ping(ctx context.Context) error { return db.reader.PingContext(ctx) }

// Snapshot implements store.Backend.
func (db *DB) Snapshot(ctx context.Context, fn func(store.Querier) error) error {
	conn, err := db.reader.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	w := watchConn(ctx, conn)
	defer w.release()
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return queryError(ctx, err)
	}
	defer tx.Rollback()
	return fn(querier{tx})
}

// Query implements store.Querier for a single statement.
func (db *DB) Query(ctx context.Context, st store.Statement) (store.Rows, error) {
	conn, err := db.reader.Conn(ctx)
	if err != nil {
		return nil, err
	}
	w := watchConn(ctx, conn)
	rows, err := conn.QueryContext(ctx, st.SQL, st.Args...)
	if err != nil {
		w.release()
		conn.Close()
		return nil, queryError(ctx, err)
	}
	// The connection goes back when the rows are closed, or when the
	// context ends if they never are (as database/sql then closes them).
	var once sync.Once
	release := func() {
		once.Do(func() {
			w.release()
			conn.Close()
		})
	}
	stop := context.AfterFunc(ctx, func() {
		w.interrupt() // before the watch ends: the rows may be mid-step
		release()
	})
	return &sqlRows{Rows: rows, ctx: ctx, release: func() {
		stop()
		release()
	}}, nil
}

type querier struct{ tx *sql.Tx }

func (q querier) Query(ctx context.Context, st store.Statement) (store.Rows, error) {
	rows, err := q.tx.QueryContext(ctx, st.SQL, st.Args...)
	if err != nil {
		return nil, queryError(ctx, err)
	}
	return &sqlRows{Rows: rows, ctx: ctx}, nil
}

// sqlRows are the rows of a read statement; release, when set, gives back
// the connection they hold.
type sqlRows struct {
	*sql.Rows
	ctx     context.Context
	release func()
}

func (r *sqlRows) Close() {
	r.Rows.Close()
	if r.release != nil {
		r.release()
		r.release = nil
	}
}

func (r *sqlRows) Err() error { return queryError(r.ctx, r.Rows.Err()) }

func (r *sqlRows) NumColumns() int {
	cols, _ := r.Rows.Columns()
	return len(cols)
}

// DeleteReportsBefore implements store.Backend.
func (db *DB) DeleteReportsBefore(ctx context.Context, cutoff int64) (n int64, err error) {
	err = db.inWriteTx(ctx, func(tx *sql.Tx) error {
		n, err = deleteReports(ctx, tx, "r.producer_timestamp < ?1", cutoff)
		return err
	})
	return n, err
}

// deleteReports deletes the reports r for which where (a condition on
// reports r with one argument, ?1) holds, their events, and what the
// rollups and resource_latest count of them, in tx; the environments no
// report names any more go too.
func deleteReports(ctx context.Context, tx *sql.Tx, where string, arg any) (int64, error) {
	gone := "(SELECT r.id FROM reports r WHERE " + where + ")"
	if _, err := tx.ExecContext(ctx, `UPDATE certnames SET latest_report_id = NULL
		WHERE latest_report_id IN `+gone, arg); err != nil {
		return 0, err
	}
	// the rollups stop counting what goes (the single writer holds the
	// lock: nothing changes between this and the deletes)
	if err := countInRollups(ctx, tx, where, arg, -1); err != nil {
		return 0, err
	}
	// no distinct window starting at or before a deleted event is
	// answered from resource_latest any more (query/sqlgen/distinct.go)
	if _, err := tx.ExecContext(ctx, `UPDATE distinct_state SET valid_from = MAX(valid_from, n.ts + 1)
		FROM (SELECT MAX(e.timestamp) AS ts FROM resource_events e JOIN reports r ON r.id = e.report_id
		  WHERE `+where+`) n WHERE n.ts IS NOT NULL`, arg); err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM resource_events WHERE report_id IN `+gone, arg); err != nil {
		return 0, err
	}
	// what no window may read any more
	if _, err := tx.ExecContext(ctx, `DELETE FROM resource_latest
		WHERE ts < (SELECT MAX(valid_from) FROM distinct_state)`); err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM distinct_rollup
		WHERE bucket + width <= (SELECT MAX(valid_from) FROM distinct_state)`); err != nil {
		return 0, err
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM reports WHERE id IN `+gone, arg)
	if err != nil {
		return 0, err
	}
	n, _ := res.RowsAffected()
	_, err = tx.ExecContext(ctx, `DELETE FROM environments
		WHERE name NOT IN (`+schema.StoredEnvironments()+`)`)
	return n, err
}

// inWriteTx runs fn in a transaction of the writer, holding the writer
// lock, and commits when fn returns nil.
func (db *DB) inWriteTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	db.mu.Lock()
	defer db.mu.Unlock()
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// CompactRollups merges the delta rows of every bucket that has unmerged
// ones into one row per dimension combination (dropping combinations that
// sum to zero). It returns the number of buckets merged.
// Housekeeping implements store.Backend: the rollups' compaction; SQLite
// has one writer and keeps its own statistics.
func (db *DB) Housekeeping() store.Housekeeping { return store.Housekeeping{Compactor: db} }

func (db *DB) CompactRollups(ctx context.Context) (total int, err error) {
	err = db.inWriteTx(ctx, func(tx *sql.Tx) error {
		for _, t := range schema.RollupTables {
			var n int
			if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM (SELECT DISTINCT width, bucket FROM "+t.Table+
				" WHERE merged = 0)").Scan(&n); err != nil {
				return err
			}
			if n == 0 {
				continue
			}
			dirty := "(width, bucket) IN (SELECT DISTINCT width, bucket FROM " + t.Table + " WHERE merged = 0)"
			sums := t.List(", ", func(c string) string { return "SUM(" + c + ") AS " + c })
			nonZero := t.List(" OR ", func(c string) string { return c + " <> 0" })
			for _, q := range []string{
				"CREATE TEMP TABLE rollup_merge AS SELECT width, bucket, " + t.Dims() + ", " + sums + " FROM " + t.Table +
					" WHERE " + dirty + " GROUP BY width, bucket, " + t.Dims(),
				"DELETE FROM " + t.Table + " WHERE " + dirty,
				"INSERT INTO " + t.Table + " (width, bucket, " + t.Dims() + ", " + t.List(", ", nil) + ", merged) SELECT width, bucket, " +
					t.Dims() + ", " + t.List(", ", nil) + ", 1 FROM rollup_merge WHERE " + nonZero,
				"DROP TABLE rollup_merge",
			} {
				if _, err := tx.ExecContext(ctx, q); err != nil {
					return err
				}
			}
			total += n
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return total, nil
}
