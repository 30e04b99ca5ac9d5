package storetest

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"reportdb"
	"reportdb/engine"
	"reportdb/internal/conformance"
	"reportdb/internal/testcorpus"
	"reportdb/postgres"
	"reportdb/schema/dialect"
	"reportdb/sqlite"
	"reportdb/store"
)

// Recorder is a backend that stores nothing and answers every statement
// with no rows, recording the statements: the SQL the engine generates in
// a dialect, without a database (the SQL goldens, the access testdata).
type Recorder struct {
	D     dialect.Dialect
	Stmts []store.Statement
}

var _ engine.Backend = (*Recorder)(nil)

// Dialect implements engine.Backend.
func (r *Recorder) Dialect() dialect.Dialect { return r.D }

// StoreReports implements engine.Backend: it stores nothing.
func (r *Recorder) StoreReports(context.Context, []*reportdb.Report) ([]reportdb.Outcome, []error, error) {
	return nil, nil, errors.New("recorder stores nothing")
}

// Snapshot implements engine.Backend.
func (r *Recorder) Snapshot(ctx context.Context, fn func(store.Querier) error) error { return fn(r) }

// Query records st and answers no rows.
func (r *Recorder) Query(_ context.Context, st store.Statement) (store.Rows, error) {
	r.Stmts = append(r.Stmts, st)
	return noRows{}, nil
}

// Ping implements engine.Backend.
func (r *Recorder) Ping(context.Context) error { return nil }

// DeleteReportsBefore implements engine.Backend: nothing is stored.
func (r *Recorder) DeleteReportsBefore(context.Context, int64) (int64, error) { return 0, nil }

// Housekeeping implements engine.Backend: none.
func (r *Recorder) Housekeeping() store.Housekeeping { return store.Housekeeping{} }

// Close implements engine.Backend.
func (r *Recorder) Close() error { return nil }

// DeactivateNode implements engine.Backend: nothing is stored.
func (r *Recorder) DeactivateNode(context.Context, string, int64) (bool, error) { return false, nil }

// ExpireNodes implements engine.Backend: nothing is stored.
func (r *Recorder) ExpireNodes(context.Context, int64, int64) ([]string, error) { return nil, nil }

// PurgeNodes implements engine.Backend: nothing is stored.
func (r *Recorder) PurgeNodes(context.Context, int64, int) ([]string, error) { return nil, nil }

type noRows struct{}

func (noRows) NumColumns() int   { return 0 }
func (noRows) Next() bool        { return false }
func (noRows) Scan(...any) error { return nil }
func (noRows) Err() error        { return nil }
func (noRows) Close()            {}

// RecordCases replays cases (those of the served endpoints) against the
// HTTP API over a Recorder of each dialect reportdb has, SQLite's and
// PostgreSQL's (with the collation of its regular expressions), calling
// fn with the dialect's name after each request has run; the handler is wrapped by wrap when it
// is not nil. It returns what fn wrote, by dialect ("sqlite",
// "postgres"): the SQL goldens and the access paths are recorded so.
func RecordCases(t *testing.T, cases []testcorpus.Case, wrap func(http.Handler) http.Handler,
	fn func(dialect string, c testcorpus.Case, rec *Recorder, out *strings.Builder)) map[string]string {
	out := map[string]string{}
	for _, d := range []struct {
		name    string
		dialect dialect.Dialect
	}{{"sqlite", sqlite.Dialect{}}, {"postgres", postgres.Dialect{RegexCollation: "C.utf8"}}} {
		rec := &Recorder{D: d.dialect}
		h := NewServer(t, rec)
		if wrap != nil {
			h = wrap(h)
		}
		var sb strings.Builder
		for _, c := range cases {
			if !Served(c.Endpoint) {
				continue
			}
			rec.Stmts = rec.Stmts[:0]
			conformance.Do(h, c)
			fn(d.name, c, rec, &sb)
		}
		out[d.name] = sb.String()
	}
	return out
}
