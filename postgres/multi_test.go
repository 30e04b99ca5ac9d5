package postgres_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"reportdb/internal/pgtest"
	"reportdb/postgres"
	"reportdb/store"
	"reportdb/storetest"
)

func openURL(t *testing.T, u string) *postgres.DB {
	db, err := postgres.Open(context.Background(), u, postgres.Options{MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// newServer opens a fresh test database and serves it: its URL, the
// backend and the HTTP handler.
func newServer(t *testing.T) (string, *postgres.DB, http.Handler) {
	u := pgtest.NewDatabase(t)
	db := openURL(t, u)
	return u, db, storetest.NewServer(t, db)
}

func submit(t *testing.T, h http.Handler, certname string, body []byte) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/pdb/cmd/v1?command=store_report&version=8&certname="+certname, bytes.NewReader(body)))
	if rec.Code != 200 {
		t.Errorf("submit %s: %d %s", certname, rec.Code, rec.Body.String())
	}
}

func getRows(t *testing.T, h http.Handler, path string, q url.Values) []map[string]any {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", path+"?"+q.Encode(), nil))
	var rows []map[string]any
	if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &rows) != nil {
		t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body.String())
	}
	return rows
}

// reportBody builds a wire v8 report for certname with the given producer
// timestamp (Unix ms).
func reportBody(certname string, ts int64) []byte {
	t := time.UnixMilli(ts).UTC().Format("2006-01-02T15:04:05.000Z")
	return []byte(fmt.Sprintf(`{"certname":%q,"puppet_version":"7.23.0","report_format":12,"configuration_version":"%d",
	 "start_time":%q,"end_time":%q,"producer_timestamp":%q,"producer":"p","corrective_change":null,"noop":false,
	 "noop_pending":false,"transaction_uuid":null,"catalog_uuid":null,"code_id":null,"cached_catalog_status":null,
	 "environment":"production","status":"changed","metrics":[],"logs":[],"resources":[{"skipped":false,
	 "timestamp":%q,"resource_type":"File","resource_title":"/tmp/x","file":null,"line":null,"containment_path":null,
	 "corrective_change":null,"events":[{"status":"success","timestamp":%q,"property":"ensure","new_value":"file",
	 "old_value":"absent","message":null,"corrective_change":null}]}]}`, certname, ts, t, t, t, t, t))
}

// TestTwoInstances: a report acknowledged by one instance is immediately
// visible through another instance on the same database.
func TestTwoInstances(t *testing.T) {
	u := pgtest.NewDatabase(t)
	a := storetest.NewServer(t, openURL(t, u))
	b := storetest.NewServer(t, openURL(t, u))
	base := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC).UnixMilli()
	for i := 0; i < 20; i++ {
		cn := fmt.Sprintf("n%d.example", i)
		submit(t, a, cn, reportBody(cn, base+int64(i)))
		rows := getRows(t, b, "/pdb/query/v4/reports", url.Values{"query": {`["=","certname","` + cn + `"]`}})
		if len(rows) != 1 {
			t.Fatalf("report %d acknowledged by A not visible through B (%d rows)", i, len(rows))
		}
	}
}

// TestConcurrentLatestReport: two instances ingest reports of the same
// nodes concurrently, in random order; each node's latest report must be
// the one with the greatest producer_timestamp.
func TestConcurrentLatestReport(t *testing.T) {
	u := pgtest.NewDatabase(t)
	servers := []http.Handler{storetest.NewServer(t, openURL(t, u)), storetest.NewServer(t, openURL(t, u))}
	base := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC).UnixMilli()
	const nodes, perNode = 5, 40
	type job struct {
		cn string
		ts int64
	}
	var jobs []job
	for n := 0; n < nodes; n++ {
		for i := 0; i < perNode; i++ {
			// spread over three days so several event partitions are in play
			jobs = append(jobs, job{fmt.Sprintf("node%d", n), base + int64(i)*int64(time.Hour/time.Millisecond)*2 + int64(n)})
		}
	}
	rand.New(rand.NewSource(1)).Shuffle(len(jobs), func(i, j int) { jobs[i], jobs[j] = jobs[j], jobs[i] })
	var wg sync.WaitGroup
	ch := make(chan job)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(h http.Handler) {
			defer wg.Done()
			for j := range ch {
				submit(t, h, j.cn, reportBody(j.cn, j.ts))
			}
		}(servers[w%2])
	}
	for _, j := range jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()
	for n := 0; n < nodes; n++ {
		cn := fmt.Sprintf("node%d", n)
		want := time.UnixMilli(base + int64(perNode-1)*int64(time.Hour/time.Millisecond)*2 + int64(n)).UTC().Format("2006-01-02T15:04:05.000Z")
		for _, h := range servers {
			rows := getRows(t, h, "/pdb/query/v4/reports", url.Values{"query": {`["and",["=","certname","` + cn + `"],["=","latest_report?",true]]`}})
			if len(rows) != 1 || rows[0]["producer_timestamp"] != want {
				var got []any
				for _, r := range rows {
					got = append(got, r["producer_timestamp"])
				}
				t.Fatalf("%s latest = %v, want %s", cn, got, want)
			}
		}
		all := getRows(t, servers[0], "/pdb/query/v4/events", url.Values{"query": {`["=","certname","` + cn + `"]`}})
		if len(all) != perNode {
			t.Fatalf("%s: %d events, want %d", cn, len(all), perNode)
		}
	}
}

