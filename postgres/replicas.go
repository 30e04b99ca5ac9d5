package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"reportdb/store"
)

// Read replicas: queries may be answered by hot standbys of the primary
// (Options.ReadURLs) while every write, migration and piece of background
// work stays on the primary. Unlike PuppetDB's read-database, a replica
// only answers while it is at most Options.MaxReplicaLag behind.
//
// The lag is measured in WAL, not with pg_last_xact_replay_timestamp():
// once a second the primary's current WAL position is sampled, and a
// replica's lag is how long ago the primary first reached a position the
// replica has not replayed. A replica that has replayed everything the
// primary wrote is not stale however long ago its last replay was (an
// idle fleet), and one whose replay is stopped falls behind as soon as
// the primary writes.

// DefaultMaxReplicaLag is how far behind the primary a replica may be and
// still answer queries: a report acknowledged by the primary is in every
// answer at most this long after.
const DefaultMaxReplicaLag = 5 * time.Second

// DefaultReplicaCheckInterval is how often the primary's WAL position and
// each replica's replay position are read.
const DefaultReplicaCheckInterval = time.Second

// dbServer is a server the backend reads from: the primary (through the
// write pool) or a replica (its own pool).
type dbServer struct {
	replica bool
	pool    *pgxpool.Pool
	name    atomic.Pointer[string] // host:port; the primary's is set at each connect

	up         atomic.Bool
	inRotation atomic.Bool
	wasIn      atomic.Bool   // has been in rotation since the start
	lag        atomic.Int64  // nanoseconds
	replayed   atomic.Uint64 // WAL position replayed, at the last check
	queries    atomic.Int64
	busy       atomic.Int64 // nanoseconds spent in read transactions
}

func (s *dbServer) String() string {
	if n := s.name.Load(); n != nil {
		return *n
	}
	return "?"
}

func (s *dbServer) served(d time.Duration) {
	s.queries.Add(1)
	s.busy.Add(int64(d))
}

func (s *dbServer) role() string {
	if s.replica {
		return "replica"
	}
	return "primary"
}

// walSample is the primary's WAL position when it was first seen.
type walSample struct {
	at  time.Time
	lsn uint64
}

// replicaSet is the replicas and what is known of their lag.
type replicaSet struct {
	list   []*dbServer
	maxLag time.Duration
	every  time.Duration
	next   atomic.Uint64 // round robin

	mu      sync.Mutex
	samples []walSample // increasing positions, the oldest kept first

	stop context.CancelFunc
	wg   sync.WaitGroup
}

// serverName names the server a connection reached.
func serverName(c *pgx.Conn) string {
	if a := c.PgConn().Conn().RemoteAddr(); a != nil {
		if _, ok := a.(*net.TCPAddr); ok {
			return a.String()
		}
	}
	cfg := c.Config()
	return fmt.Sprintf("%s:%d", cfg.Host, cfg.Port)
}

// connectedTo records the server a new connection of the write pool
// reached. When it is another than before, a standby was promoted in the
// old primary's place (the URL lists several hosts): what this instance
// remembers of the old primary's schema is dropped, since the new one may
// lack what was not replicated before the failover.
func (db *DB) connectedTo(name string) {
	old := db.primary.name.Swap(&name)
	if old == nil || *old == name {
		return
	}
	slog.Warn("the primary is now another server: a failover happened", "primary is now", name, "was", *old)
	db.mu.Lock()
	db.partitions = map[int64]bool{}
	db.mu.Unlock()
	if rs := db.replicas; rs != nil {
		rs.mu.Lock()
		rs.samples = nil
		rs.mu.Unlock()
	}
}

