// Package service answers PuppetDB's root queries (["from", entity, ...] or
// PQL) for every reader of the server: the HTTP root and entity endpoints
// (package httpapi, thin adapters over it), the dashboard, the fleet state
// and the Jolokia beans. One path compiles and runs a query (PQL parser,
// planner, engine with its node-state resolution, the query deadline), so
// each reader gets exactly the rows the API answers, in the API's JSON
// encoding (the engine's row encoder); in-process readers skip the HTTP
// request, its response and the JSON round trip of the request.
package service

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"time"

	"reportdb"
	"reportdb/engine"
	"reportdb/jsonv"
	"reportdb/query"
	"reportdb/query/pql"
)

// Querier answers root queries. Service implements it; Limit and the
// upstream mode's merged nodes wrap one.
type Querier interface {
	// Query runs req and calls fn with each row, a compact JSON object
	// valid only until fn returns (for ast_only: the AST once, as the API
	// prints it). total is the include_total count when req.Total is set,
	// else -1. A failure of the query is an *Error; an error of fn is
	// returned as it is.
	Query(ctx context.Context, req Request, fn func(row json.RawMessage) error) (total int, err error)
	// QueryStream runs req and calls fn with the answer as the API writes
	// it (the compact JSON array of the rows), encoded a row at a time as
	// fn reads it: a document of hundreds of megabytes is never held
	// decoded, nor whole twice. fn need not read it all; the query ends
	// when fn returns. A query that fails before its first row returns
	// its *Error without calling fn.
	QueryStream(ctx context.Context, req Request, fn func(body io.Reader) error) (total int, err error)
}

// Service runs queries on one engine.
type Service struct {
	engine  *engine.Engine
	timeout time.Duration
}

// New returns the service over e; timeout bounds each query (the server's
// --query-timeout, which a request's own timeout may only shorten).
func New(e *engine.Engine, timeout time.Duration) *Service {
	return &Service{engine: e, timeout: timeout}
}

// CompileRoot compiles a root query given as validated parameters: a PQL
// query is parsed first (its errors are PuppetDB's), then planned. ast is
// the query's JSON AST, what ast_only answers.
func CompileRoot(opts *query.Options) (plan *query.Plan, ast any, err error) {
	ast = opts.Query
	if opts.QuerySet && opts.Query == nil && query.RootQueryIsPQL(opts.QueryText) {
		if ast, err = pql.Parse(opts.QueryText); err != nil {
			return nil, nil, pqlError(err)
		}
	}
	if plan, err = query.CompileRoot(ast, opts); err != nil {
		return nil, nil, err
	}
	return plan, ast, nil
}

func pqlError(err error) error {
	var pe *pql.ParseError
	if errors.As(err, &pe) {
		return reportdb.Invalid(pe.Message())
	}
	return reportdb.Invalid(err.Error())
}

// Execute runs a compiled plan within the query's deadline and calls fn
// with its rows and, when opts.IncludeTotal is set, their total (else -1).
func (s *Service) Execute(ctx context.Context, plan *query.Plan, opts *query.Options, fn func(rows *engine.Rows, total int64) error) error {
	ctx, cancel := Deadline(ctx, s.timeout, opts.Timeout)
	defer cancel()
	return TimedOut(ctx, s.engine.Query(ctx, plan, opts.IncludeTotal, fn))
}

// Explain is the database's plan of a compiled query (explain=analyze),
// within the query's deadline, and the access path the optimiser chose
// for it (package opt), with its reasons.
func (s *Service) Explain(ctx context.Context, plan *query.Plan, opts *query.Options) (lines any, access string, err error) {
	ctx, cancel := Deadline(ctx, s.timeout, opts.Timeout)
	defer cancel()
	lines, a, err := s.engine.Explain(ctx, plan)
	if err != nil {
		return nil, "", TimedOut(ctx, err)
	}
	return lines, a.Explain(), nil
}

// prepare validates and compiles req; astJSON is set instead of plan for
// ast_only.
func prepare(req Request) (plan *query.Plan, opts *query.Options, astJSON []byte, err error) {
	if opts, err = req.options(); err != nil {
		return nil, nil, nil, err
	}
	plan, ast, err := CompileRoot(opts)
	if err != nil {
		return nil, nil, nil, err
	}
	if opts.ASTOnly {
		return nil, opts, jsonv.AppendPretty(nil, ast), nil
	}
	return plan, opts, nil, nil
}

// callerError carries an error of a reader's callback through the engine,
// so that it is returned as it is rather than as a query failure.
type callerError struct{ err error }