// TestConcurrentStartup: instances starting together on an empty database
// migrate it once, without errors.
func TestConcurrentStartup(t *testing.T) {
	u := pgtest.NewDatabase(t)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, err := postgres.Open(context.Background(), u, postgres.Options{MaxConns: 2})
			if err != nil {
				errs <- err
				return
			}
			db.Close()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestRetentionDropsPartitions: expired reports go with their events;
// whole days of events are dropped as partitions.
func TestRetentionDropsPartitions(t *testing.T) {
	u, db, h := newServer(t)
	day := int64(24 * time.Hour / time.Millisecond)
	base := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	for d := int64(0); d < 5; d++ {
		for i := int64(0); i < 3; i++ {
			cn := fmt.Sprintf("n%d", i)
			submit(t, h, cn, reportBody(cn, base+d*day+i*3600000+1000))
		}
	}
	partitions := func() int {
		var n int
		conn := getConn(t, u)
		defer conn.Close(context.Background())
		// the test's days (March 2025); partitions around today also exist
		conn.QueryRow(context.Background(), `SELECT count(*) FROM pg_inherits i JOIN pg_class p ON p.oid = i.inhparent
			JOIN pg_class c ON c.oid = i.inhrelid WHERE p.relname = 'resource_events' AND c.relname LIKE 'resource_events_202503%'`).Scan(&n)
		return n
	}
	if n := partitions(); n != 5 {
		t.Fatalf("%d partitions, want 5", n)
	}
	// cutoff in the middle of day 2: days 0 and 1 are dropped whole, day 2
	// loses its first report
	cutoff := base + 2*day + 2*3600000
	var steps store.Steps
	n, err := db.DeleteReportsBefore(store.WithSteps(context.Background(), &steps), cutoff)
	if err != nil {
		t.Fatal(err)
	}
	if n != 8 {
		t.Fatalf("deleted %d reports, want 8", n)
	}
	// the run timed its steps for its log line: two days of each table
	// detached and dropped, the keys, one batch for day 2, the rest
	for _, step := range []string{"detach resource_events×2=", "drop resource_events×2=", "drop reports×2=",
		"report_keys=", "report_keys_archive=", " batches=", "resource_latest=", "environments="} {
		if !strings.Contains(steps.String(), step) {
			t.Errorf("steps %q lack %q", steps.String(), step)
		}
	}
	if n := partitions(); n != 3 {
		t.Fatalf("%d partitions after retention, want 3", n)
	}
	// the dropped days' spans of event timestamps go with them
	var spans int
	conn := getConn(t, u)
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM event_time_bounds
		WHERE min_ts < $1`, base+2*day-3600000).Scan(&spans); err != nil || spans != 0 {
		t.Errorf("%d spans of dropped days left (%v)", spans, err)
	}
	conn.Close(context.Background())
	events := getRows(t, h, "/pdb/query/v4/events", nil)
	if len(events) != 7 {
		t.Fatalf("%d events left, want 7", len(events))
	}
	for _, e := range events {
		if ts, _ := time.Parse(time.RFC3339, e["timestamp"].(string)); ts.UnixMilli() < cutoff {
			t.Fatalf("expired event kept: %v", e["timestamp"])
		}
	}
	// a report for an expired day can be stored again: its partition is
	// recreated, also by an instance that had seen the partition before
	// another instance's retention dropped it
	other := storetest.NewServer(t, openURL(t, u))
	submit(t, other, "seen", reportBody("seen", base+day+5000))
	if _, err := db.DeleteReportsBefore(context.Background(), base+2*day); err != nil {
		t.Fatal(err)
	}
	submit(t, h, "late", reportBody("late", base+1000))
	submit(t, other, "late2", reportBody("late2", base+day+6000))
	for _, cn := range []string{"late", "late2"} {
		if rows := getRows(t, h, "/pdb/query/v4/events", url.Values{"query": {`["=","certname","` + cn + `"]`}}); len(rows) != 1 {
			t.Fatalf("%s report events: %d", cn, len(rows))
		}
	}
}

// TestExplain: explain=analyze returns PostgreSQL's JSON plan.
func TestExplain(t *testing.T) {
	h := storetest.NewServer(t, openURL(t, pgtest.NewDatabase(t)))
	submit(t, h, "a", reportBody("a", time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC).UnixMilli()))
	rows := getRows(t, h, "/pdb/query/v4/events", url.Values{"query": {`["=","certname","a"]`}, "explain": {"analyze"}})
	if len(rows) != 1 {
		t.Fatalf("explain rows: %v", rows)
	}
	plan, ok := rows[0]["query plan"].([]any)
	if !ok || len(plan) == 0 {
		t.Fatalf("explain plan: %v", rows[0])
	}
	if _, ok := plan[0].(map[string]any)["Plan"]; !ok {
		t.Fatalf("not PostgreSQL's JSON plan: %v", plan[0])
	}
	// the access path the optimiser chose, and why
	if access, _ := rows[0]["access"].(string); !strings.HasPrefix(access, "scan\n") || !strings.Contains(access, "no fast path") {
		t.Fatalf("explain access: %q", rows[0]["access"])
	}
	rows = getRows(t, h, "/pdb/query/v4/reports", url.Values{"order_by": {`[{"field":"end_time","order":"desc"}]`},
		"limit": {"10"}, "explain": {"analyze"}})
	if access, _ := rows[0]["access"].(string); !strings.HasPrefix(access, "narrowed(end_time desc)") {
		t.Fatalf("explain access of the newest reports: %q", rows[0]["access"])
	}
}

// TestRetentionDoesNotStallIngest: while a long transaction reads the
// events of a day that retention drops, retention waits for it, and
// ingest and queries go on meanwhile (a DROP of the partition would queue
// an exclusive lock on the whole events table, and every insert and query
// behind it, until the reader ends).
func TestRetentionDoesNotStallIngest(t *testing.T) {
	u, db, h := newServer(t)
	day := int64(24 * time.Hour / time.Millisecond)
	old := time.Now().UnixMilli() - 10*day
	for i := int64(0); i < 3; i++ {
		cn := fmt.Sprintf("n%d", i)
		submit(t, h, cn, reportBody(cn, old+i*1000))
	}
	ctx := context.Background()
	reader := getConn(t, u)
	defer reader.Close(ctx)
	tx, err := reader.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := tx.QueryRow(ctx, "SELECT count(*) FROM resource_events").Scan(&n); err != nil || n != 3 {
		t.Fatalf("%d events, %v", n, err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := db.DeleteReportsBefore(ctx, old+day)
		done <- err
	}()
	// retention is now waiting for the reader; ingest and queries are not
	time.Sleep(500 * time.Millisecond)
	went := make(chan int, 1)
	go func() {
		for i := 0; i < 3; i++ {
			cn := fmt.Sprintf("new%d", i)
			submit(t, h, cn, reportBody(cn, time.Now().UnixMilli()-int64(i)*1000))
		}
		went <- len(getRows(t, h, "/pdb/query/v4/events", url.Values{"query": {`["~","certname","^new"]`}}))
	}()
	select {
	case n := <-went:
		if n != 3 {
			t.Fatalf("new events: %d", n)
		}
	case <-time.After(30 * time.Second):
		tx.Rollback(ctx)
		t.Fatal("ingest and queries waited for retention, which waited for the reader")
	}
	select {
	case err := <-done:
		t.Fatalf("retention finished while the reader still held the partition: %v", err)
	default:
	}
	tx.Rollback(ctx)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if rows := getRows(t, h, "/pdb/query/v4/events", nil); len(rows) != 3 {
		t.Fatalf("%d events after retention, want the 3 new ones", len(rows))
	}
}
