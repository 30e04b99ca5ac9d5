package postgres

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
	"reportdb/schema/dialect"
	"reportdb/store"
)

// Lazy is the PostgreSQL store of a reportdb that may start while
// PostgreSQL is unreachable: until a connection (and the migrations)
// succeed, every statement fails with a 503 that says so, submissions go
// to the spool, and a goroutine retries the connection every few seconds.
// Once connected, it passes everything to its DB.
type Lazy struct {
	url       string
	opts      Options
	log       *slog.Logger
	permanent func(error) bool
	describe  func(error) error
	db        atomic.Pointer[DB]
	stop      context.CancelFunc
	done      chan struct{}

	mu      sync.Mutex
	lastErr error
	analyze func(*DB) // the statistics settings, applied on connect
}

var (
	_ store.Backend       = (*Lazy)(nil)
	_ store.NodeLifecycle = (*Lazy)(nil)
	_ store.Maintainer    = (*Lazy)(nil)
	_ store.Compactor     = (*Lazy)(nil)
)

// LazyOptions are the settings of OpenLazily.
type LazyOptions struct {
	Options // of every attempt to open the database
	// Log says that PostgreSQL is unavailable at the start, that it
	// answers but refuses reportdb, and that it is available (nil:
	// slog's default logger).
	Log *slog.Logger
	// Permanent reports whether an error of Open is one that waiting
	// does not fix: PostgreSQL refusing reportdb (the login, the
	// database, a privilege). nil: every error is waited out.
	Permanent func(error) bool
	// Describe is what is returned, or logged, for such an error or a
	// malformed URL: what the person who configured the database has to
	// fix (nil: the error itself).
	Describe func(error) error
}

// retryInterval is how often a Lazy tries to connect.
var retryInterval = 2 * time.Second

// OpenLazily opens PostgreSQL now if it answers, and otherwise returns a
// Lazy connecting in the background. Errors that retrying cannot fix (a
// malformed URL, or one opts.Permanent calls permanent: PostgreSQL
// refusing the login, the database or a privilege) are returned, as
// opts.Describe describes them: a server started with them would spool
// every report and answer every query 503 until someone noticed.
func OpenLazily(ctx context.Context, databaseURL string, opts LazyOptions) (*Lazy, error) {
	l := &Lazy{url: databaseURL, opts: opts.Options, log: opts.Log, permanent: opts.Permanent, describe: opts.Describe,
		stop: func() {}, done: make(chan struct{})}
	if l.log == nil {
		l.log = slog.Default()
	}
	if l.permanent == nil {
		l.permanent = func(error) bool { return false }
	}
	if l.describe == nil {
		l.describe = func(err error) error { return err }
	}
	for _, u := range l.opts.ReadURLs {
		// as a malformed database URL: waiting does not fix it
		if _, err := parseConfig(u); err != nil {
			return nil, fmt.Errorf("read database URL: %w", err)
		}
	}
	db, err := Open(ctx, databaseURL, l.opts)
	if err == nil {
		l.db.Store(db)
		close(l.done)
		return l, nil
	}
	if _, perr := pgxpool.ParseConfig(databaseURL); perr != nil || l.permanent(err) {
		return nil, l.describe(err)
	}
	l.log.Warn("PostgreSQL is unavailable; starting without it: queries get 503 and reports are spooled until it is back (connection retried every "+retryInterval.String()+")",
		"err", err)
	bg, cancel := context.WithCancel(context.Background())
	l.stop = cancel
	l.lastErr = err
	go l.connect(bg)
	return l, nil
}

