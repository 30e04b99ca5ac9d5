package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"reportdb/store"
)

// stepTracer adds the pool's connection waits and the statements a
// request runs to the request's store.Steps, when they ask for them
// (Steps.Statements: the slow-query log), so that a slow request's log
// line says whether its time went waiting for a connection ("conn wait":
// every connection busy) or in PostgreSQL ("sql": a statement from the
// moment it is sent until its last row is read). A context without such
// Steps costs one context lookup per statement.
type stepTracer struct{}

var (
	_ pgx.QueryTracer       = stepTracer{}
	_ pgxpool.AcquireTracer = stepTracer{}
)

// traceStart is what a traced call's context carries from its start to
// its end.
type traceStart struct {
	steps *store.Steps
	at    time.Time
}

type traceStartKey struct{}

func startTrace(ctx context.Context) context.Context {
	s := store.StatementSteps(ctx)
	if s == nil {
		return ctx
	}
	return context.WithValue(ctx, traceStartKey{}, traceStart{steps: s, at: time.Now()})
}

func endTrace(ctx context.Context, name string) {
	if t, ok := ctx.Value(traceStartKey{}).(traceStart); ok {
		t.steps.Add(name, time.Since(t.at))
	}
}

func (stepTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return startTrace(ctx)
}

func (stepTracer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	endTrace(ctx, "sql")
}

func (stepTracer) TraceAcquireStart(ctx context.Context, _ *pgxpool.Pool, _ pgxpool.TraceAcquireStartData) context.Context {
	return startTrace(ctx)
}

func (stepTracer) TraceAcquireEnd(ctx context.Context, _ *pgxpool.Pool, _ pgxpool.TraceAcquireEndData) {
	endTrace(ctx, "conn wait")
}
