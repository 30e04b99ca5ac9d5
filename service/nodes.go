package service

import (
	"context"
	"encoding/json"
	"io"

	"reportdb/engine"
	"reportdb/jsonv"
	"reportdb/query"
)

// Nodes answers plans on the nodes entity from somewhere else than the
// store: in front of an upstream PuppetDB, its nodes merged with
// reportdb's (upstream.Nodes). rows are JSON values (jsonv's), total their
// number before paging.
type Nodes interface {
	Query(ctx context.Context, plan *query.Plan) (rows []any, total int, err error)
}

// WithNodes is s with its root queries on nodes answered by nodes, as the
// API's root endpoint answers them in front of an upstream PuppetDB. The
// entities that PuppetDB alone holds are answered as without it (empty):
// no reader in the process asks for them.
func WithNodes(s *Service, nodes Nodes) Querier { return withNodes{s, nodes} }

type withNodes struct {
	s     *Service
	nodes Nodes
}

// rows answers plan from w.nodes when it is a nodes plan (ok).
func (w withNodes) rows(ctx context.Context, plan *query.Plan, opts *query.Options) (rows rowSource, total int, ok bool, err error) {
	if plan == nil || plan.Entity != query.Nodes {
		return nil, 0, false, nil
	}
	out, n, err := w.nodes.Query(ctx, plan)
	if err != nil {
		return nil, 0, true, err
	}
	if !opts.IncludeTotal {
		n = -1
	}
	return &list{values: out}, n, true, nil
}

func (w withNodes) Query(ctx context.Context, req Request, fn func(row json.RawMessage) error) (int, error) {
	plan, opts, astJSON, err := prepare(req)
	if err != nil {
		return -1, result(err)
	}
	rows, total, ok, err := w.rows(ctx, plan, opts)
	switch {
	case err != nil:
		return -1, result(err)
	case !ok:
		return w.s.query(ctx, plan, opts, astJSON, fn)
	}
	if err := eachRow(rows, fn); err != nil {
		return -1, result(err)
	}
	return total, nil
}

func (w withNodes) QueryStream(ctx context.Context, req Request, fn func(body io.Reader) error) (int, error) {
	plan, opts, astJSON, err := prepare(req)
	if err != nil {
		return -1, result(err)
	}
	rows, total, ok, err := w.rows(ctx, plan, opts)
	switch {
	case err != nil:
		return -1, result(err)
	case !ok:
		return w.s.queryStream(ctx, plan, opts, astJSON, fn)
	}
	if err := stream(rows, fn); err != nil {
		return -1, result(err)
	}
	return total, nil
}

// rowSource is what a query's rows are read from: the engine's rows, or
// a list.
type rowSource interface {
	Next() bool
	Err() error
	AppendJSON(b []byte) ([]byte, error)
}

var _ rowSource = (*engine.Rows)(nil)

// list is a rowSource over JSON values already computed.
type list struct {
	values []any
	i      int
}

func (l *list) Next() bool { l.i++; return l.i <= len(l.values) }
func (l *list) Err() error { return nil }
func (l *list) AppendJSON(b []byte) ([]byte, error) {
	return jsonv.AppendCompact(b, l.values[l.i-1]), nil
}
