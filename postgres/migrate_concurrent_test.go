package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"reportdb/postgres"
)

// TestMigration0011OnExistingData: migration 0011 applied to a database
// that has events in several day partitions, the old timestamp index in
// place, and a partition's new index left behind (built, not attached) by
// an interrupted run, ends with the four-column index valid on every
// partition under the old name, the old one gone, the migration recorded,
// and the data untouched.
func TestMigration0011OnExistingData(t *testing.T) {
	u, db, h := newServer(t)
	now := time.Now().UnixMilli()
	for d := 0; d < 3; d++ { // three day partitions
		cn := fmt.Sprintf("mig%02d.example.com", d)
		submit(t, h, cn, reportBody(cn, now-int64(d)*86_400_000))
	}
	conn := getConn(t, u)
	defer conn.Close(context.Background())
	ctx := context.Background()
	var events int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM resource_events").Scan(&events); err != nil || events != 3 {
		t.Fatalf("%d events (%v), want 3", events, err)
	}
	var part string
	if err := conn.QueryRow(ctx, `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		WHERE i.inhparent = 'resource_events'::regclass ORDER BY 1 LIMIT 1`).Scan(&part); err != nil {
		t.Fatal(err)
	}
	// back to before 0011, with an interrupted run's leftovers
	for _, s := range []string{
		"DROP INDEX resource_events_timestamp",
		"CREATE INDEX resource_events_timestamp ON resource_events (timestamp)",
		"DELETE FROM reportdb_schema_migrations WHERE version = 11",
		"CREATE INDEX resource_events_timestamp_filters ON ONLY resource_events (timestamp, status, resource_type, resource_title)",
		"CREATE INDEX " + part + "_ts_filters ON " + part + " (timestamp, status, resource_type, resource_title)",
	} {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	var cols, valid, parts, attached, old int
	if err := conn.QueryRow(ctx, `SELECT x.indnkeyatts, x.indisvalid::int FROM pg_index x
		WHERE x.indexrelid = 'resource_events_timestamp'::regclass`).Scan(&cols, &valid); err != nil {
		t.Fatal(err)
	}
	if cols != 4 || valid != 1 {
		t.Errorf("resource_events_timestamp: %d key columns, valid %d; want 4, 1", cols, valid)
	}
	if err := conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM pg_inherits WHERE inhparent = 'resource_events'::regclass),
		(SELECT count(*) FROM pg_inherits i JOIN pg_index x ON x.indexrelid = i.inhrelid
		 WHERE i.inhparent = 'resource_events_timestamp'::regclass AND x.indisvalid AND x.indnkeyatts = 4),
		(SELECT count(*) FROM pg_class WHERE relname = 'resource_events_timestamp_filters')`).Scan(&parts, &attached, &old); err != nil {
		t.Fatal(err)
	}
	if parts < 3 || attached != parts || old != 0 {
		t.Errorf("%d partitions, %d with the index attached and valid, %d indexes left under the build name", parts, attached, old)
	}
	var recorded bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM reportdb_schema_migrations WHERE version = 11)").Scan(&recorded); err != nil || !recorded {
		t.Errorf("migration 11 recorded: %v (%v)", recorded, err)
	}
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM resource_events").Scan(&events); err != nil || events != 3 {
		t.Errorf("%d events after the migration (%v), want 3", events, err)
	}
	// and a second start finds nothing to do
	db2, err := postgres.Open(ctx, u, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db2.Close()
}
