package postgres_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
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
	mustExec(t, conn,
		"DROP INDEX resource_events_timestamp",
		"CREATE INDEX resource_events_timestamp ON resource_events (timestamp)",
		"DELETE FROM reportdb_schema_migrations WHERE version = 11",
		"CREATE INDEX resource_events_timestamp_filters ON ONLY resource_events (timestamp, status, resource_type, resource_title)",
		"CREATE INDEX "+part+"_ts_filters ON "+part+" (timestamp, status, resource_type, resource_title)",
	)
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

// TestMigration0014OnExistingData: migration 0014 applied to a database
// with events in several day partitions, the title indexes as they were
// (titles themselves), and a partition's new index left behind by an
// interrupted run, ends with every title index on title_key, valid and
// attached on every partition, resource_latest keyed by its unique index
// instead of its old primary key, the data untouched, and a report with
// a title too long for the old indexes stored and found.
func TestMigration0014OnExistingData(t *testing.T) {
	u, db, h := newServer(t)
	now := time.Now().UnixMilli()
	for d := 0; d < 3; d++ {
		cn := fmt.Sprintf("mig14-%02d.example.com", d)
		submit(t, h, cn, reportBody(cn, now-int64(d)*86_400_000))
	}
	conn := getConn(t, u)
	defer conn.Close(context.Background())
	ctx := context.Background()
	var part string
	if err := conn.QueryRow(ctx, `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		WHERE i.inhparent = 'resource_events'::regclass ORDER BY 1 LIMIT 1`).Scan(&part); err != nil {
		t.Fatal(err)
	}
	count := func(q string) int {
		t.Helper()
		var n int
		if err := conn.QueryRow(ctx, q).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	events, latest := count("SELECT count(*) FROM resource_events"), count("SELECT count(*) FROM resource_latest")
	if events != 3 || latest != 3 {
		t.Fatalf("%d events, %d resource_latest rows; want 3, 3", events, latest)
	}
	// back to before 0014, with an interrupted run's leftovers
	mustExec(t, conn,
		"DROP INDEX resource_events_title",
		"CREATE INDEX resource_events_title ON resource_events (resource_title)",
		"DROP INDEX resource_events_timestamp",
		"CREATE INDEX resource_events_timestamp ON resource_events (timestamp, status, resource_type, resource_title)",
		"DROP INDEX resource_latest_key",
		"ALTER TABLE resource_latest ADD PRIMARY KEY (certname, resource_type, resource_title, property_key, name_key)",
		"DELETE FROM reportdb_schema_migrations WHERE version = 14",
		"CREATE INDEX resource_events_title_key ON ONLY resource_events (title_key(resource_title))",
		"CREATE INDEX "+part+"_title_key ON "+part+" (title_key(resource_title))",
	)
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	parts := count("SELECT count(*) FROM pg_inherits WHERE inhparent = 'resource_events'::regclass")
	for _, idx := range []string{"resource_events_title", "resource_events_timestamp"} {
		var def string
		if err := conn.QueryRow(ctx, "SELECT pg_get_indexdef($1::regclass)", idx).Scan(&def); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(def, "title_key(resource_title)") {
			t.Errorf("%s: %s, want it on title_key(resource_title)", idx, def)
		}
		attached := count(`SELECT count(*) FROM pg_inherits i JOIN pg_index x ON x.indexrelid = i.inhrelid
			WHERE i.inhparent = '` + idx + `'::regclass AND x.indisvalid`)
		if parts < 3 || attached != parts {
			t.Errorf("%s: attached and valid on %d of %d partitions", idx, attached, parts)
		}
	}
	if n := count(`SELECT count(*) FROM pg_index x WHERE x.indexrelid = 'resource_latest_key'::regclass
		AND x.indisunique AND x.indisvalid`); n != 1 {
		t.Errorf("resource_latest_key: %d valid unique indexes", n)
	}
	if n := count(`SELECT count(*) FROM pg_constraint WHERE conrelid = 'resource_latest'::regclass AND contype = 'p'`); n != 0 {
		t.Errorf("resource_latest still has its primary key")
	}
	if n := count("SELECT count(*) FROM pg_class WHERE relname IN ('resource_events_title_key', 'resource_events_timestamp_key')"); n != 0 {
		t.Errorf("%d indexes left under their build names", n)
	}
	if n := count("SELECT count(*) FROM reportdb_schema_migrations WHERE version = 14"); n != 1 {
		t.Errorf("migration 14 recorded %d times", n)
	}
	if e, l := count("SELECT count(*) FROM resource_events"), count("SELECT count(*) FROM resource_latest"); e != events || l != latest {
		t.Errorf("%d events, %d resource_latest rows after the migration; want %d, %d", e, l, events, latest)
	}
	// a title PostgreSQL could not have indexed as it is (incompressible,
	// over 2.7 kB) is stored, and its resource_latest row merges with the
	// next report's
	rng := rand.New(rand.NewPCG(3, 5))
	long := make([]byte, 6000)
	for i := range long {
		long[i] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"[rng.IntN(62)]
	}
	for i := 0; i < 2; i++ {
		body := bytes.Replace(reportBody("long-title.example", now+int64(i)*60_000), []byte(`"resource_title":"/tmp/x"`),
			[]byte(`"resource_title":"`+string(long)+`"`), 1)
		if !bytes.Contains(body, long) {
			t.Fatal("test setup: no resource_title to replace")
		}
		submit(t, h, "long-title.example", body)
	}
	if n := count("SELECT count(*) FROM resource_events WHERE resource_title = '" + string(long) + "'"); n != 2 {
		t.Errorf("%d events with the long title, want 2", n)
	}
	if n := count("SELECT count(*) FROM resource_latest WHERE resource_title = '" + string(long) + "'"); n != 1 {
		t.Errorf("%d resource_latest rows of the long title, want 1", n)
	}
}
