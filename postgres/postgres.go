// Package postgres is the PostgreSQL storage backend, for fleets that
// outgrow one machine: several stateless reportdb instances share one
// database. Reports are written in bulk (one transaction per group-commit
// batch, events with COPY), resource events are partitioned by day for
// cheap retention, and schema migrations run under an advisory lock so
// instances starting together are safe.
package postgres

import (
	"context"
	"embed"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"reportdb"
	"reportdb/schema/dialect"
	"reportdb/store"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Advisory lock keys (arbitrary constants, "rdb" in ASCII plus a suffix).
const (
	lockMigrate    int64 = 0x726462_01
	lockPartitions int64 = 0x726462_02
	lockRetention  int64 = 0x726462_03
	lockCompact    int64 = 0x726462_04
)

// DB is the PostgreSQL backend.
type DB struct {
	pool    *pgxpool.Pool
	dialect Dialect

	mu         sync.Mutex
	partitions map[int64]bool // day indexes known to have an events partition
	// staleChecked: retention dropped the stale resource_latest rows once
	staleChecked bool

	rollupVacuumEvery time.Duration
	rollupVacuumed    map[string]time.Time // when CompactRollups last vacuumed each table

	analyze analyzer // statistics upkeep after ingest (analyze.go)

	// primary is the write pool's server, as a server reads go to;
	// replicas the read replicas (nil: none)
	primary  dbServer
	replicas *replicaSet

	now           func() time.Time // the clock of partitionsAhead
	partitionsBG  sync.WaitGroup   // the partitions-ahead loop (partitionLoop)
	stopPartition context.CancelFunc
}

var _ store.Backend = (*DB)(nil)

// Options tune the connection pool.
type Options struct {
	MaxConns int32 // 0: 4 × GOMAXPROCS, at least 8
	// RollupVacuumInterval is how often at most CompactRollups vacuums
	// a rollup table it merged buckets of (0: DefaultRollupVacuumInterval;
	// negative: never).
	RollupVacuumInterval time.Duration
	// PartitionInterval is how often the day partitions of the coming
	// days are created ahead, in the background (0:
	// DefaultPartitionInterval; negative: only when Open runs).
	PartitionInterval time.Duration
	// Now is the clock that says which days are coming (nil: time.Now).
	Now func() time.Time
	// ReadURLs are hot standbys of the database that answer queries
	// (see replicas.go); none: the primary answers everything.
	ReadURLs []string
	// MaxReplicaLag is how far behind the primary a replica may be and
	// still answer (0: DefaultMaxReplicaLag).
	MaxReplicaLag time.Duration
	// ReplicaCheckInterval is how often the replicas' lag is measured (0:
	// DefaultReplicaCheckInterval).
	ReplicaCheckInterval time.Duration
}

// DefaultConnectTimeout is how long a connection attempt to one host may
// take, when the URL does not say (connect_timeout), for a database URL
// of several hosts and for the read replicas.
const DefaultConnectTimeout = 5 * time.Second

// DefaultPartitionInterval is how often the partitions of the coming days
// are created ahead by default.
const DefaultPartitionInterval = time.Hour

// PartitionDaysAhead is how many days after today's have their partitions
// created ahead: with runs an hour apart (DefaultPartitionInterval), at
// least two whole days after the current one always have theirs, so the
// first report of a day never creates its partition while storing (a
// report of another day, an import's or from an agent whose clock is off,
// still does: ensurePartitions).
const PartitionDaysAhead = 3

// Open connects to the database at url (a libpq URL or DSN), applies
// pending migrations and returns the backend.
func Open(ctx context.Context, url string, opt Options) (*DB, error) {
	cfg, err := parseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("database URL: %w", err)
	}
	sessionDefaults(cfg)
	if len(cfg.ConnConfig.Fallbacks) > 0 && cfg.ConnConfig.ValidateConnect == nil {
		// several hosts: writes go to the one that takes them (a
		// standby promoted after a failover), as libpq's
		// target_session_attrs=read-write, which the URL may also say
		cfg.ConnConfig.ValidateConnect = pgconn.ValidateConnectTargetSessionAttrsReadWrite
	}
	if len(cfg.ConnConfig.Fallbacks) > 0 && cfg.ConnConfig.ConnectTimeout == 0 {
		// a dead host that does not refuse (its machine gone) must not
		// hold every new connection for the system's TCP timeout before
		// the next host is tried
		cfg.ConnConfig.ConnectTimeout = DefaultConnectTimeout
	}
	if opt.MaxConns > 0 {
		cfg.MaxConns = opt.MaxConns
	} else if cfg.MaxConns < 8 {
		cfg.MaxConns = 8
	}
	// the slow-query log's breakdown of a request (trace.go)
	cfg.ConnConfig.Tracer = stepTracer{}
	db := &DB{partitions: map[int64]bool{}, rollupVacuumEvery: opt.RollupVacuumInterval,
		rollupVacuumed: map[string]time.Time{}, now: opt.Now}
	cfg.AfterConnect = func(_ context.Context, c *pgx.Conn) error {
		db.connectedTo(serverName(c))
		return nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	db.pool, db.primary.pool = pool, pool
	if db.now == nil {
		db.now = time.Now
	}
	switch cfg.ConnConfig.DefaultQueryExecMode {
	case pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol:
		db.dialect.TextResults = true // results in text format
	}
	if db.rollupVacuumEvery == 0 {
		db.rollupVacuumEvery = DefaultRollupVacuumInterval
	}
	if err := db.Migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	var hasCUTF8 bool
	if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_collation WHERE collname = 'C.utf8')`).Scan(&hasCUTF8); err != nil {
		pool.Close()
		return nil, err
	}
	if hasCUTF8 {
		db.dialect.RegexCollation = "C.utf8"
	}
	// the partitions around today now, and those of the coming days
	// from then on, so that the first report of a day finds its
	// partition
	if err := db.CreatePartitionsAhead(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	if len(opt.ReadURLs) > 0 {
		if err := db.openReplicas(opt.ReadURLs, cfg, opt); err != nil {
			db.Close()
			return nil, err
		}
	}
	every := opt.PartitionInterval
	if every == 0 {
		every = DefaultPartitionInterval
	}
	if every > 0 {
		bg, cancel := context.WithCancel(context.Background())
		db.stopPartition = cancel
		db.partitionsBG.Add(1)
		go db.partitionLoop(bg, every)
	}
	return db, nil
}

// sessionDefaults sets the session settings of reportdb's connections
// that the URL does not set itself.
func sessionDefaults(cfg *pgxpool.Config) {
	cfg.ConnConfig.RuntimeParams["timezone"] = "UTC"
	cfg.ConnConfig.RuntimeParams["application_name"] = "reportdb"
	// Session defaults; a value set in the database URL wins.
	for _, d := range []struct{ name, value string }{
		// Aggregations over a day of events (distinct_resources, event
		// counts) sort or hash tens of thousands of rows: let them do it
		// in memory. The pool is small, so this stays bounded.
		{"work_mem", "32MB"},
		// reportdb's hot data (recent reports, their events, the indexes)
		// is cached: index lookups cost little more than sequential reads,
		// which the default random_page_cost (4, for spinning disks) does
		// not assume.
		{"random_page_cost", "1.1"},
		// JIT compilation pays off for long analytical scans, not for
		// reportdb's queries: PostgreSQL compiles any plan whose estimated
		// cost exceeds jit_above_cost (100,000), which at 10,000 nodes x 14
		// days is every query over the latest reports, and the compilation
		// took ~430 ms of a 470 ms query (EXPLAIN ANALYZE: a nested loop of
		// 35 ms behind a 508 ms "startup").
		{"jit", "off"},
		// Starting parallel workers costs more than they save here: at
		// 10,000 nodes each Gather of distinct_resources_day waited ~60 ms
		// for workers that then ran 0.3 ms (auto_explain; a worker is a
		// new backend with cold caches over dozens of partitions). One
		// round of queries.py at 10,000 nodes x 1 day, same database:
		// distinct_resources_day p50 150 ms with PostgreSQL's default of
		// 2 workers per Gather, 32 ms without; the concurrent mix 178
		// req/s p99 602 ms against 213 req/s p99 276 ms; a few single
		// queries lose 1-6 ms (failures_last_hour 3.2 -> 5.4 ms,
		// regex_resource_title 15 -> 20, reports_page_first 18 -> 24).
		{"max_parallel_workers_per_gather", "0"},
		// Read statements are prepared once per connection and planned
		// once, without their parameter values (see queryPlanned): with
		// PostgreSQL's default (auto), a statement over the day
		// partitions keeps being planned anew at every execution once
		// the partitions are many, because the generic plan's estimate
		// counts every partition's scan that run-time pruning skips.
		// At 200 nodes x 14 days the lookup of a node's 10 latest
		// reports spent 1.1 of its 1.9 ms planning (pgbench, prepared);
		// its generic plan runs in 0.74 ms.
		{"plan_cache_mode", "force_generic_plan"},
	} {
		if _, ok := cfg.ConnConfig.RuntimeParams[d.name]; !ok {
			cfg.ConnConfig.RuntimeParams[d.name] = d.value
		}
	}
}

// CreatePartitionsAhead creates the day partitions of yesterday (for the
// reports sent late), today and the PartitionDaysAhead days after it that
// do not exist yet. Open runs it, then a background loop every
// Options.PartitionInterval.
func (db *DB) CreatePartitionsAhead(ctx context.Context) error {
	today := dayIndex(db.now().UnixMilli())
	days := make([]int64, 0, PartitionDaysAhead+2)
	for d := today - 1; d <= today+PartitionDaysAhead; d++ {
		days = append(days, d)
	}
	return db.ensurePartitionDays(ctx, days)
}

// partitionLoop runs CreatePartitionsAhead every interval until ctx ends.
// A failed run (the database unreachable, a lock not granted) is logged;
// the next one, or the one after, creates what it could not: the
// partitions are created days before they are needed.
func (db *DB) partitionLoop(ctx context.Context, interval time.Duration) {
	defer db.partitionsBG.Done()
	store.Every(ctx, interval, func() {
		if err := db.CreatePartitionsAhead(ctx); err != nil && ctx.Err() == nil {
			slog.Warn("creating the partitions of the coming days failed; the next run retries", "err", err)
		}
	})
}

// lockPoll is how often lockedConn tries again for a lock it waits for.
const lockPoll = 50 * time.Millisecond

// lockedConn acquires a connection holding the session advisory lock
// key. With wait it waits for the lock; without, ok is false (and nothing
// is held) when another session has it. release unlocks and returns the
// connection to the pool.
func (db *DB) lockedConn(ctx context.Context, key int64, wait bool) (conn *pgxpool.Conn, release func(), ok bool, err error) {
	conn, err = db.pool.Acquire(ctx)
	if err != nil {
		return nil, nil, false, err
	}
	err = conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", key).Scan(&ok)
	// Waiting is polling, not pg_advisory_lock: a session blocked in a
	// statement holds a snapshot, and a holder of the lock that builds an
	// index CONCURRENTLY (a migration's concurrent step) waits for every
	// older snapshot to go away: that wait and the lock's would deadlock.
	for wait && err == nil && !ok {
		select {
		case <-ctx.Done():
			err = ctx.Err()
		case <-time.After(lockPoll):
			err = conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", key).Scan(&ok)
		}
	}
	if err != nil || !ok {
		conn.Release()
		return nil, nil, false, err
	}
	return conn, func() {
		conn.Exec(context.Background(), "SELECT pg_advisory_unlock($1)", key)
		conn.Release()
	}, true, nil
}

// Migrate applies the embedded migrations not yet recorded in
// reportdb_schema_migrations, holding an advisory lock so concurrent
// instances do not race.
func (db *DB) Migrate(ctx context.Context) error {
	conn, release, _, err := db.lockedConn(ctx, lockMigrate, true)
	if err != nil {
		return fmt.Errorf("migration lock: %w", err)
	}
	defer release()
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS reportdb_schema_migrations (
		version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return err
	}
	applied := map[int]bool{}
	rows, err := conn.Query(ctx, "SELECT version FROM reportdb_schema_migrations")
	if err != nil {
		return err
	}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return err
		}
		applied[v] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	entries, err := migrations.ReadDir("migrations")
	if err != nil {
		return err
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	for _, name := range names {
		v, err := strconv.Atoi(strings.SplitN(name, "_", 2)[0])
		if err != nil {
			return fmt.Errorf("migration %s: bad name", name)
		}
		if applied[v] {
			continue
		}
		body, err := migrations.ReadFile("migrations/" + name)
		if err != nil {
			return err
		}
		start := time.Now()
		if pre := concurrentSteps[v]; pre != nil {
			// outside any transaction, before the migration's own
			if err := pre(ctx, conn.Conn()); err != nil {
				return fmt.Errorf("migration %s: %w", name, err)
			}
		}
		tx, err := conn.Begin(ctx)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, string(body)); err != nil {
			tx.Rollback(ctx)
			return fmt.Errorf("migration %s: %w", name, err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO reportdb_schema_migrations (version) VALUES ($1)", v); err != nil {
			tx.Rollback(ctx)
			return err
		}
		if err := tx.Commit(ctx); err != nil {
			return fmt.Errorf("migration %s: %w", name, err)
		}
		slog.Info("migration applied", "name", name, "took", time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// Housekeeping implements store.Backend: the rollups' compaction, the
// partitions' vacuum, the group-commit writers and the statistics after
// ingest.
func (db *DB) Housekeeping() store.Housekeeping {
	return store.Housekeeping{Compactor: db, Maintainer: db, Writers: Writers(), Analyze: db.SetAnalyze,
		AfterLoad: []store.LoadStep{
			// the keys of the days that have ended, in the index lookups
			// by hash read whatever the days kept (the server's
			// maintenance would, within its interval)
			{What: "archiving the keys of the reports", Run: func(ctx context.Context) (string, error) {
				n, err := db.ArchiveKeys(ctx)
				if err != nil || n == 0 {
					return "", err
				}
				return fmt.Sprintf("archived the keys of the days before today (%d)", n), nil
			}},
			// statistics that know the new rows, and the visibility map
			// index-only scans need
			{What: "VACUUM (ANALYZE)", Run: func(ctx context.Context) (string, error) {
				tables, err := db.AnalyzeChanged(ctx, true)
				if err != nil || len(tables) == 0 {
					return "", err
				}
				return fmt.Sprintf("vacuumed and analyzed %d tables", len(tables)), nil
			}},
			// the tables a long load leaves bloated, rewritten now (they
			// would stay so: VACUUM frees space but does not give it back)
			{What: "rewriting bloated tables", Run: func(ctx context.Context) (string, error) {
				did, err := db.ShrinkAfterLoad(ctx)
				if err != nil || len(did) == 0 {
					return "", err
				}
				return "rewrote " + strings.Join(did, ", "), nil
			}},
		}}
}

// Writers is how many batches may be written concurrently by default:
// PostgreSQL can overlap one batch's commit with the next batch's work,
// but each concurrent batch is smaller (a writer takes what is queued
// when it starts) and every batch costs a statement and its rollup
// deltas. On a machine of two CPUs, which the database, the server and
// its clients share, three writers were the slowest in every round of
// bench/ab-ingest.sh on the medium fleet (23,696 reports, 8
// connections, rounds interleaved): on the quiet machine 900 and 782
// reports/s with one writer, 744 and 899 with two, 616 and 741 with three
// (ack p99 21-25, 23-26, 31-34 ms); with another process busy on one
// core 686 and 675, 553 and 628, 556 and 580.
func Writers() int {
	if runtime.NumCPU() <= 2 {
		return 1
	}
	return 3
}

// Dialect implements engine.Backend.
func (db *DB) Dialect() dialect.Dialect { return db.dialect }

// Close implements store.Backend.
func (db *DB) Close() error {
	if db.stopPartition != nil {
		db.stopPartition()
		db.partitionsBG.Wait()
	}
	db.analyze.wg.Wait()
	if db.replicas != nil {
		db.replicas.close()
	}
	db.pool.Close()
	return nil
}

// Ping implements store.Backend.
func (db *DB) Ping(ctx context.Context) error { return mapError(db.pool.Ping(ctx)) }

// Snapshot implements store.Backend with a REPEATABLE READ, read-only
// transaction (so a count and its rows agree), on the server reader
// picks. A replica that fails before any row was read (it went away, or
// cancelled the statement for a conflict with recovery) hands the
// snapshot to the primary.
func (db *DB) Snapshot(ctx context.Context, fn func(store.Querier) error) error {
	s := db.reader(ctx)
	seen, err := db.snapshotOn(ctx, s, fn)
	if err != nil && !seen && retryElsewhere(s, err) && ctx.Err() == nil {
		_, err = db.snapshotOn(ctx, &db.primary, fn)
	}
	return err
}

// snapshotOn runs fn in a snapshot on server s; seen says whether any of
// its statements returned a row.
func (db *DB) snapshotOn(ctx context.Context, s *dbServer, fn func(store.Querier) error) (seen bool, err error) {
	start := time.Now()
	defer func() { s.served(time.Since(start)) }()
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return false, mapError(err) // a lost or refused connection is a 503, not a 500
	}
	defer tx.Rollback(context.Background())
	if err := fn(querier{tx, &seen}); err != nil {
		return seen, err
	}
	return seen, mapError(tx.Commit(ctx))
}

type querier struct {
	tx   pgx.Tx
	seen *bool // set once a statement returns a row
}

// Query runs a read query in a snapshot (see queryPlanned for how it is
// planned).
func (q querier) Query(ctx context.Context, st store.Statement) (store.Rows, error) {
	rows, err := q.query(ctx, st)
	if err != nil {
		return nil, err
	}
	rows.seen = q.seen
	return rows, nil
}

// Query implements store.Querier for a single statement (no explicit
// transaction: one round trip), on the server reader picks; a replica
// that fails before the first row hands the statement to the primary.
func (db *DB) Query(ctx context.Context, st store.Statement) (store.Rows, error) {
	s := db.reader(ctx)
	rows, err := db.queryOn(ctx, s, st)
	if err != nil && retryElsewhere(s, err) && ctx.Err() == nil {
		s = &db.primary
		rows, err = db.queryOn(ctx, s, st)
	}
	if err != nil || !s.replica {
		return rows, err
	}
	return &replicaRows{cur: rows, retry: func() (*pgRows, error) {
		if ctx.Err() != nil {
			return nil, mapError(ctx.Err())
		}
		return db.queryOn(ctx, &db.primary, st)
	}}, nil
}

// queryOn runs a read statement on server s, counting it there once its
// rows are closed.
func (db *DB) queryOn(ctx context.Context, s *dbServer, st store.Statement) (*pgRows, error) {
	start := time.Now()
	rows, err := queryPlanned(ctx, s.pool, st)
	if err != nil {
		s.served(time.Since(start))
		return nil, err
	}
	finish := rows.finish
	rows.finish = func() {
		if finish != nil {
			finish()
		}
		s.served(time.Since(start))
	}
	return rows, nil
}

// pgRows adapts pgx rows: Scan into *any yields text[] as []string (pgx
// gives []any), and decodes the common column types itself.
//
// Scanning into *any makes pgx look up a plan per column and box every
// value through its generic codecs (a text[] is decoded element by element
// into []any, by reflection): for a page of 1,000 events that was 40 % of
// the server's CPU time for the request. The types reportdb's statements
// return (text, integers, booleans, float8, text[]) are decoded here from
// the raw column values, into the same Go values pgx would produce; other
// types (numeric, json, ...) and destinations other than *any go through
// pgx.
type pgRows struct {
	pgx.Rows
	fast []decoder // per column: nil = pgx's Scan
	pass []any     // the destinations handed to pgx (nil where fast)
	err  error     // a value this type could not decode (the rows are closed)
	// finish, when set, runs once when the rows are closed (the rest of
	// a value-sensitive statement's pipeline: see queryPlanned)
	finish func()
	// seen, when set, is set once a row was read (a snapshot's rows:
	// Snapshot retries on the primary only when no row was read)
	seen *bool
}

// Next advances to the next row, noting in seen that one was read.
func (r *pgRows) Next() bool {
	if !r.Rows.Next() {
		return false
	}
	if r.seen != nil {
		*r.seen = true
	}
	return true
}

// Close closes the rows, then finishes what they were part of.
func (r *pgRows) Close() {
	r.Rows.Close()
	if f := r.finish; f != nil {
		r.finish = nil
		f()
	}
}

// decoder turns a column's raw value (never NULL) into its Go value, or
// returns errNotDecoded for pgx to decode it.
type decoder func(raw []byte) (any, error)

var errNotDecoded = errors.New("not decoded here")

func (r *pgRows) Scan(dest ...any) error {
	fields := r.Rows.FieldDescriptions()
	if len(dest) != len(fields) {
		return mapError(r.Rows.Scan(dest...)) // pgx's error
	}
	r.decoders(fields)
	raw := r.Rows.RawValues()
	slow := false
	for i, d := range dest {
		p, isAny := d.(*any)
		if r.fast[i] == nil || !isAny {
			r.pass[i] = d
			slow = true
			continue
		}
		r.pass[i] = nil
		if raw[i] == nil {
			*p = nil
			continue
		}
		if err := r.decode(i, raw[i], p); err != nil {
			return err
		}
	}
	if !slow {
		return nil
	}
	if err := r.Rows.Scan(r.pass...); err != nil {
		return mapError(err)
	}
	for i, d := range r.pass {
		if p, ok := d.(*any); ok && fields[i].DataTypeOID == pgTextArrayOID {
			textArray(p)
		}
	}
	return nil
}

// decoders sets up, at the first row, each column's decoder and the
// destinations handed to pgx (the columns do not change from row to row).
func (r *pgRows) decoders(fields []pgconn.FieldDescription) {
	if r.fast != nil {
		return
	}
	r.fast = make([]decoder, len(fields))
	r.pass = make([]any, len(fields))
	for i, f := range fields {
		r.fast[i] = decoderFor(f.DataTypeOID, f.Format)
	}
}

// decode decodes column i's raw value (not NULL) with its decoder into
// *p, or with pgx where the decoder leaves it to pgx. An error ends the
// rows, as pgx's Scan does.
func (r *pgRows) decode(i int, raw []byte, p *any) error {
	f := r.Rows.FieldDescriptions()[i]
	var v any
	err := errNotDecoded
	if r.fast[i] != nil {
		v, err = r.fast[i](raw)
	}
	switch {
	case errors.Is(err, errNotDecoded):
		// a type or shape the decoder leaves to pgx (a multi-dimensional array)
		if err = r.Rows.TypeMap().Scan(f.DataTypeOID, f.Format, raw, p); err == nil &&
			f.DataTypeOID == pgTextArrayOID {
			textArray(p)
		}
	case err == nil:
		*p = v
	}
	if err != nil {
		// as pgx does when its Scan fails: the rows end, Err says why
		r.err = fmt.Errorf("column %s: %w", f.Name, err)
		r.Rows.Close()
	}
	return r.err
}

// ScanValues implements store.ValueRows: text and varchar are the row's
// bytes, a text[]'s elements strings over them (in dst's slices, reused
// row after row), integers, floats and booleans decoded in place; any
// other type is decoded as Scan does. Nothing is allocated for the types
// reportdb's statements return most.
func (r *pgRows) ScanValues(dst []store.Value) error {
	fields := r.Rows.FieldDescriptions()
	if len(dst) != len(fields) {
		return fmt.Errorf("%d values for %d columns", len(dst), len(fields))
	}
	r.decoders(fields)
	raw := r.Rows.RawValues()
	for i, f := range fields {
		v, b := &dst[i], raw[i]
		if b == nil {
			*v = store.Value{Strings: v.Strings[:0]}
			continue
		}
		ok := true
		switch f.DataTypeOID {
		case pgTextOID, pgVarcharOID:
			v.Kind, v.Bytes = store.Text, b
		case pgInt8OID, pgInt4OID, pgInt2OID, pgBoolOID, pgFloat8OID, pgTextArrayOID:
			ok = f.Format == pgx.BinaryFormatCode && r.scanBinary(f.DataTypeOID, b, v)
		default:
			ok = false
		}
		if ok {
			continue
		}
		var x any
		if err := r.decode(i, b, &x); err != nil {
			return err
		}
		*v = store.ValueOf(x)
	}
	return nil
}

// scanBinary reads a value of type oid in binary format into v; false
// for one of a size or shape it leaves to decode.
func (r *pgRows) scanBinary(oid uint32, b []byte, v *store.Value) bool {
	switch oid {
	case pgInt8OID:
		if len(b) != 8 {
			return false
		}
		v.Kind, v.Int = store.Int, int64(binary.BigEndian.Uint64(b))
	case pgInt4OID:
		if len(b) != 4 {
			return false
		}
		v.Kind, v.Int = store.Int, int64(int32(binary.BigEndian.Uint32(b)))
	case pgInt2OID:
		if len(b) != 2 {
			return false
		}
		v.Kind, v.Int = store.Int, int64(int16(binary.BigEndian.Uint16(b)))
	case pgBoolOID:
		if len(b) != 1 {
			return false
		}
		v.Kind, v.Int = store.Bool, int64(b[0]&1)
	case pgFloat8OID:
		if len(b) != 8 {
			return false
		}
		v.Kind, v.Float = store.Float, math.Float64frombits(binary.BigEndian.Uint64(b))
	case pgTextArrayOID:
		ss, err := appendTextArray(b, v.Strings[:0], borrow)
		if err != nil {
			return false // decode reports it (or pgx decodes more dimensions)
		}
		v.Kind, v.Strings = store.Strings, ss
	}
	return true
}

// textArray turns the []any pgx gives for a text[] into []string.
func textArray(p *any) {
	if arr, ok := (*p).([]any); ok {
		ss := make([]string, len(arr))
		for j, x := range arr {
			ss[j], _ = x.(string)
		}
		*p = ss
	}
}

// PostgreSQL type OIDs decoded by pgRows.
const (
	pgBoolOID      = 16
	pgInt8OID      = 20
	pgInt2OID      = 21
	pgInt4OID      = 23
	pgTextOID      = 25
	pgFloat8OID    = 701
	pgTextArrayOID = 1009
	pgVarcharOID   = 1043
)

// decoderFor returns the decoder of a column of type oid in wire format
// format (nil: leave it to pgx). Text is the same in both formats; the
// others are decoded from PostgreSQL's binary format, which pgx asks for.
func decoderFor(oid uint32, format int16) decoder {
	switch oid {
	case pgTextOID, pgVarcharOID:
		return func(raw []byte) (any, error) { return string(raw), nil }
	}
	if format != pgx.BinaryFormatCode {
		if oid == pgRecordArrayOID {
			// pgx has no decoder of records in text format: a report's
			// events (resourceEventsSQL) are read in binary
			return func([]byte) (any, error) {
				return nil, errors.New("an array of records in text format, which reportdb does not decode")
			}
		}
		return nil
	}
	switch oid {
	case pgBoolOID:
		return fixedSize("bool", 1, func(raw []byte) any { return raw[0] != 0 })
	case pgInt8OID:
		return fixedSize("int8", 8, func(raw []byte) any { return int64(binary.BigEndian.Uint64(raw)) })
	case pgInt4OID:
		return fixedSize("int4", 4, func(raw []byte) any { return int32(binary.BigEndian.Uint32(raw)) })
	case pgInt2OID:
		return fixedSize("int2", 2, func(raw []byte) any { return int16(binary.BigEndian.Uint16(raw)) })
	case pgFloat8OID:
		return fixedSize("float8", 8, func(raw []byte) any { return math.Float64frombits(binary.BigEndian.Uint64(raw)) })
	case pgTextArrayOID:
		return decodeTextArray
	case pgRecordArrayOID:
		return decodeEventRecords
	}
	return nil
}

// fixedSize is the decoder of a binary value of size bytes, converted by
// conv; a value of another length is an error.
func fixedSize(name string, size int, conv func(raw []byte) any) decoder {
	return func(raw []byte) (any, error) {
		if len(raw) != size {
			return nil, fmt.Errorf("%s of %d bytes", name, len(raw))
		}
		return conv(raw), nil
	}
}

// decodeTextArray decodes a one-dimensional text[] in binary format
// (arrayHeader, arrayElement) into []string, NULL elements as "" (as
// pgRows did with pgx's []any).
func decodeTextArray(raw []byte) (any, error) {
	out, err := appendTextArray(raw, nil, func(v []byte) string { return string(v) })
	if err != nil {
		return nil, err
	}
	return out, nil
}

// appendTextArray appends the elements of a one-dimensional text[] in
// binary format to dst, each made a string by conv (NULL elements are
// nil bytes), and returns it: an empty, non-nil slice for an array of
// no element or dimension. More dimensions are errNotDecoded.
func appendTextArray(raw []byte, dst []string, conv func([]byte) string) ([]string, error) {
	bad := func(err error) ([]string, error) {
		return nil, fmt.Errorf("malformed text[] of %d bytes: %w", len(raw), err)
	}
	n, pos, err := arrayHeader(raw)
	switch {
	case errors.Is(err, errNotDecoded):
		return nil, err
	case err != nil:
		return bad(err)
	}
	if dst == nil {
		dst = make([]string, 0, max(n, 0))
	}
	for i := 0; i < n; i++ {
		var v []byte
		if v, pos, err = arrayElement(raw, pos); err != nil {
			return bad(err)
		}
		dst = append(dst, conv(v)) // NULL: conv(nil), ""
	}
	return dst, nil
}

// arrayHeader reads the header of an array in binary format (ndim,
// has-null flag, element type, then per dimension its length and lower
// bound): the element count of a one-dimensional array (-1 for an array
// of no dimension) and the offset of its first element. More dimensions
// are errNotDecoded; a header or count that does not fit is an error.
func arrayHeader(raw []byte) (n, pos int, err error) {
	if len(raw) < 12 {
		return 0, 0, errors.New("header")
	}
	switch int32(binary.BigEndian.Uint32(raw)) {
	case 0:
		return -1, 12, nil
	case 1:
	default:
		return 0, 0, errNotDecoded
	}
	if len(raw) < 20 {
		return 0, 0, errors.New("header")
	}
	c := int32(binary.BigEndian.Uint32(raw[12:]))
	if c < 0 || int(c) > (len(raw)-20)/4 {
		return 0, 0, errors.New("length")
	}
	return int(c), 20, nil
}

// arrayElement reads the array element at raw[pos:] (its length, -1 for
// NULL, and its bytes): its bytes (nil for NULL) and the offset of the
// next element.
func arrayElement(raw []byte, pos int) (v []byte, next int, err error) {
	if len(raw)-pos < 4 {
		return nil, 0, errors.New("element")
	}
	l := int32(binary.BigEndian.Uint32(raw[pos:]))
	pos += 4
	if l < 0 {
		return nil, pos, nil
	}
	if int(l) > len(raw)-pos {
		return nil, 0, errors.New("element")
	}
	return raw[pos : pos+int(l)], pos + int(l), nil
}

func (r *pgRows) Err() error {
	if r.err != nil {
		return r.err
	}
	return mapError(r.Rows.Err())
}

func (r *pgRows) NumColumns() int { return len(r.Rows.FieldDescriptions()) }

// mapError turns PostgreSQL errors that a user's query can cause into 400s,
// and transient failures (transientReason) into 503s to retry.
func mapError(err error) error {
	if reason, ok := transientReason(err); ok {
		var e *reportdb.Error
		if errors.As(err, &e) {
			return err
		}
		return &reportdb.Error{Code: reportdb.EUNAVAILABLE, RetryAfter: store.TransientRetryAfter, Err: err,
			Message: "The query could not run right now (" + reason + "); retry later"}
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code[:2] {
		case "22", "42": // data exception, syntax error or access rule violation
			return &reportdb.Error{Code: reportdb.EINVALID, Message: "ERROR: " + pe.Message, Err: err}
		}
		if pe.Code == "57014" { // query_canceled (statement timeout)
			return &reportdb.Error{Code: reportdb.ETIMEOUT, Message: "The query was cancelled because it ran longer than the query timeout", Err: err}
		}
	}
	return err
}
