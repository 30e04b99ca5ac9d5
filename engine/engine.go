// Package engine runs compiled queries: it is the only code that renders a
// query.Plan as SQL (through package sqlgen, in the backend's dialect) and
// the only code that executes query statements. It hands back rows encoded
// as PuppetDB's JSON, and runs a query and its total (include_total) in one
// snapshot so that they agree. It knows nothing about HTTP.
package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"reportdb/jsonv"
	"reportdb/query"
	"reportdb/query/opt"
	"reportdb/query/sqlgen"
	"reportdb/schema/dialect"
	"reportdb/store"
)

// Backend is a store that the engine can query: the storage contract and
// the SQL dialect its statements must be written in.
type Backend interface {
	store.Backend
	Dialect() dialect.Dialect
}

// Engine runs queries on a backend.
type Engine struct {
	b Backend
	// hashHead is the head's bound of the last lookup by one report's
	// hash (see Engine.head).
	hashHead atomic.Pointer[hashHead]
	// noApart: pages of events join their reports (tests compare)
	noApart bool
}

// New returns an engine over b. The backend is asked for its dialect at
// each query (a backend that connects late may learn it then).
func New(b Backend) *Engine { return &Engine{b: b} }

// Rows are a query's rows, read one at a time.
type Rows struct {
	rows   store.Rows
	encode func(b []byte) ([]byte, error)
}

// Next advances to the next row (false at the end or on an error: see Err).
func (r *Rows) Next() bool { return r.rows.Next() }

// Err is the error that ended the rows, if any.
func (r *Rows) Err() error { return r.rows.Err() }

// AppendJSON appends the current row as a compact JSON object.
func (r *Rows) AppendJSON(b []byte) ([]byte, error) { return r.encode(b) }

func statement(b *sqlgen.Built) store.Statement {
	return store.Statement{SQL: b.SQL, Args: b.Args, ValueSensitive: b.ValueSensitive}
}

// rowsFunc gets a statement's rows, the querier they were read with (the
// snapshot's when there is a count: a further statement of the query
// runs on it once the rows are closed) and the count (-1 when not asked
// for).
type rowsFunc func(q store.Querier, rows store.Rows, total int64) error

// run executes a statement and, when count is not nil, the count of its
// rows first, in one snapshot; fn gets the rows and the count.
func (e *Engine) run(ctx context.Context, rowsSQL, count *sqlgen.Built, fn rowsFunc) error {
	return e.runRows(ctx, nil, count, func(q store.Querier) (store.Rows, error) {
		return q.Query(ctx, statement(rowsSQL))
	}, fn)
}

// runRows is run with the rows opened by open (on the snapshot's
// querier when count asks for one), after before, when set, has run on
// that querier (it binds what the count and the rows read).
func (e *Engine) runRows(ctx context.Context, before func(q store.Querier) error, count *sqlgen.Built, open func(q store.Querier) (store.Rows, error), fn rowsFunc) error {
	exec := func(q store.Querier) error {
		if before != nil {
			if err := before(q); err != nil {
				return err
			}
		}
		var total int64 = -1
		if count != nil {
			n, err := scalar(ctx, q, count)
			if err != nil {
				return err
			}
			total = n
		}
		rows, err := open(q)
		if err != nil {
			return err
		}
		defer rows.Close()
		return fn(q, rows, total)
	}
	if count != nil {
		return e.b.Snapshot(ctx, exec)
	}
	return exec(e.b)
}

// access asks the optimiser how plan p is read on dialect d (package
// opt), and returns its choice with how a narrowed or keyed one is run.
func access(ctx context.Context, d dialect.Dialect, p *query.Plan, o opt.Options) (*opt.Access, *narrowing, *keying, error) {
	a, err := opt.Choose(d, p, o)
	if err != nil {
		return nil, nil, nil, err
	}
	opt.Observe(ctx, a)
	var n *narrowing
	var k *keying
	if a.Narrow != nil {
		n = &narrowing{Narrowing: a.Narrow, a: a, p: p}
		if a.Fallback != nil {
			n.fallback = &keyedStatement{k: &keying{rk: d.Capabilities().ReportKeys, keys: a.Keys}, b: a.Fallback}
		}
	} else if a.Keys != nil {
		k = &keying{rk: d.Capabilities().ReportKeys, keys: a.Keys}
	}
	return a, n, k, nil
}

