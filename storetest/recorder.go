package storetest

import (
	"context"
	"errors"

	"reportdb"
	"reportdb/engine"
	"reportdb/schema/dialect"
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
