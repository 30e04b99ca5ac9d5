package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"reportdb/internal/config"
	"reportdb/internal/pgtest"
	"reportdb/jsonv"
)

// The mistakes a new user makes on a first run (importing old reports,
// mistyping the database login, starting a second server on the same
// data directory, importing again): each is told what happened and what
// to do, at the time.

// logBuffer collects a server's log lines for the test to read while
// the server runs.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startLogged runs serve() with cfg until the test ends and returns its
// log.
func startLogged(t *testing.T, cfg *serveConfig) *logBuffer {
	t.Helper()
	logs := &logBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, cfg, slog.New(slog.NewTextHandler(logs, nil)), func(listening) { close(ready) })
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("serve: %v\n%s", err, logs)
	case <-time.After(60 * time.Second):
		t.Fatal("serve did not start")
	}
	return logs
}

// serveMustFail runs serve() with cfg and returns its error; a server
// that starts instead fails the test (and is stopped).
func serveMustFail(t *testing.T, cfg *serveConfig) error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan struct{})
	done := make(chan error, 1)
	logs := &logBuffer{}
	go func() {
		done <- serve(ctx, cfg, slog.New(slog.NewTextHandler(logs, nil)), func(listening) { close(ready) })
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("serve returned without an error")
		}
		return err
	case <-ready:
		cancel()
		<-done
		t.Fatalf("serve started (it must refuse to):\n%s", logs)
	case <-time.After(60 * time.Second):
		t.Fatalf("serve neither started nor failed within a minute:\n%s", logs)
	}
	return nil
}

// runReports writes n wire v8 reports of distinct runs of node certname,
// produced at producedAt, into dir.
func runReports(t *testing.T, dir, certname string, n int, producedAt time.Time) {
	t.Helper()
	body, _ := corpusReport(t, 0)
	for i := 0; i < n; i++ {
		v, err := jsonv.Parse(body)
		if err != nil {
			t.Fatal(err)
		}
		o := v.(*jsonv.Object)
		o.Set("certname", certname)
		o.Set("producer_timestamp", producedAt.Add(time.Duration(i)*time.Minute).UTC().Format("2006-01-02T15:04:05.000Z"))
		writeFile(t, filepath.Join(dir, fmt.Sprintf("%s-%d.json", certname, i)), []byte(jsonv.Compact(o)))
	}
}

// TestRetentionWarnings: reports older than the retention window are
// counted in the import's summary, and a server starting on them warns
// that its first retention run deletes them, and when, on both backends.
func TestRetentionWarnings(t *testing.T) {
	in := t.TempDir()
	runReports(t, in, "old.example.com", 3, time.Now().Add(-30*24*time.Hour))
	runReports(t, in, "new.example.com", 2, time.Now().Add(-time.Hour))
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			cfg := config.Defaults()
			cfg.Listen = "127.0.0.1:0"
			cfg.DataDir = t.TempDir()
			target := []string{"--data-dir", cfg.DataDir}
			if backend == "postgres" {
				cfg.Database = pgtest.NewDatabase(t)
				target = []string{"--database", cfg.Database}
			}
			code, out, stderr := importRun(t, append(target, in)...) // the default --report-ttl, 14d
			if code != 0 {
				t.Fatalf("import: exit %d\n%s\n%s", code, out, stderr)
			}
			wantCounts(t, out, 5, 0, 0, 0)
			if !strings.Contains(out, "  older than the retention window: 3 (") || !strings.Contains(out, "--report-ttl 14d deletes them") {
				t.Errorf("the import's summary does not count the reports retention deletes:\n%s", out)
			}
			// without a retention, nothing to say
			_, out, _ = importRun(t, append(target, "--report-ttl", "0", in)...)
			if strings.Contains(out, "retention window") {
				t.Errorf("--report-ttl 0: %s", out)
			}

			logs := startLogged(t, cfg)
			for _, want := range []*regexp.Regexp{
				regexp.MustCompile(`level=WARN msg="3 stored reports are older than the retention window \(--report-ttl 14d\): the first retention run deletes them, at \S+ \(--gc-interval 1h after start\)`),
				// old.example.com's latest report is 30 days old
				regexp.MustCompile(`level=WARN msg="1 nodes have no report newer than --node-ttl 7d: the first node expiry marks them expired, at \S+ \(--gc-interval 1h after start\)`),
			} {
				deadline := time.Now().Add(30 * time.Second)
				for !want.MatchString(logs.String()) {
					if time.Now().After(deadline) {
						t.Fatalf("no start-up warning %s:\n%s", want, logs)
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
		})
	}
}