// runPlan is run for the statements of a plan, or runNarrowed or
// runKeyed as its strategy says.
func (e *Engine) runPlan(ctx context.Context, n *narrowing, k *keying, rowsSQL, count *sqlgen.Built, fn rowsFunc) error {
	switch {
	case n != nil:
		return e.runNarrowed(ctx, n, rowsSQL, count, fn)
	case k != nil:
		return e.runKeyed(ctx, k, rowsSQL, count, fn)
	}
	return e.run(ctx, rowsSQL, count, fn)
}

func scalar(ctx context.Context, q store.Querier, b *sqlgen.Built) (int64, error) {
	rows, err := q.Query(ctx, statement(b))
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var v any
	if rows.Next() {
		if err := rows.Scan(&v); err != nil {
			return 0, err
		}
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	n, _ := asInt(v)
	return n, nil
}

// Query runs a plan and calls fn with its rows and, when withTotal is
// set, the number of rows it has without limit and offset (else -1).
func (e *Engine) Query(ctx context.Context, p *query.Plan, withTotal bool, fn func(rows *Rows, total int64) error) error {
	p, err := e.nodeStates(ctx, p)
	if err != nil {
		return err
	}
	// A page of events reads its reports apart (sqlgen.ReportsApart), but
	// for one with a total: that runs in a snapshot, on one connection,
	// and reading the reports on another while holding it could wait for
	// the pool forever. A page whose report is gone by the time it is
	// read, or too large to hold, is read again with its join.
	// A page of reports reads its events apart (sqlgen.EventsApart), in
	// the snapshot too: there the events are read on the snapshot's
	// connection once the page's rows are.
	err = e.query(ctx, p, withTotal, e.noApart, fn)
	if errors.Is(err, errReportGone) || errors.Is(err, errPageTooLarge) || errors.Is(err, errEventsShape) {
		err = e.query(ctx, p, withTotal, true, fn)
	}
	return err
}

func (e *Engine) query(ctx context.Context, p *query.Plan, withTotal, noApart bool, fn func(rows *Rows, total int64) error) error {
	d := e.b.Dialect()
	a, n, k, err := access(ctx, d, p, opt.Options{Total: withTotal, NoApart: noApart})
	if err != nil {
		return err
	}
	built, count, fb := a.Rows, a.Total, a.Fallback
	if err := e.bindReportIDs(ctx, d, p, built, count, fb); err != nil {
		return err
	}
	if err := e.bindEventWindows(ctx, built, count, fb); err != nil {
		return err
	}
	return e.runPlan(ctx, n, k, built, count, func(q store.Querier, rows store.Rows, total int64) error {
		enc := newRowEncoder(built.Columns)
		if built.Apart != nil {
			// the reports (or the events) are read once the page's
			// rows are read and closed, on the pool or, for a page
			// with a total, in its snapshot
			read := readApart
			if built.Apart.Events {
				read = readEventsApart
			}
			a, err := read(ctx, q, rows, built, enc)
			if err != nil {
				return err
			}
			defer a.release()
			return fn(&Rows{rows: a, encode: a.appendRow}, total)
		}
		return fn(&Rows{rows: rows, encode: func(b []byte) ([]byte, error) {
			return enc.appendRow(b, rows)
		}}, total)
	})
}

// nodeStates resolves the node_state tests of p when no node is inactive
// (query.ResolveNodeState). The check reads the inactive nodes' index
// alone; a node deactivated while the query runs may still be answered as
// active by it, as by a PuppetDB that has not processed the command yet.
//
// Nodes expire a week after their last report, so a fleet nearly always
// has some; events of a window that none of them reported in (a day's
// events, the commonest root query) are all of active nodes, and p's own
// tests are resolved then too, so that such a query keeps its rollups.
// Its subqueries, which may read anything, keep theirs.
func (e *Engine) nodeStates(ctx context.Context, p *query.Plan) (*query.Plan, error) {
	if !p.HasNodeState() {
		return p, nil
	}
	inactive, err := e.anyInactive(ctx)
	if err != nil {
		return nil, err
	}
	if !inactive {
		return query.ResolveNodeState(p), nil
	}
	from, _, ok := sqlgen.EventTimeWindow(p)
	if !ok || from == math.MinInt64 {
		return p, nil
	}
	recent, err := scalar(ctx, e.b, sqlgen.AnyInactiveNodeSince(e.b.Dialect(), from-eventMargin))
	if err != nil || recent > 0 {
		return p, err
	}
	return query.ResolveOwnNodeState(p), nil
}

// eventMargin bounds how much earlier than its events a report's
// producer_timestamp may be: it is taken after the run, but on the Puppet
// server's clock, the events on the agent's.
const eventMargin = int64(24 * time.Hour / time.Millisecond)

// countsNodeStates is nodeStates for event counts; the pieces of an
// aggregate share one check.
func (e *Engine) countsNodeStates(ctx context.Context, ps []*query.CountsPlan) ([]*query.CountsPlan, error) {
	out := slices.Clone(ps)
	checked, inactive := false, false
	for i, p := range ps {
		if !p.Events.HasNodeState() {
			continue
		}
		if !checked {
			var err error
			if inactive, err = e.anyInactive(ctx); err != nil {
				return nil, err
			}
			checked = true
		}
		if !inactive {
			out[i] = query.ResolveCountsNodeState(p)
		}
	}
	return out, nil
}

func (e *Engine) anyInactive(ctx context.Context) (bool, error) {
	n, err := scalar(ctx, e.b, &sqlgen.Built{SQL: sqlgen.AnyInactiveNode})
	return n > 0, err
}

// bindReportIDs binds, in statements rendered with options, the range of
// report ids of the days whose span of event timestamps meets p's window,
// read first in a statement of its own (when a statement has the range:
// a plan answered from rollups has not). A report's events are all in
// its day, so every event of the window is in the range; the range's
// statement and the plan's may see different moments, which only decides
// whether a report stored in between is answered, as if it had come a
// moment earlier or later.
func (e *Engine) bindReportIDs(ctx context.Context, d dialect.Dialect, p *query.Plan, bs ...*sqlgen.Built) error {
	need := false
	for _, b := range bs {
		need = need || (b != nil && len(b.ReportIDArgs) > 0)
	}
	if !need {
		return nil
	}
	from, to, _ := sqlgen.EventTimeWindow(p)
	rows, err := e.b.Query(ctx, store.Statement{SQL: d.Capabilities().EventDays.EventDaysSQL(), Args: []any{from, to}})
	if err != nil {
		return err
	}
	defer rows.Close()
	var first, after any
	if rows.Next() {
		if err := rows.Scan(&first, &after); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	lo, _ := asInt(first) // NULL, no day holds an event of the window: none
	hi, _ := asInt(after)
	for _, b := range bs {
		if b == nil {
			continue
		}
		for i, a := range b.ReportIDArgs {
			if i%2 == 0 {
				b.Args[a] = lo
			} else {
				b.Args[a] = hi
			}
		}
	}
	return nil
}

// bindEventWindows binds, in statements whose event subqueries read
// windows of event timestamps (sqlgen.EventWindow), the range of report
// ids of the days whose span of event timestamps meets each window, read
// first in one statement (the spans of every day). As in bindReportIDs,
// the spans and the statements may see different moments.
func (e *Engine) bindEventWindows(ctx context.Context, bs ...*sqlgen.Built) error {
	need := false
	for _, b := range bs {
		need = need || (b != nil && len(b.EventWindows) > 0)
	}
	if !need {
		return nil
	}
	ed := e.b.Dialect().Capabilities().EventDays
	if ed == nil {
		return fmt.Errorf("engine: event windows on a dialect without event days")
	}
	days, err := readSpans(ctx, e.b, ed.EventSpansSQL())
	if err != nil {
		return err
	}
	for _, b := range bs {
		if b == nil {
			continue
		}
		for _, w := range b.EventWindows {
			// no day meets the window: an empty range, 0 and 0
			lo, hi, _ := idRange(days, func(s daySpan) bool { return s.max >= w.From && s.min <= w.To })
			b.Args[w.Lo], b.Args[w.Hi] = lo, hi
		}
	}
	return nil
}

// daySpan is one day's range [lo, hi) of report ids and a span [min, max]
// (Unix ms) of a time of its reports or events (dialect.ReportDays,
// dialect.EventDays).
type daySpan struct{ lo, hi, min, max int64 }

// readSpans runs a statement whose rows are days' spans.
func readSpans(ctx context.Context, q store.Querier, sql string) ([]daySpan, error) {
	rows, err := q.Query(ctx, store.Statement{SQL: sql})
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var days []daySpan
	for rows.Next() {
		var v [4]any
		if err := rows.Scan(&v[0], &v[1], &v[2], &v[3]); err != nil {
			return nil, err
		}
		var s daySpan
		s.lo, _ = asInt(v[0])
		s.hi, _ = asInt(v[1])
		s.min, _ = asInt(v[2])
		s.max, _ = asInt(v[3])
		days = append(days, s)
	}
	return days, rows.Err()
}

// idRange is the range [lo, hi) of the report ids of the days for which
// in holds; ok is false (and the range empty) when it holds for none.
func idRange(days []daySpan, in func(daySpan) bool) (lo, hi int64, ok bool) {
	for _, s := range days {
		if !in(s) {
			continue
		}
		if !ok {
			lo, hi, ok = s.lo, s.hi, true
		} else {
			lo, hi = min(lo, s.lo), max(hi, s.hi)
		}
	}
	return lo, hi, ok
}

// EventCounts runs an event-counts plan: rows are
// {"failures":..,"skips":..,"successes":..,"noops":..,"subject_type":..,"subject":{..}}.
func (e *Engine) EventCounts(ctx context.Context, p *query.CountsPlan, withTotal bool, fn func(rows *Rows, total int64) error) error {
	ps, err := e.countsNodeStates(ctx, []*query.CountsPlan{p})
	if err != nil {
		return err
	}
	p = ps[0]
	a, err := opt.ChooseCounts(e.b.Dialect(), p, false, withTotal)
	if err != nil {
		return err
	}
	opt.Observe(ctx, a)
	built, count := a.Rows, a.Total
	if err := e.bindEventWindows(ctx, built, count); err != nil {
		return err
	}
	subject := query.SubjectColumns(p.SummarizeBy)
	counts := query.CountColumns(p.Corrective)
	return e.run(ctx, built, count, func(_ store.Querier, rows store.Rows, total int64) error {
		vals := make([]any, len(subject)+len(counts))
		dest := make([]any, len(vals))
		for i := range vals {
			dest[i] = &vals[i]
		}
		return fn(&Rows{rows: rows, encode: func(b []byte) ([]byte, error) {
			if err := rows.Scan(dest...); err != nil {
				return nil, err
			}
			o := &jsonv.Object{}
			for i, c := range counts {
				o.Keys = append(o.Keys, c)
				o.Values = append(o.Values, countValue(vals[len(subject)+i]))
			}
			sub := &jsonv.Object{}
			if p.SummarizeBy == "resource" {
				sub.Keys = []string{"type", "title"}
				sub.Values = []any{textValue(vals[0]), textValue(vals[1])}
			} else {
				sub.Keys = []string{"title"}
				sub.Values = []any{textValue(vals[0])}
			}
			o.Keys = append(o.Keys, "subject_type", "subject")
			o.Values = append(o.Values, p.SummarizeBy, sub)
			return jsonv.AppendCompact(b, o), nil
		}}, total)
	})
}

// AggregateEventCounts runs an aggregate-event-counts plan: one object per
// summarize_by value, {"summarize_by":..,"failures":..,...,"total":..},
// all read in one snapshot.
func (e *Engine) AggregateEventCounts(ctx context.Context, ap *query.AggregatePlan) ([]any, error) {
	pieces, err := e.countsNodeStates(ctx, ap.Pieces)
	if err != nil {
		return nil, err
	}
	builts := make([]*sqlgen.Built, len(pieces))
	for i, p := range pieces {
		a, err := opt.ChooseCounts(e.b.Dialect(), p, true, false)
		if err != nil {
			return nil, err
		}
		opt.Observe(ctx, a)
		builts[i] = a.Rows
	}
	if err := e.bindEventWindows(ctx, builts...); err != nil {
		return nil, err
	}
	var result []any
	err = e.b.Snapshot(ctx, func(q store.Querier) error {
		for i, b := range builts {
			p := pieces[i]
			counts := query.CountColumns(p.Corrective)
			vals := make([]any, len(counts)+1)
			dest := make([]any, len(vals))
			for j := range vals {
				dest[j] = &vals[j]
			}
			rows, err := q.Query(ctx, statement(b))
			if err != nil {
				return err
			}
			if rows.Next() {
				err = rows.Scan(dest...)
			}
			if err == nil {
				err = rows.Err()
			}
			rows.Close()
			if err != nil {
				return err
			}
			o := &jsonv.Object{Keys: []string{"summarize_by"}, Values: []any{p.SummarizeBy}}
			for j, c := range counts {
				o.Keys = append(o.Keys, c)
				o.Values = append(o.Values, countValue(vals[j]))
			}
			o.Keys = append(o.Keys, "total")
			o.Values = append(o.Values, countValue(vals[len(counts)]))
			result = append(result, o)
		}
		return nil
	})
	return result, err
}

// Explain describes how the backend runs a plan's statement
// (explain=analyze): PostgreSQL's JSON plan, or SQLite's plan lines. For
// a narrowed query (see narrowing), the statement of its head; for a
// keyed one (see keying), the statement on the keys' ids.
func (e *Engine) Explain(ctx context.Context, p *query.Plan) (any, *opt.Access, error) {
	p, err := e.nodeStates(ctx, p)
	if err != nil {
		return nil, nil, err
	}
	d := e.b.Dialect()
	a, narrowed, k, err := access(ctx, d, p, opt.Options{NoApart: true})
	if err != nil {
		return nil, nil, err
	}
	built := a.Rows
	if err := e.bindReportIDs(ctx, d, p, built); err != nil {
		return nil, nil, err
	}
	if err := e.bindEventWindows(ctx, built); err != nil {
		return nil, nil, err
	}
	var lines []any
	err = e.b.Snapshot(ctx, func(q store.Querier) error {
		if k != nil && built.Keyed {
			if err := k.bind(ctx, q, built); err != nil {
				return err
			}
		}
		if n := narrowed; n != nil {
			head, _, _, ok, err := n.head(ctx, q)
			if err != nil {
				return err
			}
			if ok {
				built = head
			}
		}
		st := statement(built)
		st.SQL = e.b.Dialect().Explain(st.SQL)
		rows, err := q.Query(ctx, st)
		if err != nil {
			return err
		}
		defer rows.Close()
		n := rows.NumColumns()
		vals := make([]any, n)
		ptrs := make([]any, n)
		for i := range ptrs {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				return err
			}
			if n == 1 {
				if v, ok := explainJSON(vals[0]); ok {
					lines = append(lines, v)
					continue
				}
			}
			var parts []string
			for _, v := range vals {
				switch x := v.(type) {
				case string:
					parts = append(parts, x)
				case []byte:
					parts = append(parts, string(x))
				case nil:
				default:
					parts = append(parts, fmt.Sprint(x))
				}
			}
			lines = append(lines, strings.Join(parts, " "))
		}
		return rows.Err()
	})
	if err != nil {
		return nil, nil, err
	}
	var plan any = lines
	if len(lines) == 1 {
		if _, isText := lines[0].(string); !isText {
			plan = lines[0]
		}
	}
	return plan, a, nil
}

// Exists reports whether entity e has a row whose field equals value
// (e.g. a report with that hash, of any type).
func (e *Engine) Exists(ctx context.Context, ent *query.Entity, field, value string) (bool, error) {
	f := ent.Field(field)
	p := &query.Plan{Entity: ent, Columns: []query.Column{{Name: f.Name, Field: f}},
		Filter: query.Cmp{Op: "=", Field: f, Value: value}, Limit: 1}
	found := false
	err := e.Query(ctx, p, false, func(rows *Rows, _ int64) error {
		found = rows.Next()
		return rows.Err()
	})
	return found, err
}

// ReportDocumentSize returns the size in bytes of a report's stored
// document (as ReportDocument returns it), without reading it, and
// whether the report exists; a document that is null has size 0.
func (e *Engine) ReportDocumentSize(ctx context.Context, hash, field string) (int64, bool, error) {
	f := query.Reports.Field(field)
	if f == nil || f.Type != query.Blob {
		return 0, false, fmt.Errorf("engine: %q is not a report document", field)
	}
	h := query.Reports.Field("hash")
	p := &query.Plan{Entity: query.Reports, Columns: []query.Column{{Name: "size", Func: "octet_length", Field: f}},
		Filter: query.Cmp{Op: "=", Field: h, Value: hash}}
	a, n, k, err := access(ctx, e.b.Dialect(), p, opt.Options{NoApart: true})
	if err != nil {
		return 0, false, err
	}
	built := a.Rows
	var size int64
	found := false
	err = e.runPlan(ctx, n, k, built, nil, func(_ store.Querier, rows store.Rows, _ int64) error {
		if rows.Next() {
			found = true
			var v any
			if err := rows.Scan(&v); err != nil {
				return err
			}
			switch x := v.(type) {
			case int64:
				size = x
			case int32:
				size = int64(x)
			}
		}
		return rows.Err()
	})
	return size, found, err
}

// ReportDocument returns a report's stored document (query.Reports blob
// field: "metrics" or "logs") as JSON text, and whether the report exists.
func (e *Engine) ReportDocument(ctx context.Context, hash, field string) ([]byte, bool, error) {
	f := query.Reports.Field(field)
	if f == nil || f.Type != query.Blob {
		return nil, false, fmt.Errorf("engine: %q is not a report document", field)
	}
	h := query.Reports.Field("hash")
	p := &query.Plan{Entity: query.Reports, Columns: []query.Column{{Name: f.Name, Field: f}},
		Filter: query.Cmp{Op: "=", Field: h, Value: hash}}
	a, n, k, err := access(ctx, e.b.Dialect(), p, opt.Options{NoApart: true})
	if err != nil {
		return nil, false, err
	}
	built := a.Rows
	var data []byte
	found := false
	err = e.runPlan(ctx, n, k, built, nil, func(_ store.Querier, rows store.Rows, _ int64) error {
		if rows.Next() {
			found = true
			var doc, hash any
			if err := rows.Scan(&doc, &hash); err != nil {
				return err
			}
			switch d := doc.(type) {
			case string:
				data = []byte(d)
			case []byte:
				data = append([]byte(nil), d...)
			default:
				data = []byte("null")
			}
		}
		return rows.Err()
	})
	return data, found, err
}