// openReplicas makes the replicas' pools (connecting lazily: a replica
// down now joins the rotation once it answers), checks them once and
// starts the loop that keeps checking them.
func (db *DB) openReplicas(urls []string, base *pgxpool.Config, opt Options) error {
	rs := &replicaSet{maxLag: opt.MaxReplicaLag, every: opt.ReplicaCheckInterval}
	if rs.maxLag <= 0 {
		rs.maxLag = DefaultMaxReplicaLag
	}
	if rs.every <= 0 {
		rs.every = DefaultReplicaCheckInterval
	}
	for _, u := range urls {
		cfg, err := parseConfig(u)
		if err != nil {
			rs.close()
			return fmt.Errorf("read database URL: %w", err)
		}
		sessionDefaults(cfg)
		// the results decode the same way whichever server answers
		cfg.ConnConfig.DefaultQueryExecMode = base.ConnConfig.DefaultQueryExecMode
		cfg.ConnConfig.Tracer = base.ConnConfig.Tracer
		cfg.MaxConns = base.MaxConns
		if cfg.ConnConfig.ConnectTimeout == 0 {
			cfg.ConnConfig.ConnectTimeout = DefaultConnectTimeout
		}
		s := &dbServer{replica: true}
		name := fmt.Sprintf("%s:%d", cfg.ConnConfig.Host, cfg.ConnConfig.Port)
		s.name.Store(&name)
		cfg.AfterConnect = func(_ context.Context, c *pgx.Conn) error {
			n := serverName(c)
			s.name.Store(&n)
			return nil
		}
		if s.pool, err = pgxpool.NewWithConfig(context.Background(), cfg); err != nil {
			rs.close()
			return fmt.Errorf("read database %s: %w", name, err)
		}
		rs.list = append(rs.list, s)
	}
	db.replicas = rs
	ctx, cancel := context.WithCancel(context.Background())
	rs.stop = cancel
	db.checkReplicas(ctx)
	rs.wg.Add(1)
	go func() {
		defer rs.wg.Done()
		store.Every(ctx, rs.every, func() { db.checkReplicas(ctx) })
	}()
	return nil
}

func (rs *replicaSet) close() {
	if rs.stop != nil {
		rs.stop()
		rs.wg.Wait()
	}
	for _, s := range rs.list {
		if s.pool != nil {
			s.pool.Close()
		}
	}
}

// walPosition is the primary's WAL position; replayPosition a server's,
// as far as it has replayed it (a standby) or written it (a primary).
const (
	walPosition    = `(pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint`
	replayPosition = `COALESCE((pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::bigint, ` + walPosition + `)`
)

// positionOn reads a WAL position (walPosition or replayPosition) from
// a server.
func positionOn(ctx context.Context, pool *pgxpool.Pool, position string) (uint64, error) {
	var lsn int64
	err := pool.QueryRow(ctx, "SELECT "+position).Scan(&lsn)
	return uint64(lsn), err
}

// checkReplicas samples the primary's WAL position, then reads each
// replica's replay position and moves it in or out of rotation.
func (db *DB) checkReplicas(ctx context.Context) {
	rs := db.replicas
	now := time.Now()
	cctx, cancel := context.WithTimeout(ctx, rs.every+time.Second)
	defer cancel()
	if lsn, err := positionOn(cctx, db.pool, walPosition); err == nil {
		db.primary.up.Store(true)
		rs.mu.Lock()
		if n := len(rs.samples); n == 0 || lsn > rs.samples[n-1].lsn {
			rs.samples = append(rs.samples, walSample{now, lsn})
		}
		// keep what decides a lag up to twice the maximum; a replica
		// behind every sample kept is at least that far behind
		keep := now.Add(-2*rs.maxLag - 2*rs.every)
		drop := 0
		for drop < len(rs.samples)-1 && rs.samples[drop].at.Before(keep) {
			drop++
		}
		rs.samples = append(rs.samples[:0], rs.samples[drop:]...)
		rs.mu.Unlock()
	} else if ctx.Err() == nil {
		// the primary down (a failover under way): the replicas keep
		// answering with what they have, their lag measured against what
		// the primary had written
		db.primary.up.Store(false)
	}
	for _, s := range rs.list {
		var standby bool
		var replayed int64
		err := s.pool.QueryRow(cctx, "SELECT pg_is_in_recovery(), "+replayPosition).Scan(&standby, &replayed)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			s.up.Store(false)
			rs.leave(s, "it does not answer: "+err.Error())
			continue
		}
		s.up.Store(true)
		lag := time.Duration(0)
		if standby {
			lag = rs.lagOf(uint64(replayed), now)
		}
		s.replayed.Store(uint64(replayed))
		s.lag.Store(int64(lag))
		switch {
		case lag > rs.maxLag:
			rs.leave(s, fmt.Sprintf("its replay is %v behind the primary (max-replica-lag %v)", lag.Round(time.Millisecond), rs.maxLag))
		case lag <= rs.maxLag/2 && !s.inRotation.Load():
			// back once well within the bound, so that a replica at
			// the edge does not flap
			s.inRotation.Store(true)
			msg := "read replica in rotation"
			if s.wasIn.Swap(true) {
				msg = "read replica back in rotation"
			}
			slog.Info(msg, "server", s.String(), "lag", lag.Round(time.Millisecond))
		}
	}
}

