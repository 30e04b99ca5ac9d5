package postgres_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"reportdb"
	"reportdb/internal/pgtest"
	"reportdb/postgres"
	"reportdb/store"
	"reportdb/storetest"
)

const dayMs = int64(24 * time.Hour / time.Millisecond)

// TestPartitionCreationBesideReaders: a report of a day that has no
// partition yet is stored while a reader's transaction holds the events
// table and then reads the reports table: creating the day's partitions
// waits for no reader and no reader waits for it. (Created with CREATE
// TABLE ... PARTITION OF, which locks each parent exclusively in turn, the
// creation held reports, waited for the reader's events, and the reader's
// read of reports deadlocked with it.)
func TestPartitionCreationBesideReaders(t *testing.T) {
	ctx := context.Background()
	u := pgtest.NewDatabase(t)
	db := openURL(t, u)
	reader := getConn(t, u)
	defer reader.Close(ctx)
	// a day far from today: nothing has created its partitions
	r := decodedReport(t, "a.example", time.Now().UnixMilli()+40*dayMs)
	mustExec(t, reader, "BEGIN ISOLATION LEVEL REPEATABLE READ", "SELECT count(*) FROM resource_events")

	stored := make(chan error, 1)
	go func() {
		_, errs, err := db.StoreReports(ctx, []*reportdb.Report{r})
		if err == nil {
			err = errs[0]
		}
		stored <- err
	}()
	// until the report is stored, or the store waits for a lock
	var storeErr error
	done := false
	admin := getConn(t, u)
	defer admin.Close(ctx)
	for deadline := time.Now().Add(30 * time.Second); !done; {
		select {
		case storeErr = <-stored:
			done = true
			continue
		case <-time.After(10 * time.Millisecond):
		}
		var waiting bool
		if err := admin.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks l JOIN pg_stat_activity a
			ON a.pid = l.pid WHERE NOT l.granted AND a.datname = current_database())`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the report is neither stored nor waiting")
		}
	}
	_, readErr := reader.Exec(ctx, "SELECT count(*) FROM reports")
	mustExec(t, reader, "COMMIT")
	if !done {
		storeErr = <-stored
	}
	if storeErr != nil || readErr != nil {
		t.Fatalf("storing a report of a new day beside a reader: store %v, read %v", storeErr, readErr)
	}
	if n := countReports(t, db); n != 1 {
		t.Fatalf("%d reports stored, want 1", n)
	}
}

// testClock is a clock a test moves.
type testClock struct{ ms atomic.Int64 }

func (c *testClock) now() time.Time  { return time.UnixMilli(c.ms.Load()).UTC() }
func (c *testClock) set(t time.Time) { c.ms.Store(t.UnixMilli()) }

// rolloverQueries are expensive queries of every kind that reads the
// events and the reports: distinct resources, a regular expression with
// the total, the aggregate counts, a page of reports with its total.
var rolloverQueries = []struct{ path, query string }{
	{"/pdb/query/v4/event-counts", "summarize_by=resource&distinct_resources=true&distinct_start_time=2031-01-01T00:00:00Z&distinct_end_time=2032-01-01T00:00:00Z&query=" +
		url.QueryEscape(`["=","environment","production"]`)},
	{"/pdb/query/v4/events", "include_total=true&limit=10&query=" + url.QueryEscape(`["~","resource_title","tmp/[0-9]+$"]`)},
	{"/pdb/query/v4/aggregate-event-counts", "summarize_by=certname"},
	{"/pdb/query/v4/event-counts", "summarize_by=certname"},
	{"/pdb/query/v4/reports", "include_total=true&limit=5&order_by=" + url.QueryEscape(`[{"field":"producer_timestamp","order":"desc"}]`) +
		"&query=" + url.QueryEscape(`["~","certname","^n"]`)},
}

// TestDayRolloverUnderQueryLoad drives the store across several UTC
// midnights (its clock is the test's) while expensive queries run without
// pause, and submits at each midnight the last reports of the day that
// ends, the first ones of the day that begins, one of a day long past (an
// import) and one of a day far ahead (an agent whose clock is off). Every
// submission must be stored (200) and no query may fail with a 5xx; the
// background maintenance keeps the partitions of the coming two days
// created.
func TestDayRolloverUnderQueryLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("seconds of queries under load")
	}
	ctx := context.Background()
	u := pgtest.NewDatabase(t)
	var clock testClock
	first := time.Date(2031, 5, 10, 0, 0, 0, 0, time.UTC)
	clock.set(first.Add(23*time.Hour + 59*time.Minute))
	db, err := postgres.Open(ctx, u, postgres.Options{MaxConns: 16, Now: clock.now, PartitionInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	h := storetest.NewServer(t, db)
	admin := getConn(t, u)
	defer admin.Close(ctx)

	var mu sync.Mutex
	var failures []string
	fail := func(format string, args ...any) {
		mu.Lock()
		failures = append(failures, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	submitted := 0
	// submitAll submits the reports of the nodes at the given times, all
	// at once
	submitAll := func(label string, times ...time.Time) {
		var wg sync.WaitGroup
		for i, at := range times {
			cn := fmt.Sprintf("n%02d.example", i)
			evs := make([]int64, 8)
			for j := range evs {
				evs[j] = at.UnixMilli() - int64(j)*1000
			}
			body := eventsReportBody(cn, at.UnixMilli(), evs)
			submitted++
			wg.Add(1)
			go func() {
				defer wg.Done()
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest("POST", "/pdb/cmd/v1?command=store_report&version=8&certname="+cn, bytes.NewReader(body)))
				if rec.Code != http.StatusOK {
					fail("%s: report of %s at %s: %d %s", label, cn, at.Format(time.RFC3339), rec.Code, rec.Body.String())
				}
			}()
		}
		wg.Wait()
	}
	spread := func(from time.Time, n int, step time.Duration) []time.Time {
		out := make([]time.Time, n)
		for i := range out {
			out[i] = from.Add(time.Duration(i) * step)
		}
		return out
	}
	// some rows for the queries to work on
	submitAll("seed", spread(first.Add(20*time.Hour), 12, time.Minute)...)

	stop := make(chan struct{})
	var readers sync.WaitGroup
	var queries atomic.Int64
	for i := 0; i < 6; i++ {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for n := i; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				q := rolloverQueries[n%len(rolloverQueries)]
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest("GET", q.path+"?"+q.query, nil))
				queries.Add(1)
				if rec.Code >= 500 {
					fail("GET %s?%s: %d %s", q.path, q.query, rec.Code, rec.Body.String())
				}
			}
		}()
	}
	// and snapshots of several statements, as a count and its page are
	// read: the events, then the reports
	for i := 0; i < 2; i++ {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				err := db.Snapshot(ctx, func(q store.Querier) error {
					for _, sql := range []string{"SELECT count(*) FROM resource_events", "SELECT count(*) FROM reports"} {
						rows, err := q.Query(ctx, store.Statement{SQL: sql})
						if err != nil {
							return err
						}
						for rows.Next() {
						}
						rows.Close()
						if err := rows.Err(); err != nil {
							return err
						}
					}
					return nil
				})
				queries.Add(1)
				if err != nil {
					fail("snapshot: %v", err)
				}
			}
		}()
	}

	partitionExists := func(parent string, at time.Time) bool {
		var ok bool
		if err := admin.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL",
			postgres.PartitionName(parent, at.UnixMilli())).Scan(&ok); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	const midnights = 4
	for k := 0; k < midnights; k++ {
		day := first.Add(time.Duration(k) * 24 * time.Hour)
		next := day.Add(24 * time.Hour)
		clock.set(day.Add(23*time.Hour + 59*time.Minute))
		submitAll(fmt.Sprintf("day %d, last minute", k), spread(day.Add(23*time.Hour+59*time.Minute), 6, 9*time.Second)...)
		clock.set(next.Add(5 * time.Second))
		// the background maintenance creates the partitions two days
		// ahead of the new day
		for deadline := time.Now().Add(30 * time.Second); !partitionExists("resource_events", next.Add(2*24*time.Hour)); {
			if time.Now().After(deadline) {
				t.Fatalf("midnight %d: no events partition two days ahead of %s", k, next.Format("2006-01-02"))
			}
			time.Sleep(10 * time.Millisecond)
		}
		times := spread(next.Add(10*time.Second), 6, 7*time.Second)
		// a late import and an agent's clock days ahead: days that have no
		// partition
		times = append(times, day.Add(-time.Duration(30+2*k)*24*time.Hour), next.Add(time.Duration(10+k)*24*time.Hour))
		submitAll(fmt.Sprintf("day %d, first minute", k+1), times...)
	}
	close(stop)
	readers.Wait()
	for _, f := range failures {
		t.Error(f)
	}
	if n := countReports(t, db); n != int64(submitted) {
		t.Errorf("%d reports stored, %d submitted", n, submitted)
	}
	t.Logf("%d reports, %d queries", submitted, queries.Load())
}
