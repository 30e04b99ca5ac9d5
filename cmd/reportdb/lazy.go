package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"reportdb"
	"reportdb/engine"
	"reportdb/httpapi"
	"reportdb/postgres"
	"reportdb/query/sqlgen"
	"reportdb/store"
)

// lazyPostgres is the PostgreSQL backend of a reportdb that started while
// PostgreSQL was unreachable: until a connection (and the migrations)
// succeed, every statement fails with a 503 that says so, submissions go to
// the spool, and a goroutine retries the connection every few seconds.
type lazyPostgres struct {
	url      string
	maxConns int
	log      *slog.Logger
	db       atomic.Pointer[postgres.DB]
	stop     context.CancelFunc
	done     chan struct{}

	mu      sync.Mutex
	lastErr error
	analyze func(*postgres.DB) // the statistics settings, applied on connect
}

var (
	_ engine.Backend   = (*lazyPostgres)(nil)
	_ store.Maintainer = (*lazyPostgres)(nil)
	_ store.Compactor  = (*lazyPostgres)(nil)
)

// retryInterval is how often lazyPostgres tries to connect.
var retryInterval = 2 * time.Second

// openPostgresLazily opens PostgreSQL now if it answers and otherwise
// returns a lazyPostgres connecting in the background. Errors that
// retrying cannot fix (a malformed URL, PostgreSQL refusing the login,
// the database or a privilege) are returned: a server started with them
// would spool every report and answer every query 503 until someone
// noticed.
func openPostgresLazily(ctx context.Context, databaseURL string, maxConns int, log *slog.Logger) (engine.Backend, error) {
	if err := checkDatabaseURL(databaseURL); err != nil {
		return nil, err
	}
	db, err := postgres.Open(ctx, databaseURL, postgres.Options{MaxConns: int32(maxConns)})
	if err == nil {
		return db, nil
	}
	if _, perr := pgxpool.ParseConfig(databaseURL); perr != nil || permanentDatabaseError(err) {
		return nil, databaseError(databaseURL, err)
	}
	log.Warn("PostgreSQL is unavailable; starting without it: queries get 503 and reports are spooled until it is back (connection retried every "+retryInterval.String()+")",
		"err", err)
	bg, cancel := context.WithCancel(context.Background())
	l := &lazyPostgres{url: databaseURL, maxConns: maxConns, log: log, stop: cancel, done: make(chan struct{}), lastErr: err}
	go l.connect(bg)
	return l, nil
}

func (l *lazyPostgres) connect(ctx context.Context) {
	defer close(l.done)
	t := time.NewTicker(retryInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		octx, cancel := context.WithTimeout(ctx, 30*time.Second)
		db, err := postgres.Open(octx, l.url, postgres.Options{MaxConns: int32(l.maxConns)})
		cancel()
		if err != nil {
			l.mu.Lock()
			was := l.lastErr
			l.lastErr = err
			l.mu.Unlock()
			// PostgreSQL is back but refuses reportdb: an operator has
			// to act (retrying goes on, for when they have)
			if permanentDatabaseError(err) && !permanentDatabaseError(was) {
				l.log.Error("PostgreSQL answers but refuses reportdb; reports stay in the spool until this is fixed",
					"err", databaseError(l.url, err))
			}
			continue
		}
		l.mu.Lock()
		if l.analyze != nil {
			l.analyze(db)
		}
		l.mu.Unlock()
		l.db.Store(db)
		l.log.Info("PostgreSQL is available: schema migrated, serving queries and delivering spooled reports")
		return
	}
}

// get returns the open database, nil while unavailable.
func (l *lazyPostgres) get() *postgres.DB { return l.db.Load() }

func (l *lazyPostgres) unavailable() error {
	l.mu.Lock()
	err := l.lastErr
	l.mu.Unlock()
	return &reportdb.Error{Code: reportdb.EUNAVAILABLE, RetryAfter: 5, Err: err,
		Message: fmt.Sprintf("The database is unavailable (%s); queries are answered once it is back, reports are spooled", oneLine(err))}
}

func (l *lazyPostgres) Dialect() sqlgen.Dialect {
	if db := l.get(); db != nil {
		return db.Dialect()
	}
	return postgres.Dialect{}
}

