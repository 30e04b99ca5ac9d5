package postgres_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"reportdb"
	"reportdb/engine"
	"reportdb/internal/pgtest"
	"reportdb/postgres"
	"reportdb/store"
)

var _ engine.Backend = (*postgres.Lazy)(nil)

// gate forwards TCP connections to target while open and drops them at
// once while shut: a PostgreSQL server that is down, then up.
type gate struct {
	ln   net.Listener
	open atomic.Bool
}

func newGate(t *testing.T, target string) *gate {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &gate{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if !g.open.Load() {
				c.Close()
				continue
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			go func() { io.Copy(s, c); s.Close() }()
			go func() { io.Copy(c, s); c.Close() }()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return g
}

// syncBuffer is a log the test reads while the Lazy writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// noDatabase is the Permanent of these tests: PostgreSQL's "database does
// not exist".
func noDatabase(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "3D000"
}

func described(err error) error { return fmt.Errorf("described: %w", err) }

// TestLazyWaitsForPostgres: started while PostgreSQL is down, a Lazy
// answers every statement with a 503 that says so, logs once that
// PostgreSQL answers but refuses (its database does not exist yet), and
// serves once the database is there.
func TestLazyWaitsForPostgres(t *testing.T) {
	ctx := context.Background()
	u, err := url.Parse(pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	admin, err := pgx.Connect(ctx, pgtest.AdminURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	// the database is away (renamed) until the test brings it back
	if _, err := admin.Exec(ctx, "ALTER DATABASE "+name+" RENAME TO "+name+"_away"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), pgtest.AdminURL(t))
		if err == nil {
			c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+"_away WITH (FORCE)")
			c.Close(context.Background())
		}
	})
	g := newGate(t, u.Host)
	u.Host = g.ln.Addr().String()
	q := u.Query()
	q.Set("connect_timeout", "2")
	u.RawQuery = q.Encode()

	var logs syncBuffer
	l, err := postgres.OpenLazily(ctx, u.String(), postgres.LazyOptions{
		Options: postgres.Options{PartitionInterval: -1}, Log: slog.New(slog.NewTextHandler(&logs, nil)),
		Permanent: noDatabase, Describe: described,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.DB() != nil {
		t.Fatal("connected through a shut gate")
	}
	if !strings.Contains(logs.String(), "PostgreSQL is unavailable; starting without it") {
		t.Errorf("start without PostgreSQL not logged:\n%s", logs.String())
	}
	if l.Dialect() != (postgres.Dialect{}) {
		t.Errorf("dialect while unavailable: %#v", l.Dialect())
	}
	if w := postgres.Writers(); l.Housekeeping().Writers != w {
		t.Errorf("writers %d, want %d", l.Housekeeping().Writers, w)
	}
	l.SetAnalyze(-1, 0, 0) // applied once connected
	unavailable := func(what string, err error) {
		t.Helper()
		var re *reportdb.Error
		if !errors.As(err, &re) || re.Code != reportdb.EUNAVAILABLE || re.RetryAfter != 5 ||
			!strings.HasPrefix(re.Message, "The database is unavailable (") || strings.Contains(re.Message, "\n") {
			t.Errorf("%s while unavailable: %#v", what, err)
		}
	}
	unavailable("Ping", l.Ping(ctx))
	_, err = l.Query(ctx, store.Statement{SQL: "SELECT 1"})
	unavailable("Query", err)
	unavailable("Snapshot", l.Snapshot(ctx, func(store.Querier) error { return nil }))
	_, _, err = l.StoreReports(ctx, nil)
	unavailable("StoreReports", err)
	_, err = l.DeleteReportsBefore(ctx, 0)
	unavailable("DeleteReportsBefore", err)
	_, err = l.DeactivateNode(ctx, "a.example", 0)
	unavailable("DeactivateNode", err)
	_, err = l.ExpireNodes(ctx, 0, 0)
	unavailable("ExpireNodes", err)
	_, err = l.PurgeNodes(ctx, 0, 1)
	unavailable("PurgeNodes", err)
	_, err = l.CompactRollups(ctx)
	unavailable("CompactRollups", err)
	_, err = l.Maintain(ctx)
	unavailable("Maintain", err)

	// PostgreSQL is up, without the database: said once, as described
	g.open.Store(true)
	const refused = "PostgreSQL answers but refuses reportdb"
	waitFor(t, "the refusal logged", func() bool { return strings.Contains(logs.String(), refused) })
	if !strings.Contains(logs.String(), "described: ") {
		t.Errorf("refusal not described:\n%s", logs.String())
	}
	unavailable("Ping", l.Ping(ctx))

	// the database is back
	if _, err := admin.Exec(ctx, "ALTER DATABASE "+name+"_away RENAME TO "+name); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the connection", func() bool { return l.DB() != nil })
	if err := l.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(logs.String(), refused); n != 1 {
		t.Errorf("refusal logged %d times:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "PostgreSQL is available") {
		t.Errorf("connection not logged:\n%s", logs.String())
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !ok(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s after a minute", what)
		}
	}
}

// TestOpenLazily: a database that answers is open at once; a malformed
// URL and a refusal that waiting does not fix are errors, as described.
func TestOpenLazily(t *testing.T) {
	ctx := context.Background()
	good := pgtest.NewDatabase(t)
	var logs syncBuffer
	opts := postgres.LazyOptions{Options: postgres.Options{PartitionInterval: -1},
		Log: slog.New(slog.NewTextHandler(&logs, nil)), Permanent: noDatabase, Describe: described}

	l, err := postgres.OpenLazily(ctx, good, opts)
	if err != nil {
		t.Fatal(err)
	}
	if l.DB() == nil {
		t.Error("not open at once")
	}
	if err := l.Ping(ctx); err != nil {
		t.Error(err)
	}
	if err := l.Close(); err != nil {
		t.Error(err)
	}

	u, err := url.Parse(good)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/reportdb_no_such_database"
	for _, bad := range []string{u.String(), "postgres://reportdb@127.0.0.1:notaport/reports"} {
		l, err := postgres.OpenLazily(ctx, bad, opts)
		if l != nil || err == nil || !strings.HasPrefix(err.Error(), "described: ") {
			t.Errorf("%s: %v, %v", bad, l, err)
		}
	}
	if logs.String() != "" {
		t.Errorf("logged:\n%s", logs.String())
	}
}
