// Package pgtest gives tests a fresh PostgreSQL database of their own,
// dropped at the end of the test.
//
// The server is the one named by $REPORTDB_TEST_POSTGRES (default: the
// local server on 127.0.0.1:5432 with trust authentication) when it
// answers. When none answers there, or when REPORTDB_TEST_POSTGRES is
// "throwaway", the tests start a throwaway cluster from the installed
// PostgreSQL server binaries, shared by every test process of the run (see
// cluster.go), so that `go test ./...` needs nothing it cannot start
// itself. With neither, tests fail (they never skip): PostgreSQL is part of
// the contract.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// EnvServer names the server the tests use; EnvThrowaway as its value asks
// for the throwaway cluster even when a server answers on the default.
const (
	EnvServer    = "REPORTDB_TEST_POSTGRES"
	EnvThrowaway = "throwaway"
	defaultURL   = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
)

// The server is chosen once per test process: probing it (and perhaps
// starting the throwaway cluster) for every test would cost seconds.
var (
	chooseOnce sync.Once
	chosen     string
	chosenWhy  string
	chosenErr  error
	logOnce    sync.Once
)

// AdminURL is the maintenance connection used to create test databases.
// It fails tb when no server can be had.
func AdminURL(tb testing.TB) string {
	tb.Helper()
	chooseOnce.Do(func() { chosen, chosenWhy, chosenErr = choose() })
	if chosenErr != nil {
		tb.Fatal(chosenErr)
	}
	if chosenWhy != "" {
		// Said once per process, so that a run on the throwaway cluster
		// shows (with -v or on failure) why it is not on the usual server.
		logOnce.Do(func() { tb.Logf("pgtest: %s", chosenWhy) })
	}
	return chosen
}

// choose returns the admin URL of the server the tests use and, when it is
// the throwaway cluster, why.
func choose() (admin, why string, err error) {
	env := os.Getenv(EnvServer)
	if env == EnvThrowaway {
		why = EnvServer + "=" + EnvThrowaway
	} else {
		u := env
		if u == "" {
			u = defaultURL
		}
		perr := ping(u)
		if perr == nil {
			return u, "", nil
		}
		// A server named on purpose that answers but refuses us (wrong
		// password, unknown database) is a mistake to report, not to paper
		// over with another server. The default server is only a guess:
		// one there that wants a password is simply not ours to use.
		var pgErr *pgconn.PgError
		if env != "" && errors.As(perr, &pgErr) {
			return "", "", fmt.Errorf("PostgreSQL at %s (%s) refuses the tests: %v", redact(u), EnvServer, perr)
		}
		why = fmt.Sprintf("no PostgreSQL answers at %s (%v)", redact(u), perr)
	}
	admin, where, err := throwaway()
	if err != nil {
		return "", "", fmt.Errorf("%s, and no throwaway cluster: %v", why, err)
	}
	return admin, why + ": using the throwaway cluster in " + where, nil
}

// ping connects to the server and asks it something.
func ping(u string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	return conn.Ping(ctx)
}

// redact hides the password of a connection URL in messages.
func redact(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(unparsable URL)"
	}
	return p.Redacted()
}

// NewDatabase creates an empty database and returns its URL; it is dropped
// when the test ends.
func NewDatabase(tb testing.TB) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin := AdminURL(tb)
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		tb.Fatalf("PostgreSQL at %s: %v (set %s)", redact(admin), err, EnvServer)
	}
	defer conn.Close(ctx)
	var b [6]byte
	rand.Read(b[:])
	name := "reportdb_test_" + hex.EncodeToString(b[:])
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		tb.Fatalf("create database: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c, err := pgx.Connect(ctx, admin)
		if err != nil {
			tb.Errorf("drop database %s: %v", name, err)
			return
		}
		defer c.Close(ctx)
		// FORCE terminates the sessions still connected but waits only 5 s
		// for them to exit, which a loaded machine can exceed (55006).
		for {
			_, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			var pgErr *pgconn.PgError
			if err == nil || !errors.As(err, &pgErr) || pgErr.Code != "55006" || ctx.Err() != nil {
				if err != nil {
					tb.Errorf("drop database %s: %v", name, err)
				}
				return
			}
		}
	})
	u, err := url.Parse(admin)
	if err != nil {
		tb.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}
