package postgres_test

import (
	"context"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"

	"reportdb"
	"reportdb/internal/pgtest"
	"reportdb/postgres"
	"reportdb/store"
)

// proxy forwards TCP connections to target until closed, when it drops
// every connection and refuses new ones: the server going away.
type proxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func newProxy(t *testing.T, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, s)
			p.mu.Unlock()
			go func() { io.Copy(s, c); s.Close() }()
			go func() { io.Copy(c, s); c.Close() }()
		}
	}()
	t.Cleanup(p.close)
	return p
}

func (p *proxy) close() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
}

// TestQueriesDuringOutage: with the server gone, a query (one statement
// or a snapshot, as counts and aggregates run) is answered as a transient
// failure, 503 with Retry-After, never as an internal error.
func TestQueriesDuringOutage(t *testing.T) {
	u, err := url.Parse(pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	p := newProxy(t, u.Host)
	u.Host = p.ln.Addr().String()
	q := u.Query()
	q.Set("connect_timeout", "2")
	u.RawQuery = q.Encode()
	ctx := context.Background()
	db, err := postgres.Open(ctx, u.String(), postgres.Options{PartitionInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st := store.Statement{SQL: "SELECT count(*) FROM reports"}
	if err := db.Snapshot(ctx, func(q store.Querier) error {
		rows, err := q.Query(ctx, st)
		if err == nil {
			rows.Close()
		}
		return err
	}); err != nil {
		t.Fatalf("before the outage: %v", err)
	}
	p.close()
	check := func(what string, err error) {
		if reportdb.ErrorCode(err) != reportdb.EUNAVAILABLE {
			t.Errorf("%s during the outage: %v (code %q), want %q", what, err, reportdb.ErrorCode(err), reportdb.EUNAVAILABLE)
		}
	}
	check("a snapshot", db.Snapshot(ctx, func(q store.Querier) error {
		rows, err := q.Query(ctx, st)
		if err == nil {
			rows.Close()
		}
		return err
	}))
	rows, err := db.Query(ctx, st)
	if err == nil {
		for rows.Next() {
		}
		err = rows.Err()
		rows.Close()
	}
	check("a statement", err)
}
