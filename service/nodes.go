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

// answer runs req: a nodes query by reading w.nodes' rows with read,
// any other the service's own way (local).
func (w withNodes) answer(ctx context.Context, req Request, read func(rows rowSource) error,
	local func(plan *query.Plan, opts *query.Options, astJSON []byte) (int, error)) (int, error) {
	plan, opts, astJSON, err := prepare(req)
	if err != nil {
		return -1, result(err)
	}
	if plan == nil || plan.Entity != query.Nodes {
		return local(plan, opts, astJSON)
	}
	out, total, err := w.nodes.Query(ctx, plan)
	if err == nil {
		err = read(&List{Values: out})
	}
	if err != nil {
		return -1, result(err)
	}
	if !opts.IncludeTotal {
		total = -1
	}
	return total, nil
}

func (w withNodes) Query(ctx context.Context, req Request, fn func(row json.RawMessage) error) (int, error) {
	return w.answer(ctx, req, func(rows rowSource) error { return eachRow(rows, fn) },
		func(plan *query.Plan, opts *query.Options, astJSON []byte) (int, error) {
			return w.s.query(ctx, plan, opts, astJSON, fn)
		})
}

func (w withNodes) QueryStream(ctx context.Context, req Request, fn func(body io.Reader) error) (int, error) {
	return w.answer(ctx, req, func(rows rowSource) error { return stream(rows, fn) },
		func(plan *query.Plan, opts *query.Options, astJSON []byte) (int, error) {
			return w.s.queryStream(ctx, plan, opts, astJSON, fn)
		})
}

// rowSource is what a query's rows are read from: the engine's rows, or
// a list.
type rowSource interface {
	Next() bool
	Err() error
	AppendJSON(b []byte) ([]byte, error)
}

var _ rowSource = (*engine.Rows)(nil)

// List is a source of rows over JSON values already computed (the
// engine's rows' methods, for answers made in memory).
type List struct {
	Values []any
	i      int
}

// Next moves to the next value.
func (l *List) Next() bool { l.i++; return l.i <= len(l.Values) }

// Err is nil: the values are there.
func (l *List) Err() error { return nil }

// AppendJSON appends the current value's compact JSON to b.
func (l *List) AppendJSON(b []byte) ([]byte, error) {
	return jsonv.AppendCompact(b, l.Values[l.i-1]), nil
}