// TestImportHeadline: the summary's first line says what was stored and
// what was there already, not "imported" for reports it did not store.
func TestImportHeadline(t *testing.T) {
	in := t.TempDir()
	runReports(t, in, "node.example.com", 4, time.Now().Add(-time.Hour))
	dataDir := t.TempDir()
	for _, want := range []string{
		`^read 4 reports from 4 files in \S+ \(\d+ reports/s\): 4 stored, 0 already stored\n`,
		`^read 4 reports from 4 files in \S+ \(\d+ reports/s\): 0 stored, 4 already stored\n`,
	} {
		code, out, stderr := importRun(t, "--data-dir", dataDir, in)
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
		}
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("summary does not match %s:\n%s", want, out)
		}
	}
}

// TestDatabaseMisconfigured: a --database that PostgreSQL refuses for
// good (unknown role, unknown database) or that is not PostgreSQL's stops
// serve at start with what to fix; an unreachable server does not (see
// TestStartWithoutPostgres).
func TestDatabaseMisconfigured(t *testing.T) {
	// a database that exists, on the test server, to get wrong
	admin, err := url.Parse(pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	noRole := *admin
	noRole.User = url.User("reportdb_no_such_role")
	noDB := *admin
	noDB.Path = "/reportdb_no_such_database"
	for _, c := range []struct {
		name, url string
		want      []string
	}{
		// with trust authentication PostgreSQL says the role does not
		// exist, with password authentication that the password is wrong
		{"unknown role", noRole.String(), []string{`"reportdb_no_such_role"`, "CREATE ROLE"}},
		{"unknown database", noDB.String(), []string{`database "reportdb_no_such_database" does not exist`, "createdb"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := config.Defaults()
			cfg.Listen = "127.0.0.1:0"
			cfg.DataDir = t.TempDir()
			cfg.Database = c.url
			msg := serveMustFail(t, cfg).Error()
			for _, w := range append(c.want, "leave --database empty", "embedded store") {
				if !strings.Contains(msg, w) {
					t.Errorf("message lacks %q: %s", w, msg)
				}
			}
		})
	}

	// not PostgreSQL: the URL as typed, the password masked
	const mysql = "mysql://reportdb:s3cret@localhost/reports"
	for _, cmd := range [][]string{
		{"serve", "--listen", "127.0.0.1:0", "--data-dir", t.TempDir(), "--database", mysql},
		{"import", "--data-dir", t.TempDir(), "--database", mysql, t.TempDir()},
	} {
		var out, errb bytes.Buffer
		code := run(cmd, &out, &errb)
		msg := errb.String()
		if code != 1 {
			t.Errorf("%s: exit %d, want 1\n%s", cmd[0], code, msg)
		}
		for _, w := range []string{"mysql://reportdb:xxxxx@localhost/reports", "PostgreSQL", "postgres://", "leave --database empty"} {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: message lacks %q: %s", cmd[0], w, msg)
			}
		}
		if strings.Contains(msg, "s3cret") {
			t.Errorf("%s: message shows the password: %s", cmd[0], msg)
		}
	}

	// a read database that is not PostgreSQL, or not a URL pgx can parse:
	// named as such, the password masked, refused at once
	for bad, want := range map[string][]string{
		mysql: {"--read-database mysql://reportdb:xxxxx@localhost/reports", "PostgreSQL hot standby", "postgres://"},
		"postgres://reportdb:s3cret@standby:notaport/reports": {"read database URL", "postgres://reportdb:xxxxx@standby:notaport/reports", "invalid port"},
	} {
		var out, errb bytes.Buffer
		code := run([]string{"serve", "--listen", "127.0.0.1:0", "--data-dir", t.TempDir(),
			"--database", "postgres://reportdb@127.0.0.1:1/reports", "--read-database", bad}, &out, &errb)
		msg := errb.String()
		if code != 1 {
			t.Errorf("read-database %s: exit %d, want 1\n%s", bad, code, msg)
		}
		for _, w := range want {
			if !strings.Contains(msg, w) {
				t.Errorf("read-database %s: message lacks %q: %s", bad, w, msg)
			}
		}
		if strings.Contains(msg, "s3cret") {
			t.Errorf("read-database %s: message shows the password: %s", bad, msg)
		}
	}
}

