package httpapi_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"

	"reportdb/engine"
	"reportdb/httpapi"
	"reportdb/internal/benchfleet"
	"reportdb/sqlite"
	"reportdb/store"
	"reportdb/storetest"
)

// countingBackend counts the rows the API reads from the database.
type countingBackend struct {
	engine.Backend
	rows *atomic.Int64
}

func (b countingBackend) Snapshot(ctx context.Context, fn func(store.Querier) error) error {
	return b.Backend.Snapshot(ctx, func(q store.Querier) error { return fn(countingQuerier{q, b.rows}) })
}

func (b countingBackend) Query(ctx context.Context, st store.Statement) (store.Rows, error) {
	return countingQuerier{b.Backend, b.rows}.Query(ctx, st)
}

type countingQuerier struct {
	store.Querier
	rows *atomic.Int64
}

func (q countingQuerier) Query(ctx context.Context, st store.Statement) (store.Rows, error) {
	r, err := q.Querier.Query(ctx, st)
	if err != nil {
		return nil, err
	}
	return countingRows{r, q.rows}, nil
}

type countingRows struct {
	store.Rows
	n *atomic.Int64
}

func (r countingRows) Next() bool {
	ok := r.Rows.Next()
	if ok {
		r.n.Add(1)
	}
	return ok
}

// firstWrite records how many rows had been read when the first body bytes
// were written.
type firstWrite struct {
	*httptest.ResponseRecorder
	rows    *atomic.Int64
	atFirst int64
}

func (w *firstWrite) Write(p []byte) (int, error) {
	if w.atFirst == 0 {
		w.atFirst = w.rows.Load()
	}
	return w.ResponseRecorder.Write(p)
}

// TestResponsesStream: a large result is written while it is read, not
// built in memory first.
func TestResponsesStream(t *testing.T) {
	db, err := sqlite.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var rows atomic.Int64
	h := storetest.NewServer(t, countingBackend{db, &rows})
	for _, r := range benchfleet.Wire8(t, 4) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("POST", "/pdb/cmd/v1?command=store_report&version=8&certname="+r.Certname, bytes.NewReader(r.Body)))
		if rec.Code != 200 {
			t.Fatal(rec.Body.String())
		}
	}
	rows.Store(0)
	w := &firstWrite{ResponseRecorder: httptest.NewRecorder(), rows: &rows}
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/pdb/query/v4/events", nil))
	total := rows.Load()
	if w.Code != 200 || total < 10000 {
		t.Fatalf("status %d, %d rows read", w.Code, total)
	}
	if w.atFirst == 0 || w.atFirst > total/10 {
		t.Fatalf("first bytes written after %d of %d rows: the response is not streamed", w.atFirst, total)
	}
	t.Logf("first write after %d of %d rows", w.atFirst, total)
}

// TestLargeBodiesReuseBuffers: responses several times the pooled body
// buffer, plain and gzip-compressed in turn, so that each request takes
// a buffer another one used, come out whole and identical.
func TestLargeBodiesReuseBuffers(t *testing.T) {
	db, err := sqlite.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	h := storetest.NewServer(t, db)
	for _, r := range benchfleet.Wire8(t, 1) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("POST", "/pdb/cmd/v1?command=store_report&version=8&certname="+r.Certname, bytes.NewReader(r.Body)))
		if rec.Code != 200 {
			t.Fatal(rec.Body.String())
		}
	}
	get := func(path string, gz bool) []byte {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		if gz {
			req.Header.Set("Accept-Encoding", "gzip")
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			t.Fatalf("%s: %d %.200s", path, rec.Code, rec.Body.String())
		}
		body := rec.Body.Bytes()
		if gz {
			if rec.Header().Get("Content-Encoding") != "gzip" {
				t.Fatalf("%s: not compressed", path)
			}
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if body, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
		}
		return body
	}
	events := "/pdb/query/v4/events?order_by=" + url.QueryEscape(`[{"field":"timestamp"},{"field":"resource_title"},{"field":"certname"}]`)
	reports := "/pdb/query/v4/reports?order_by=" + url.QueryEscape(`[{"field":"certname"},{"field":"start_time"}]`)
	want := map[string][]byte{events: get(events, false), reports: get(reports, false)}
	for path, body := range want {
		var rows []json.RawMessage
		if err := json.Unmarshal(body, &rows); err != nil || len(rows) == 0 {
			t.Fatalf("%s: %v, %d rows", path, err, len(rows))
		}
		if len(body) < 2*httpapi.BodyBufferSize {
			t.Fatalf("%s: %d bytes, not more than the buffer", path, len(body))
		}
	}
	for i := 0; i < 2; i++ {
		for _, path := range []string{events, reports} {
			for _, gz := range []bool{true, false} {
				if got := get(path, gz); !bytes.Equal(got, want[path]) {
					t.Fatalf("round %d %s gzip %v: %d bytes differ from the first %d", i, path, gz, len(got), len(want[path]))
				}
			}
		}
	}
}

// failingBackend's statements fail when their first row is read, as a
// query does that the database aborts once it has started (a statement
// timeout, a division by zero in a row, a lost connection).
type failingBackend struct{ engine.Backend }

func (b failingBackend) Snapshot(ctx context.Context, fn func(store.Querier) error) error {
	return b.Backend.Snapshot(ctx, func(q store.Querier) error { return fn(failingQuerier{q}) })
}

func (b failingBackend) Query(ctx context.Context, st store.Statement) (store.Rows, error) {
	return failingQuerier{b.Backend}.Query(ctx, st)
}

type failingQuerier struct{ store.Querier }

func (q failingQuerier) Query(ctx context.Context, st store.Statement) (store.Rows, error) {
	r, err := q.Querier.Query(ctx, st)
	if err != nil {
		return nil, err
	}
	return failingRows{r}, nil
}

type failingRows struct{ store.Rows }

func (failingRows) Next() bool      { return false }
func (failingRows) Err() error      { return errFirstRow }
func (failingRows) Close()          {}
func (failingRows) NumColumns() int { return 1 }

var errFirstRow = errors.New("the database failed at the first row")

// TestErrorAtFirstRow: every endpoint that answers rows sends its status
// only once the first row (or the error) is known, so a query failing at
// its first row is a 500 with PuppetDB's error text, never a 200 with a
// truncated body.
func TestErrorAtFirstRow(t *testing.T) {
	db, err := sqlite.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	h := storetest.NewServer(t, failingBackend{db})
	for _, target := range []string{
		"/pdb/query/v4/events",
		"/pdb/query/v4/events?include_total=true",
		"/pdb/query/v4/event-counts?summarize_by=resource",
		"/pdb/query/v4/event-counts?summarize_by=certname&include_total=true",
		"/pdb/query/v4/aggregate-event-counts?summarize_by=resource",
		"/pdb/query/v4/reports",
		"/pdb/query/v4/reports?pretty=true",
		"/pdb/query/v4/nodes",
		"/pdb/query/v4/environments",
		"/pdb/query/v4?query=" + url.QueryEscape(`["from","reports"]`),
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
		if rec.Code != http.StatusInternalServerError || rec.Body.String() != "An unexpected error occurred while processing the request" {
			t.Errorf("%s: %d %q, want 500 with the error text", target, rec.Code, rec.Body.String())
		}
	}
}