func (c *callerError) Error() string { return c.err.Error() }

// result is what Query and QueryStream return for err, a query's or its
// reader's.
func result(err error) error {
	var c *callerError
	if errors.As(err, &c) {
		return c.err
	}
	if e := ErrorOf(err); e != nil {
		return e
	}
	return err // cancelled: the context's error
}

// Query implements Querier.
func (s *Service) Query(ctx context.Context, req Request, fn func(row json.RawMessage) error) (int, error) {
	plan, opts, astJSON, err := prepare(req)
	if err != nil {
		return -1, result(err)
	}
	return s.query(ctx, plan, opts, astJSON, fn)
}

// query is Query once req is prepared.
func (s *Service) query(ctx context.Context, plan *query.Plan, opts *query.Options, astJSON []byte, fn func(row json.RawMessage) error) (int, error) {
	if astJSON != nil {
		return -1, fn(astJSON)
	}
	total := -1
	err := s.Execute(ctx, plan, opts, func(rows *engine.Rows, n int64) error {
		total = int(n)
		return eachRow(rows, fn)
	})
	if err != nil {
		return -1, result(err)
	}
	return total, nil
}

// eachRow calls fn with each row, encoded into one buffer.
func eachRow(rows rowSource, fn func(row json.RawMessage) error) error {
	var buf []byte
	for rows.Next() {
		var err error
		if buf, err = rows.AppendJSON(buf[:0]); err != nil {
			return err
		}
		if err := fn(buf); err != nil {
			return &callerError{err}
		}
	}
	return rows.Err()
}

// QueryStream implements Querier. fn runs inside the query, on the
// caller's goroutine: when it returns, the rows are closed and the
// database connection is free, however much of the answer it read.
func (s *Service) QueryStream(ctx context.Context, req Request, fn func(body io.Reader) error) (int, error) {
	plan, opts, astJSON, err := prepare(req)
	if err != nil {
		return -1, result(err)
	}
	return s.queryStream(ctx, plan, opts, astJSON, fn)
}

// queryStream is QueryStream once req is prepared.
func (s *Service) queryStream(ctx context.Context, plan *query.Plan, opts *query.Options, astJSON []byte, fn func(body io.Reader) error) (int, error) {
	if astJSON != nil {
		return -1, fn(bytes.NewReader(astJSON))
	}
	total := -1
	err := s.Execute(ctx, plan, opts, func(rows *engine.Rows, n int64) error {
		total = int(n)
		return stream(rows, fn)
	})
	if err != nil {
		return -1, result(err)
	}
	return total, nil
}

// stream calls fn with the JSON array of rows.
func stream(rows rowSource, fn func(body io.Reader) error) error {
	a := &arrayReader{rows: rows}
	// the first row is read before fn sees any byte, so that a query
	// failing at once is an error, as the API's status says
	if err := a.start(); err != nil {
		return err
	}
	err := fn(a)
	if a.err != nil {
		return a.err // the rows' failure, which fn saw as a read error
	}
	if err != nil {
		return &callerError{err}
	}
	return nil
}

// arrayReader is an io.Reader over the JSON array of rows, encoding the
// next row when the previous one has been read.
type arrayReader struct {
	rows rowSource
	buf  []byte // encoded, not yet read
	off  int
	n    int   // rows encoded
	done bool  // ']' encoded
	err  error // the rows' failure
}

func (a *arrayReader) start() error {
	a.buf = append(a.buf[:0], '[')
	return a.fill()
}

// fill encodes the next row (with its separator) or the end of the array.
func (a *arrayReader) fill() error {
	if a.done {
		return nil
	}
	if !a.rows.Next() {
		if err := a.rows.Err(); err != nil {
			a.err, a.buf, a.off = err, a.buf[:0], 0
			return err
		}
		a.buf = append(a.buf, ']')
		a.done = true
		return nil
	}
	if a.n > 0 {
		a.buf = append(a.buf, ',')
	}
	a.n++
	var err error
	if a.buf, err = a.rows.AppendJSON(a.buf); err != nil {
		a.err, a.buf, a.off = err, a.buf[:0], 0
	}
	return err
}

func (a *arrayReader) Read(p []byte) (int, error) {
	for a.off == len(a.buf) {
		if a.err != nil {
			return 0, a.err
		}
		if a.done {
			return 0, io.EOF
		}
		a.buf, a.off = a.buf[:0], 0
		if err := a.fill(); err != nil {
			return 0, err
		}
	}
	n := copy(p, a.buf[a.off:])
	a.off += n
	return n, nil
}
