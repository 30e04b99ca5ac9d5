package postgres

import (
	"context"
	"net/url"
	"testing"

	"reportdb/internal/pgtest"
)

// TestLoopbackWithoutTLS: a database on this machine whose URL (or DSN,
// or environment) names no TLS setting is connected to without TLS first
// (sslmode=allow: TLS only when the server refuses a plain connection);
// any other host, or a URL or environment that names a TLS setting, keeps
// pgx's parsing (prefer: TLS first).
func TestLoopbackWithoutTLS(t *testing.T) {
	for _, c := range []struct {
		conn      string
		plainOnly bool // the first attempt is without TLS
	}{
		{"postgres://u@127.0.0.1:5432/db", true},
		{"postgres://u@localhost/db?application_name=x", true},
		{"postgresql://u@[::1]:5432/db", true},
		{"host=127.0.0.1 port=5432 dbname=db user=u", true},
		{"host=localhost dbname=db", true},
		{"postgres://u@db.example.com:5432/db", false},
		{"host=10.0.0.5 dbname=db", false},
		{"host=127.0.0.1,db.example.com dbname=db", false},
		{"postgres://u@127.0.0.1:5432/db?sslmode=prefer", false},
		{"postgres://u@127.0.0.1:5432/db?sslmode=require", false},
		{"postgres://u@127.0.0.1:5432/db?sslsni=0", false},
		{"host=127.0.0.1 dbname=db sslmode=require", false},
	} {
		cfg, err := parseConfig(c.conn)
		if err != nil {
			t.Fatalf("%s: %v", c.conn, err)
		}
		plain := cfg.ConnConfig.TLSConfig == nil
		if plain != c.plainOnly {
			t.Errorf("%s: first attempt without TLS %v, want %v", c.conn, plain, c.plainOnly)
		}
		if c.plainOnly {
			// the server may still insist on TLS (hostssl): allow's fallback
			tls := false
			for _, f := range cfg.ConnConfig.Fallbacks {
				tls = tls || f.TLSConfig != nil
			}
			if !tls {
				t.Errorf("%s: no fallback with TLS", c.conn)
			}
		}
	}
	t.Setenv("PGSSLMODE", "require")
	if cfg, err := parseConfig("postgres://u@127.0.0.1:5432/db"); err != nil || cfg.ConnConfig.TLSConfig == nil {
		t.Errorf("PGSSLMODE=require: TLS %v (%v)", cfg != nil && cfg.ConnConfig.TLSConfig != nil, err)
	}
}

// TestLoopbackConnectionIsPlain: the test database, on this machine, named
// without an sslmode, is served over a connection without TLS; with
// sslmode=require (when the server has TLS on), over TLS.
func TestLoopbackConnectionIsPlain(t *testing.T) {
	u, err := url.Parse(pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Del("sslmode")
	u.RawQuery = q.Encode()
	if !localHost(u.Hostname()) {
		t.Fatalf("the test database %s is not on this machine (REPORTDB_TEST_POSTGRES): this test needs one that is", u.Host)
	}
	ssl := func(conn string) (bool, string) {
		t.Helper()
		db, err := Open(context.Background(), conn, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var on bool
		var setting string
		if err := db.pool.QueryRow(context.Background(),
			"SELECT ssl, current_setting('ssl') FROM pg_stat_ssl WHERE pid = pg_backend_pid()").Scan(&on, &setting); err != nil {
			t.Fatal(err)
		}
		return on, setting
	}
	on, setting := ssl(u.String())
	if on {
		t.Errorf("%s: the connection uses TLS", u.Redacted())
	}
	if setting != "on" {
		t.Logf("the server has ssl = %s: sslmode=require not tried", setting)
		return
	}
	q.Set("sslmode", "require")
	u.RawQuery = q.Encode()
	if on, _ := ssl(u.String()); !on {
		t.Errorf("%s: the connection does not use TLS", u.Redacted())
	}
}
