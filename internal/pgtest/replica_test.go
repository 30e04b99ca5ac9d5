package pgtest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// waitRows waits until sql (a count) answers want on c (the table may
// not be there yet either).
func waitRows(t *testing.T, c *Cluster, sql string, want int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		var n int
		err := c.TryQueryRow(sql, &n)
		if err == nil && n == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s on %s: %d (%v) after %v, want %d", sql, c.HostPort(), n, err, within, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestStandby: a row written on the primary is visible on the standby
// within seconds; paused replay holds it back; the promoted standby
// accepts writes; a killed primary refuses connections.
func TestStandby(t *testing.T) {
	primary := NewCluster(t)
	standby := primary.Standby(t)
	if standby.URL() == primary.URL() || standby.Port() == primary.Port() {
		t.Fatalf("the standby has the primary's address: %s", standby.HostPort())
	}
	if want := "127.0.0.1:"; !strings.HasPrefix(standby.HostPort(), want) {
		t.Errorf("HostPort %q", standby.HostPort())
	}
	var recovering bool
	standby.QueryRow(t, "SELECT pg_is_in_recovery()", &recovering)
	if !recovering {
		t.Fatal("the standby is not in recovery")
	}
	var feedback string
	standby.QueryRow(t, "SHOW hot_standby_feedback", &feedback)
	if feedback != "on" {
		t.Errorf("hot_standby_feedback = %s", feedback)
	}
	var senders int
	primary.QueryRow(t, "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'", &senders)
	if senders != 1 {
		t.Errorf("%d streaming standbys on the primary", senders)
	}

	primary.Exec(t, "CREATE TABLE t (id int)")
	start := time.Now()
	primary.Exec(t, "INSERT INTO t VALUES (1)")
	waitRows(t, standby, "SELECT count(*) FROM t", 1, 5*time.Second)
	t.Logf("replicated in %v", time.Since(start))

	// a standby refuses writes
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, standby.URL())
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.Exec(ctx, "INSERT INTO t VALUES (9)")
	conn.Close(ctx)
	if err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("a write on the standby: %v", err)
	}

	// paused replay holds new rows back
	standby.Exec(t, "SELECT pg_wal_replay_pause()")
	primary.Exec(t, "INSERT INTO t VALUES (2)")
	time.Sleep(time.Second)
	var n int
	standby.QueryRow(t, "SELECT count(*) FROM t", &n)
	if n != 1 {
		t.Errorf("%d rows on the paused standby, want 1", n)
	}
	standby.Exec(t, "SELECT pg_wal_replay_resume()")
	waitRows(t, standby, "SELECT count(*) FROM t", 2, 5*time.Second)

	// synchronous: a commit waits for the standby; the standby is not
	// synchronous itself once promoted (it would wait for nobody forever)
	primary.SetSynchronous(t, true)
	var syncState string
	primary.QueryRow(t, "SELECT sync_state FROM pg_stat_replication", &syncState)
	if syncState != "sync" {
		t.Errorf("sync_state = %q", syncState)
	}
	primary.Exec(t, "INSERT INTO t VALUES (3)")
	waitRows(t, standby, "SELECT count(*) FROM t", 3, 5*time.Second)
	second := primary.Standby(t) // made while the primary is synchronous
	var names string
	second.QueryRow(t, "SHOW synchronous_standby_names", &names)
	if names != "" {
		t.Errorf("the standby made of a synchronous primary has synchronous_standby_names %q", names)
	}

	// the primary crashes; the standby is promoted and takes writes
	primary.Kill(t)
	if err := ping(primary.URL()); err == nil {
		t.Fatal("the killed primary answers")
	}
	standby.Promote(t)
	standby.QueryRow(t, "SELECT pg_is_in_recovery()", &recovering)
	if recovering {
		t.Fatal("the promoted standby is still in recovery")
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err = pgx.Connect(ctx, standby.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "INSERT INTO t VALUES (4)"); err != nil {
		t.Fatalf("a write on the promoted standby: %v", err)
	}
	waitRows(t, standby, "SELECT count(*) FROM t", 4, time.Second)

	// a standby of the new primary follows it
	third := standby.Standby(t)
	standby.Exec(t, "INSERT INTO t VALUES (5)")
	waitRows(t, third, "SELECT count(*) FROM t", 5, 5*time.Second)
}