func (l *Lazy) connect(ctx context.Context) {
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
		db, err := Open(octx, l.url, l.opts)
		cancel()
		if err != nil {
			l.mu.Lock()
			was := l.lastErr
			l.lastErr = err
			l.mu.Unlock()
			// PostgreSQL is back but refuses reportdb: an operator has
			// to act (retrying goes on, for when they have)
			if l.permanent(err) && !l.permanent(was) {
				l.log.Error("PostgreSQL answers but refuses reportdb; reports stay in the spool until this is fixed",
					"err", l.describe(err))
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

// DB returns the open database, nil while unavailable.
func (l *Lazy) DB() *DB { return l.db.Load() }

func (l *Lazy) unavailable() error {
	l.mu.Lock()
	err := l.lastErr
	l.mu.Unlock()
	reason := "not connected yet"
	if err != nil {
		reason = strings.Join(strings.Fields(err.Error()), " ") // a multi-line driver error on one line
	}
	return &reportdb.Error{Code: reportdb.EUNAVAILABLE, RetryAfter: 5, Err: err,
		Message: fmt.Sprintf("The database is unavailable (%s); queries are answered once it is back, reports are spooled", reason)}
}

// Dialect implements engine.Backend.
func (l *Lazy) Dialect() dialect.Dialect {
	if db := l.DB(); db != nil {
		return db.Dialect()
	}
	return Dialect{}
}

func (l *Lazy) StoreReports(ctx context.Context, reports []*reportdb.Report) ([]reportdb.Outcome, []error, error) {
	if db := l.DB(); db != nil {
		return db.StoreReports(ctx, reports)
	}
	return nil, nil, l.unavailable()
}

func (l *Lazy) Snapshot(ctx context.Context, fn func(store.Querier) error) error {
	if db := l.DB(); db != nil {
		return db.Snapshot(ctx, fn)
	}
	return l.unavailable()
}

func (l *Lazy) Query(ctx context.Context, st store.Statement) (store.Rows, error) {
	if db := l.DB(); db != nil {
		return db.Query(ctx, st)
	}
	return nil, l.unavailable()
}

// DatabaseServers implements store.DatabaseServers: none while
// PostgreSQL is unavailable.
func (l *Lazy) DatabaseServers() []store.DatabaseServer {
	if db := l.DB(); db != nil {
		return db.DatabaseServers()
	}
	return nil
}

func (l *Lazy) Ping(ctx context.Context) error {
	if db := l.DB(); db != nil {
		return db.Ping(ctx)
	}
	return l.unavailable()
}

// SetAnalyze configures the statistics upkeep of the database, now or
// once it is connected (see DB.SetAnalyze).
func (l *Lazy) SetAnalyze(rows int64, fraction float64, every time.Duration) {
	l.mu.Lock()
	l.analyze = func(db *DB) { db.SetAnalyze(rows, fraction, every) }
	l.mu.Unlock()
	if db := l.DB(); db != nil {
		db.SetAnalyze(rows, fraction, every)
	}
}

func (l *Lazy) DeleteReportsBefore(ctx context.Context, cutoff int64) (int64, error) {
	if db := l.DB(); db != nil {
		return db.DeleteReportsBefore(ctx, cutoff)
	}
	return 0, l.unavailable()
}

func (l *Lazy) DeactivateNode(ctx context.Context, certname string, ts int64) (bool, error) {
	if db := l.DB(); db != nil {
		return db.DeactivateNode(ctx, certname, ts)
	}
	return false, l.unavailable()
}

func (l *Lazy) ExpireNodes(ctx context.Context, horizon, now int64) ([]string, error) {
	if db := l.DB(); db != nil {
		return db.ExpireNodes(ctx, horizon, now)
	}
	return nil, l.unavailable()
}

func (l *Lazy) PurgeNodes(ctx context.Context, horizon int64, limit int) ([]string, error) {
	if db := l.DB(); db != nil {
		return db.PurgeNodes(ctx, horizon, limit)
	}
	return nil, l.unavailable()
}

func (l *Lazy) CompactRollups(ctx context.Context) (int, error) {
	if db := l.DB(); db != nil {
		return db.CompactRollups(ctx)
	}
	return 0, l.unavailable()
}

func (l *Lazy) Maintain(ctx context.Context) ([]string, error) {
	if db := l.DB(); db != nil {
		return db.Maintain(ctx)
	}
	return nil, l.unavailable()
}

// Housekeeping implements store.Backend: the database's, once it is
// connected (see DB.Housekeeping).
func (l *Lazy) Housekeeping() store.Housekeeping {
	return store.Housekeeping{Compactor: l, Maintainer: l, Writers: Writers(), Analyze: l.SetAnalyze}
}

func (l *Lazy) Close() error {
	l.stop()
	<-l.done
	if db := l.DB(); db != nil {
		return db.Close()
	}
	return nil
}