func (l *lazyPostgres) StoreReports(ctx context.Context, reports []*reportdb.Report) ([]reportdb.Outcome, []error, error) {
	if db := l.get(); db != nil {
		return db.StoreReports(ctx, reports)
	}
	return nil, nil, l.unavailable()
}

func (l *lazyPostgres) Snapshot(ctx context.Context, fn func(store.Querier) error) error {
	if db := l.get(); db != nil {
		return db.Snapshot(ctx, fn)
	}
	return l.unavailable()
}

func (l *lazyPostgres) Query(ctx context.Context, st store.Statement) (store.Rows, error) {
	if db := l.get(); db != nil {
		return db.Query(ctx, st)
	}
	return nil, l.unavailable()
}

func (l *lazyPostgres) Ping(ctx context.Context) error {
	if db := l.get(); db != nil {
		return db.Ping(ctx)
	}
	return l.unavailable()
}

// SetAnalyze configures the statistics upkeep of the database, now or
// once it is connected (see postgres.DB.SetAnalyze).
func (l *lazyPostgres) SetAnalyze(rows int64, fraction float64, every time.Duration) {
	l.mu.Lock()
	l.analyze = func(db *postgres.DB) { db.SetAnalyze(rows, fraction, every) }
	l.mu.Unlock()
	if db := l.get(); db != nil {
		db.SetAnalyze(rows, fraction, every)
	}
}

func (l *lazyPostgres) DeleteReportsBefore(ctx context.Context, cutoff int64) (int64, error) {
	if db := l.get(); db != nil {
		return db.DeleteReportsBefore(ctx, cutoff)
	}
	return 0, l.unavailable()
}

func (l *lazyPostgres) DeactivateNode(ctx context.Context, certname string, ts int64) (bool, error) {
	if db := l.get(); db != nil {
		return db.DeactivateNode(ctx, certname, ts)
	}
	return false, l.unavailable()
}

func (l *lazyPostgres) ExpireNodes(ctx context.Context, horizon, now int64) ([]string, error) {
	if db := l.get(); db != nil {
		return db.ExpireNodes(ctx, horizon, now)
	}
	return nil, l.unavailable()
}

func (l *lazyPostgres) PurgeNodes(ctx context.Context, horizon int64, limit int) ([]string, error) {
	if db := l.get(); db != nil {
		return db.PurgeNodes(ctx, horizon, limit)
	}
	return nil, l.unavailable()
}

func (l *lazyPostgres) CompactRollups(ctx context.Context) (int, error) {
	if db := l.get(); db != nil {
		return db.CompactRollups(ctx)
	}
	return 0, l.unavailable()
}

func (l *lazyPostgres) Maintain(ctx context.Context) ([]string, error) {
	if db := l.get(); db != nil {
		return db.Maintain(ctx)
	}
	return nil, l.unavailable()
}

// Writers is PostgreSQL's number of concurrent group-commit writers.
func (l *lazyPostgres) Writers() int { return (&postgres.DB{}).Writers() }

func (l *lazyPostgres) Close() error {
	l.stop()
	<-l.done
	if db := l.get(); db != nil {
		return db.Close()
	}
	return nil
}

// openServeBackend is openBackend for serve: PostgreSQL may be down at
// start-up (see lazyPostgres).
func openServeBackend(ctx context.Context, cfg *serveConfig, log *slog.Logger) (engine.Backend, string, error) {
	if cfg.Database != "" {
		b, err := openPostgresLazily(ctx, cfg.Database, poolSize(cfg), log)
		return b, "postgres", err
	}
	return openBackend(ctx, cfg.Database, cfg.DataDir, cfg.MaxConnections, cfg.SQLiteQueryMemory)
}

// oneLine shortens a multi-line driver error for a client message.
func oneLine(err error) string {
	if err == nil {
		return "not connected yet"
	}
	return strings.Join(strings.Fields(err.Error()), " ")
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
		writers = (&postgres.DB{}).Writers()
	}
	return max(8, querySlots(cfg)+httpapi.SmallQuerySlots+writers+2)
}
