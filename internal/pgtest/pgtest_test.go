package pgtest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestNewDatabase: a database of its own, on whichever server answers.
func TestNewDatabase(t *testing.T) {
	u := NewDatabase(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var name string
	if err := conn.QueryRow(ctx, "SELECT current_database()").Scan(&name); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(name, "reportdb_test_") {
		t.Errorf("database %q", name)
	}
}

// TestThrowawayCluster: a cluster in a directory of the test's own (not
// the shared one) is started by the first user, reused by the next,
// protected by a password, and stopped and deleted by the reaper once its
// users are gone.
func TestThrowawayCluster(t *testing.T) {
	s, err := findServer("/usr/lib/postgresql/*/bin/initdb", func(string) (string, error) { return "", os.ErrNotExist })
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("reportdb-pgtest-test-%d-%d", os.Geteuid(), os.Getpid()))
	t.Cleanup(func() {
		stopCluster(s, dir)
		os.RemoveAll(dir)
	})
	t0 := time.Now()
	admin, release1, err := acquire(s, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cluster started in %v", time.Since(t0).Round(time.Millisecond))
	if err := ping(admin); err != nil {
		t.Fatal(err)
	}
	again, release2, err := acquire(s, dir)
	if err != nil {
		t.Fatal(err)
	}
	if again != admin {
		t.Errorf("the second user got %s, not the running cluster %s", redact(again), redact(admin))
	}
	u, _ := url.Parse(admin)
	u.User = url.User("postgres")
	if err := ping(u.String()); err == nil || !strings.Contains(err.Error(), "password") {
		t.Errorf("connection without the password: %v", err)
	}
	release1()
	time.Sleep(reapGrace + 2*reapPoll)
	if err := ping(admin); err != nil {
		t.Fatalf("stopped while it still had a user: %v", err)
	}
	release2()
	var st syscall.Stat_t
	deadline := time.Now().Add(reapGrace + 30*time.Second)
	for syscall.Lstat(filepath.Join(dir, "data"), &st) == nil {
		if time.Now().After(deadline) {
			t.Fatal("the reaper did not delete the cluster")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := ping(admin); err == nil {
		t.Error("the cluster still answers after the reaper")
	}
}

// TestFallBackToThrowaway: where nothing answers at REPORTDB_TEST_POSTGRES,
// the shared throwaway cluster serves; where a server answers but refuses
// the tests, that is an error.
func TestFallBackToThrowaway(t *testing.T) {
	t.Setenv(EnvServer, "postgres://postgres@127.0.0.1:1/postgres?sslmode=disable&connect_timeout=2")
	admin, why, err := choose()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(why, "no PostgreSQL answers at") || !strings.Contains(why, "throwaway cluster") {
		t.Errorf("why = %q", why)
	}
	if err := ping(admin); err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(admin)
	u.User = url.UserPassword("postgres", "wrong")
	t.Setenv(EnvServer, u.String())
	if _, _, err := choose(); err == nil || !strings.Contains(err.Error(), "refuses the tests") || strings.Contains(err.Error(), "wrong") {
		t.Errorf("a server that refuses the tests: %v", err)
	}
}

// TestNoServerInstalled: the message names the package to install.
func TestNoServerInstalled(t *testing.T) {
	_, err := findServer(filepath.Join(t.TempDir(), "*/bin/initdb"), func(string) (string, error) { return "", os.ErrNotExist })
	if err == nil || !strings.Contains(err.Error(), "apt-get install postgresql") {
		t.Errorf("err = %v", err)
	}
}

// TestCluster: a cluster of the test's own stops and starts again at the
// same URL.
func TestCluster(t *testing.T) {
	c := NewCluster(t)
	if err := ping(c.URL()); err != nil {
		t.Fatal(err)
	}
	c.Stop(t)
	if err := ping(c.URL()); err == nil {
		t.Fatal("the stopped cluster answers")
	}
	c.Start(t)
	if err := ping(c.URL()); err != nil {
		t.Fatal(err)
	}
}