// TestPermanentDatabaseErrors: what waiting cannot fix, and what it can.
func TestPermanentDatabaseErrors(t *testing.T) {
	wrap := func(code string) error {
		return fmt.Errorf("failed to connect: %w", &pgconn.PgError{Severity: "FATAL", Code: code})
	}
	for code, permanent := range map[string]bool{
		"28P01": true,  // password authentication failed
		"28000": true,  // role does not exist, no pg_hba.conf entry
		"3D000": true,  // database does not exist
		"42501": true,  // no CONNECT or CREATE privilege
		"57P03": false, // the database system is starting up
		"53300": false, // too many connections
		"57P01": false, // terminating connection (administrator command)
	} {
		if got := permanentDatabaseError(wrap(code)); got != permanent {
			t.Errorf("SQLSTATE %s: permanent %v, want %v", code, got, permanent)
		}
	}
	for _, err := range []error{errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), context.DeadlineExceeded} {
		if permanentDatabaseError(err) {
			t.Errorf("%v: permanent", err)
		}
	}
}

// TestDataDirInUse: a second server on a data directory whose embedded
// store a first one uses stops at start and says so, with another spool
// directory too; on PostgreSQL the data directory holds only the spool,
// and the message names --spool-dir.
func TestDataDirInUse(t *testing.T) {
	// subtests: each server is stopped before the next starts (serve sets
	// process-wide settings, which a second server in this process would
	// write while the first reads them)
	t.Run("embedded", func(t *testing.T) {
		dataDir := t.TempDir()
		first := config.Defaults()
		first.Listen = "127.0.0.1:0"
		first.DataDir = dataDir
		startLogged(t, first)
		for _, spoolDir := range []string{"", t.TempDir()} {
			second := *first
			second.SpoolDir = spoolDir
			msg := serveMustFail(t, &second).Error()
			want := fmt.Sprintf("data directory %s is in use by another reportdb (pid %d)", dataDir, os.Getpid())
			if !strings.Contains(msg, want) || !strings.Contains(msg, "--data-dir") {
				t.Errorf("spool dir %q: %s\nwant %q", spoolDir, msg, want)
			}
		}
	})
	t.Run("postgres", func(t *testing.T) {
		pg := config.Defaults()
		pg.Listen = "127.0.0.1:0"
		pg.DataDir = t.TempDir()
		pg.Database = pgtest.NewDatabase(t)
		startLogged(t, pg)
		second := *pg
		msg := serveMustFail(t, &second).Error()
		if !strings.Contains(msg, "spool") || !strings.Contains(msg, "--spool-dir") || strings.Contains(msg, "data directory") {
			t.Errorf("second instance on PostgreSQL: %s", msg)
		}
		// with its own spool it starts (a process of its own): instances
		// share the database
		startBinary(t, buildBinary(t), false, "--listen", "127.0.0.1:0", "--data-dir", t.TempDir(), "--database", pg.Database)
	})
}
