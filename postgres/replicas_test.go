package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"reportdb/internal/pgtest"
	"reportdb/postgres"
	"reportdb/store"
)

// replicaPair opens a DB on a cluster of the test's own with one streaming
// standby as its read replica. The standby cancels at once a statement
// that conflicts with recovery (no delay, no feedback to the primary), so
// that a test can cause a conflict when it wants one.
func replicaPair(t *testing.T) (*postgres.DB, *pgtest.Cluster, *pgtest.Cluster) {
	t.Helper()
	primary := pgtest.NewCluster(t)
	standby := primary.Standby(t)
	standby.Exec(t, "ALTER SYSTEM SET max_standby_streaming_delay = 0")
	standby.Exec(t, "ALTER SYSTEM SET hot_standby_feedback = off")
	standby.Exec(t, "SELECT pg_reload_conf()")
	db, err := postgres.Open(context.Background(), primary.URL(), postgres.Options{
		MaxConns: 4, ReadURLs: []string{standby.URL()}, ReplicaCheckInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	primary.Exec(t, "CREATE TABLE conflict_t AS SELECT g FROM generate_series(1, 1000) g")
	waitFor(t, "replay of the table by a standby in rotation", func() bool {
		var n int
		if standby.TryQueryRow("SELECT count(*) FROM conflict_t", &n) != nil || n != 1000 {
			return false
		}
		s := servers(db)
		return s["replica"].InRotation
	})
	return db, primary, standby
}

func servers(db *postgres.DB) map[string]store.DatabaseServer {
	m := map[string]store.DatabaseServer{}
	for _, s := range db.DatabaseServers() {
		m[s.Role] = s
	}
	return m
}

// conflictWhile runs read on the replica while the primary takes an
// ACCESS EXCLUSIVE lock on the table it reads: replaying the lock cancels
// the replica's statement ("canceling statement due to conflict with
// recovery"). read must return the table's count.
func conflictWhile(t *testing.T, db *postgres.DB, primary *pgtest.Cluster, read func(context.Context) (int64, error)) {
	t.Helper()
	before := servers(db)
	done := make(chan error, 1)
	var n int64
	go func() {
		var err error
		n, err = read(context.Background())
		done <- err
	}()
	time.Sleep(500 * time.Millisecond) // the statement is sleeping on the replica
	primary.Exec(t, "BEGIN; LOCK TABLE conflict_t IN ACCESS EXCLUSIVE MODE; COMMIT")
	if err := <-done; err != nil {
		t.Fatalf("read with a recovery conflict: %v (the conflict must be retried on the primary, not shown)", err)
	}
	if n != 1000 {
		t.Fatalf("count %d, want 1000", n)
	}
	after := servers(db)
	if after["primary"].Queries != before["primary"].Queries+1 || after["replica"].Queries != before["replica"].Queries+1 {
		t.Errorf("reads: primary %d -> %d, replica %d -> %d; want one each (the replica's cancelled, the primary's retry)",
			before["primary"].Queries, after["primary"].Queries, before["replica"].Queries, after["replica"].Queries)
	}
}

const slowCount = "SELECT count(*) FROM conflict_t CROSS JOIN pg_sleep(3)"

func scanCount(rows store.Rows) (int64, error) {
	defer rows.Close()
	var n any
	for rows.Next() {
		if err := rows.Scan(&n); err != nil {
			return 0, err
		}
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	c, ok := n.(int64)
	if !ok {
		return 0, errors.New("no count")
	}
	return c, nil
}

// TestReplicaConflictRetried: a statement a replica cancels for a conflict
// with recovery, before any row, is answered by the primary, through Query
// and through Snapshot.
func TestReplicaConflictRetried(t *testing.T) {
	db, primary, _ := replicaPair(t)
	t.Run("Query", func(t *testing.T) {
		conflictWhile(t, db, primary, func(ctx context.Context) (int64, error) {
			rows, err := db.Query(ctx, store.Statement{SQL: slowCount})
			if err != nil {
				return 0, err
			}
			return scanCount(rows)
		})
	})
	t.Run("Snapshot", func(t *testing.T) {
		conflictWhile(t, db, primary, func(ctx context.Context) (n int64, err error) {
			err = db.Snapshot(ctx, func(q store.Querier) error {
				rows, err := q.Query(ctx, store.Statement{SQL: slowCount})
				if err != nil {
					return err
				}
				n, err = scanCount(rows)
				return err
			})
			return n, err
		})
	})
}

// TestReplicaConsistency: a read that asks for the primary gets it, and one
// that asks to read its writes is answered by the replica once it has
// replayed them, by the primary while replay is paused.
func TestReplicaConsistency(t *testing.T) {
	db, primary, standby := replicaPair(t)
	read := func(c store.Consistency) string {
		before := servers(db)
		rows, err := db.Query(store.WithConsistency(context.Background(), c), store.Statement{SQL: "SELECT count(*) FROM conflict_t"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := scanCount(rows); err != nil {
			t.Fatal(err)
		}
		after := servers(db)
		if after["primary"].Queries > before["primary"].Queries {
			return "primary"
		}
		return "replica"
	}
	if got := read(store.Primary); got != "primary" {
		t.Errorf("primary asked: answered by the %s", got)
	}
	if got := read(store.AnyServer); got != "replica" {
		t.Errorf("any server: answered by the %s", got)
	}
	if got := read(store.ReadYourWrites); got != "replica" {
		t.Errorf("read-your-writes, replica caught up: answered by the %s", got)
	}
	standby.Exec(t, "SELECT pg_wal_replay_pause()")
	primary.Exec(t, "INSERT INTO conflict_t VALUES (0)")
	if got := read(store.ReadYourWrites); got != "primary" {
		t.Errorf("read-your-writes, replay paused behind a write: answered by the %s", got)
	}
	standby.Exec(t, "SELECT pg_wal_replay_resume()")
}

// TestPrimaryUpWithoutReplicas: without replicas nothing checks the
// primary in the background; its state says whether it answers now.
func TestPrimaryUpWithoutReplicas(t *testing.T) {
	c := pgtest.NewCluster(t)
	db, err := postgres.Open(context.Background(), c.URL(), postgres.Options{MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if s := db.DatabaseServers(); len(s) != 1 || s[0].Role != "primary" || !s[0].Up || s[0].Server != c.HostPort() {
		t.Fatalf("running primary: %+v", s)
	}
	c.Stop(t)
	if s := db.DatabaseServers(); len(s) != 1 || s[0].Up {
		t.Fatalf("stopped primary: %+v", s)
	}
	c.Start(t)
	waitFor(t, "the primary up again", func() bool { return db.DatabaseServers()[0].Up })
}
