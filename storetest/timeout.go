package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"reportdb/engine"
	"reportdb/httpapi"
	"reportdb/ingest"
	"reportdb/store"
)

// RunQueryTimeout checks the timeout parameter of PuppetDB 8 (PDB-4937)
// on every query endpoint, as OpenVoxDB reads it (parse-timeout and
// wrap-typical-query in src/puppetlabs/puppetdb/http/query.clj,
// global-params in src/puppetlabs/puppetdb/http/handlers.clj, the timeout
// URL parameter in documentation/api/query/v4/overview.markdown): whole or
// decimal seconds, 0 no limit, anything else a 400; the deadline is the
// smaller of it and the server's --query-timeout. A query past the
// client's timeout is cancelled in the database and answered 503, as one
// past --query-timeout; so is one whose client goes away (no answer).
func RunQueryTimeout(t *testing.T, open Opener) {
	b := open(t)
	rs := []string{"success", "failure", "noop"}
	mustStore(t, b, Report(t, "timeout.example", "2025-01-01T10:00:00Z", "2025-01-01T09:59:00Z", "", rs...))
	slow := &slowBackend{Backend: b, started: make(chan struct{}, 100)}
	long := serveTimeout(t, slow, time.Minute)
	hash := latestHashes(t, b, "timeout.example")[0]

	// every query endpoint: the seven entry points (the root one with PQL
	// and the AST), their sub-paths, PuppetDB 2's v3 paths
	entries := []string{
		"/pdb/query/v4/events",
		"/pdb/query/v4/event-counts?summarize_by=resource",
		"/pdb/query/v4/aggregate-event-counts?summarize_by=resource",
		"/pdb/query/v4/reports",
		"/pdb/query/v4/nodes",
		"/pdb/query/v4/environments",
		"/pdb/query/v4?query=" + url.QueryEscape(`events[certname] { status = "failure" }`),
		"/pdb/query/v4?query=" + url.QueryEscape(`["from","reports",["=","certname","timeout.example"]]`),
	}
	subPaths := []string{
		"/pdb/query/v4/reports/" + hash + "/events",
		"/pdb/query/v4/reports/" + hash + "/metrics",
		"/pdb/query/v4/reports/" + hash + "/logs",
		"/pdb/query/v4/environments/production",
		"/pdb/query/v4/environments/production/events",
		"/pdb/query/v4/environments/production/reports",
		"/pdb/query/v4/nodes/timeout.example",
		"/v3/events",
		"/v3/event-counts?summarize-by=certname",
	}
	// pathsWithBody take their parameters from a POSTed body too
	withBody := func(path string) bool {
		return !strings.Contains(path, "/metrics") && !strings.Contains(path, "/logs") &&
			!strings.HasSuffix(path, "/production") && !strings.HasSuffix(path, "/timeout.example")
	}

	t.Run("Accepted", func(t *testing.T) {
		for _, path := range append(entries, subPaths...) {
			code, want := do(t, long, "GET", path, "")
			if code != 200 {
				t.Fatalf("GET %s: %d %.300s", path, code, want)
			}
			for _, v := range []string{"30", "0", "0.0", "2.5", ".5", "007", "99999999999999999999999"} {
				if code, got := do(t, long, "GET", withParam(path, "timeout="+v), ""); code != 200 || got != want {
					t.Errorf("GET %s timeout=%s: %d %.300s, want 200 %.300s", path, v, code, got, want)
				}
			}
			if !withBody(path) {
				continue
			}
			for _, v := range []string{`30`, `0`, `2.5`, `1e3`, `"2.5"`, `"0"`} {
				if code, got := do(t, long, "POST", path, `{"timeout":`+v+`}`); code != 200 || got != want {
					t.Errorf("POST %s {timeout: %s}: %d %.300s, want 200 %.300s", path, v, code, got, want)
				}
			}
		}
	})

	t.Run("Invalid", func(t *testing.T) {
		msg := func(x string) string { return "Query timeout must be non-negative number, not " + x }
		for _, path := range entries {
			for v, want := range map[string]string{
				"-1": msg("-1"), "abc": msg("abc"), "1e3": msg("1e3"), "": msg(""), "1.": msg("1."),
				"+1": msg("+1"), " 1": msg(" 1"), "0x10": msg("0x10"), "1.5.2": msg("1.5.2"), "-0.5": msg("-0.5"),
			} {
				code, got := do(t, long, "GET", withParam(path, "timeout="+url.QueryEscape(v)), "")
				if code != 400 || got != want {
					t.Errorf("GET %s timeout=%q: %d %q, want 400 %q", path, v, code, got, want)
				}
			}
			// PuppetDB prints the value as Java prints it (MessageFormat)
			for v, want := range map[string]string{
				`-1`: msg("-1"), `-0.5`: msg("-0.5"), `"-1"`: msg("-1"), `"ten"`: msg("ten"), `true`: msg("true"),
				`null`: msg("null"), `[1,"a"]`: msg(`[1 "a"]`), `{"s":1}`: msg("{:s 1}"),
			} {
				code, got := do(t, long, "POST", path, `{"timeout":`+v+`}`)
				if code != 400 || got != want {
					t.Errorf("POST %s {timeout: %s}: %d %q, want 400 %q", path, v, code, got, want)
				}
			}
		}
		// PuppetDB reads the timeout of /nodes/<certname> (wrap-typical-
		// query) and only checks the names of the other single objects'
		// parameters (validate-query-params), whatever their values
		if code, got := do(t, long, "GET", "/pdb/query/v4/nodes/timeout.example?timeout=x", ""); code != 400 || got != msg("x") {
			t.Errorf("/nodes/<certname> timeout=x: %d %q", code, got)
		}
		for _, path := range []string{"/pdb/query/v4/environments/production", "/pdb/query/v4/reports/" + hash + "/logs"} {
			if code, got := do(t, long, "GET", path+"?timeout=x", ""); code != 200 {
				t.Errorf("%s timeout=x: %d %q, want 200", path, code, got)
			}
		}
		// checked after explain, before the distinct_* combination
		for target, want := range map[string]string{
			"/pdb/query/v4/events?explain=no&timeout=x":                   "Illegal value 'no' for :explain; expected `analyze`.",
			"/pdb/query/v4/events?distinct_resources=true&timeout=x":      msg("x"),
			"/pdb/query/v4/events?limit=0&timeout=x":                      "Illegal value '0' for :limit; expected a positive non-zero integer.",
			"/pdb/query/v4/event-counts?timeout=x":                        "Missing required query parameter 'summarize_by'",
			"/pdb/query/v4/aggregate-event-counts?summarize_by=x&timeout": msg(""),
		} {
			if code, got := do(t, long, "GET", target, ""); code != 400 || got != want {
				t.Errorf("GET %s: %d %q, want 400 %q", target, code, got, want)
			}
		}
	})

	// slow on every statement: each runs until its context ends
	slow.mode.Store(modeSlow)
	defer slow.mode.Store(modeOff)
	pg := isPostgres(b)

	t.Run("StopsSlowQuery", func(t *testing.T) {
		for _, path := range append(entries, "/pdb/query/v4/nodes/timeout.example",
			"/pdb/query/v4/environments/production", "/pdb/query/v4/reports/"+hash+"/logs") {
			start := time.Now()
			code, got := do(t, long, "GET", withParam(path, "timeout=0.5"), "")
			took := time.Since(start)
			if code != http.StatusServiceUnavailable || got != "The query was cancelled because it ran longer than its timeout parameter (0.5 seconds)" {
				t.Errorf("GET %s timeout=0.5: %d %q after %v", path, code, got, took)
			}
			if took < 500*time.Millisecond || took > 10*time.Second {
				t.Errorf("GET %s timeout=0.5: answered after %v", path, took)
			}
			slow.waitIdle(t, pg, b, 5*time.Second)
		}
		// the sub-paths' parent checks run before the parameters are read,
		// within the server's limit alone (so does PuppetDB's parent-check)
	})

	t.Run("CannotLengthen", func(t *testing.T) {
		short := serveTimeout(t, slow, 1500*time.Millisecond)
		for _, v := range []string{"0", "60", "1.5"} {
			for _, path := range []string{"/pdb/query/v4/events", "/pdb/query/v4/event-counts?summarize_by=certname"} {
				start := time.Now()
				code, got := do(t, short, "GET", withParam(path, "timeout="+v), "")
				took := time.Since(start)
				if code != http.StatusServiceUnavailable || got != "The query was cancelled because it ran longer than the query timeout" {
					t.Errorf("GET %s timeout=%s: %d %q after %v, want the server's timeout", path, v, code, got, took)
				}
				if took < 1500*time.Millisecond || took > 15*time.Second {
					t.Errorf("GET %s timeout=%s: answered after %v, want the server's 1.5 s", path, v, took)
				}
				slow.waitIdle(t, pg, b, 5*time.Second)
			}
		}
		// a shorter one still applies
		start := time.Now()
		if code, _ := do(t, short, "GET", "/pdb/query/v4/events?timeout=0.2", ""); code != 503 || time.Since(start) > 1400*time.Millisecond {
			t.Errorf("timeout=0.2 under a limit of 1.5 s: %d after %v", code, time.Since(start))
		}
		slow.waitIdle(t, pg, b, 5*time.Second)
	})

	t.Run("ClientGoesAway", func(t *testing.T) {
		for _, path := range []string{"/pdb/query/v4/events", "/pdb/query/v4?query=" + url.QueryEscape("reports {}")} {
			drain(slow.started)
			conn, err := net.Dial("tcp", strings.TrimPrefix(long, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path)
			select {
			case <-slow.started:
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: the query never started", path)
			}
			if pg {
				// the statement is seen running (the observation works)
				deadline := time.Now().Add(5 * time.Second)
				for activeSlow(t, b) == 0 {
					if time.Now().After(deadline) {
						t.Fatalf("%s: the slow statement never showed in pg_stat_activity", path)
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
			// well within the server's minute: the statement runs on
			time.Sleep(300 * time.Millisecond)
			if slow.running.Load() == 0 {
				t.Fatalf("%s: the statement ended before the client went away", path)
			}
			closed := time.Now()
			conn.Close()
			slow.waitIdle(t, pg, b, 3*time.Second)
			t.Logf("%s: the database work stopped %v after the client went away", path, time.Since(closed))
		}
	})

	t.Run("CutWhileStreaming", func(t *testing.T) {
		// rows have been sent when the deadline comes: the answer is cut
		// short, as PuppetDB's is and as reportdb's own limit cuts it
		slow.mode.Store(modeStall)
		short := serveTimeout(t, slow, time.Second)
		for _, target := range []string{"/pdb/query/v4/events?timeout=0.3", "/pdb/query/v4/events"} {
			start := time.Now()
			code, got := do(t, short, "GET", target, "")
			var rows []any
			if code != 200 || !strings.HasPrefix(got, `[{"`) || json.Unmarshal([]byte(got), &rows) == nil {
				t.Errorf("GET %s with rows sent: %d %.200q, want a 200 cut short", target, code, got)
			}
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("GET %s: cut after %v", target, took)
			}
		}
	})
}

// serveTimeout serves the API over b on a loopback port, with a
// --query-timeout of max, and returns its base URL.
func serveTimeout(t *testing.T, b engine.Backend, max time.Duration) string {
	c := ingest.NewCommitter(b, 64)
	t.Cleanup(c.Close)
	h := httpapi.New(httpapi.Config{QueryTimeout: max}, b, c, slog.New(slog.NewTextHandler(io.Discard, nil)))
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

func do(t *testing.T, base, method, target, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, base+target, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func withParam(path, kv string) string {
	if strings.Contains(path, "?") {
		return path + "&" + kv
	}
	return path + "?" + kv
}

func drain(c chan struct{}) {
	for {
		select {
		case <-c:
		default:
			return
		}
	}
}

// The modes of a slowBackend.
const (
	modeOff   = iota
	modeSlow  // every statement is slowSQL
	modeStall // rows are real; after the first, the next waits for the context
)

// slowMarker names slowSQL in pg_stat_activity.
const slowMarker = "storetest-slow-statement"

// slowSQL keeps the database busy (counting, on both stores) until it is
// cancelled: the query language cannot express a statement this slow on
// a small store, and pg_sleep is out of its reach.
const slowSQL = "/* " + slowMarker + " */ WITH RECURSIVE c(x) AS (SELECT CAST(1 AS BIGINT) UNION ALL SELECT x + 1 FROM c) SELECT x FROM c WHERE x = 0"

// slowBackend is a backend whose read statements can be made slow.
type slowBackend struct {
	engine.Backend
	mode    atomic.Int32
	running atomic.Int32
	started chan struct{}
}

func (b *slowBackend) Snapshot(ctx context.Context, fn func(store.Querier) error) error {
	return b.Backend.Snapshot(ctx, func(q store.Querier) error { return fn(slowQuerier{q, b}) })
}

func (b *slowBackend) Query(ctx context.Context, st store.Statement) (store.Rows, error) {
	return slowQuerier{b.Backend, b}.Query(ctx, st)
}

type slowQuerier struct {
	store.Querier
	b *slowBackend
}

func (q slowQuerier) Query(ctx context.Context, st store.Statement) (store.Rows, error) {
	switch q.b.mode.Load() {
	case modeSlow:
		q.b.running.Add(1)
		select {
		case q.b.started <- struct{}{}:
		default:
		}
		// SQLite computes the first row here: the call returns when the
		// statement is interrupted
		rows, err := q.Querier.Query(ctx, store.Statement{SQL: slowSQL})
		if err != nil {
			q.b.end()
			return nil, err
		}
		return &endingRows{Rows: rows, end: q.b.end}, nil
	case modeStall:
		rows, err := q.Querier.Query(ctx, st)
		if err != nil {
			return nil, err
		}
		return &stallingRows{Rows: rows, ctx: ctx}, nil
	}
	return q.Querier.Query(ctx, st)
}

func (b *slowBackend) end() { b.running.Add(-1) }

// waitIdle fails the test unless every slow statement has ended within d:
// returned to its caller (SQLite runs a statement inside that call) and,
// on PostgreSQL, no longer active in the server.
func (b *slowBackend) waitIdle(t *testing.T, pg bool, raw engine.Backend, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for b.running.Load() > 0 || pg && activeSlow(t, raw) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the slow statement still runs %v later (%d open in the store)", d, b.running.Load())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// endingRows notes when a slow statement's rows are closed.
type endingRows struct {
	store.Rows
	once sync.Once
	end  func()
}

func (r *endingRows) Close() {
	r.Rows.Close()
	r.once.Do(r.end)
}

// stallingRows gives the first row, then waits for the context's end.
type stallingRows struct {
	store.Rows
	ctx context.Context
	n   int
	err error
}

func (r *stallingRows) Next() bool {
	if r.n++; r.n > 1 {
		<-r.ctx.Done()
		r.err = r.ctx.Err()
		return false
	}
	return r.Rows.Next()
}

func (r *stallingRows) Err() error {
	if r.err != nil {
		return r.err
	}
	return r.Rows.Err()
}

// isPostgres tells the PostgreSQL store, whose pg_stat_activity shows its
// statements.
func isPostgres(b engine.Backend) bool {
	rows, err := b.Query(context.Background(), store.Statement{SQL: "SELECT count(*) FROM pg_stat_activity"})
	if err != nil {
		return false
	}
	rows.Close()
	return true
}

// activeSlow counts the slow statements PostgreSQL runs for the test's
// database.
func activeSlow(t *testing.T, b engine.Backend) int64 {
	t.Helper()
	rows, err := b.Query(ctx(t), store.Statement{SQL: `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'active'
		AND query LIKE '%' || $1 || '%'`, Args: []any{slowMarker}})
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var n any
	if !rows.Next() {
		t.Fatalf("pg_stat_activity: %v", rows.Err())
	}
	if err := rows.Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n.(int64)
}