// lagOf is how long ago the primary first wrote past position replayed.
func (rs *replicaSet) lagOf(replayed uint64, now time.Time) time.Duration {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for _, w := range rs.samples {
		if w.lsn > replayed {
			return now.Sub(w.at)
		}
	}
	return 0
}

func (rs *replicaSet) leave(s *dbServer, why string) {
	if s.inRotation.Swap(false) {
		slog.Warn("read replica out of rotation; the primary answers its queries", "server", s.String(), "reason", why)
	}
}

// reader is the server that answers a read with ctx.
func (db *DB) reader(ctx context.Context) *dbServer {
	rs := db.replicas
	if rs == nil || len(rs.list) == 0 {
		return &db.primary
	}
	c := store.ConsistencyOf(ctx)
	if c == store.Primary {
		return &db.primary
	}
	var fence uint64
	if c == store.ReadYourWrites {
		// everything committed before now, by any instance
		var err error
		if fence, err = positionOn(ctx, db.pool, walPosition); err != nil {
			return &db.primary
		}
	}
	start := rs.next.Add(1)
	n := uint64(len(rs.list))
	for i := uint64(0); i < n; i++ {
		s := rs.list[(start+i)%n]
		if !s.inRotation.Load() {
			continue
		}
		if c == store.ReadYourWrites && s.replayed.Load() < fence {
			replayed, err := positionOn(ctx, s.pool, replayPosition)
			if err != nil || replayed < fence {
				continue
			}
		}
		return s
	}
	return &db.primary
}

// retryElsewhere reports whether a read that failed on a replica with err,
// before any row reached the caller, is retried on the primary: the
// replica went away, or cancelled the query for a conflict with recovery.
func retryElsewhere(s *dbServer, err error) bool {
	return s.replica && retryable(err)
}

func retryable(err error) bool {
	_, ok := transientReason(err)
	return ok
}

// DatabaseServers implements store.DatabaseServers. With replicas, each
// server's state is the one their check found; without, nothing checks
// the primary in the background, so it is pinged now.
func (db *DB) DatabaseServers() []store.DatabaseServer {
	rs := db.replicas
	if rs == nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		db.primary.up.Store(db.pool.Ping(ctx) == nil)
		return []store.DatabaseServer{db.primary.state()}
	}
	out := []store.DatabaseServer{db.primary.state()}
	for _, s := range rs.list {
		out = append(out, s.state())
	}
	return out
}

func (s *dbServer) state() store.DatabaseServer {
	return store.DatabaseServer{Server: s.String(), Role: s.role(), Up: s.up.Load(),
		InRotation: !s.replica || s.inRotation.Load(), Lag: time.Duration(s.lag.Load()),
		Queries: s.queries.Load(), QueryTime: time.Duration(s.busy.Load())}
}

// replicaRows are a replica's rows for a statement that may be retried on
// the primary: when the replica fails before the first row, the rows
// continue with the primary's.
type replicaRows struct {
	cur   *pgRows
	seen  bool
	retry func() (*pgRows, error)
	err   error
}

func (r *replicaRows) Next() bool {
	if r.err != nil {
		return false
	}
	if r.cur.Next() {
		r.seen = true
		return true
	}
	if r.seen || r.retry == nil || !retryable(r.cur.Err()) {
		return false
	}
	retry := r.retry
	r.retry = nil
	r.cur.Close()
	next, err := retry()
	if err != nil {
		r.err = err
		return false
	}
	r.cur = next
	return r.Next()
}

func (r *replicaRows) Err() error {
	if r.err != nil {
		return r.err
	}
	return r.cur.Err()
}

func (r *replicaRows) Close()                             { r.cur.Close() }
func (r *replicaRows) NumColumns() int                    { return r.cur.NumColumns() }
func (r *replicaRows) Scan(dest ...any) error             { return r.cur.Scan(dest...) }
func (r *replicaRows) ScanValues(dst []store.Value) error { return r.cur.ScanValues(dst) }
