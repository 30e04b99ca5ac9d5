package httpapi_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"reportdb/internal/benchfleet"
	"reportdb/sqlite"
	"reportdb/store"
	"reportdb/storetest"
)

// countingBackend counts the rows the API reads from the database.
type countingBackend struct {
	store.Backend
	rows *atomic.Int64
}

func (b countingBackend) Snapshot(ctx context.Context, fn func(store.Querier) error) error {
	return b.Backend.Snapshot(ctx, func(q store.Querier) error { return fn(countingQuerier{q, b.rows}) })
}

func (b countingBackend) Query(ctx context.Context, sql string, args []any) (store.Rows, error) {
	return countingQuerier{b.Backend, b.rows}.Query(ctx, sql, args)
}

type countingQuerier struct {
	store.Querier
	rows *atomic.Int64
}

func (q countingQuerier) Query(ctx context.Context, sql string, args []any) (store.Rows, error) {
	r, err := q.Querier.Query(ctx, sql, args)
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
