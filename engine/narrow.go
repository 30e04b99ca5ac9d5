package engine

import (
	"context"
	"time"

	"reportdb/query"
	"reportdb/query/opt"
	"reportdb/query/sqlgen"
	"reportdb/store"
)

// NarrowSpan is how far from the newest (or oldest) report the head of a
// narrowed query reaches (sqlgen.Narrow): a day, in Unix ms. A node that
// reports every 30 minutes has 48 reports in it, a fleet of 10,000 nodes
// about 475,000; a page that the head does not fill is completed from the
// rest of the days.
const NarrowSpan = int64(24 * 60 * 60 * 1000)

// narrowing is how a query over reports ordered by a time column is run
// in two steps (sqlgen.Narrow): the head, the rows within NarrowSpan of
// the newest (oldest) report's time, from the days whose span of that
// column reaches it; then, only when the head did not fill the page, the
// rest. The newest reports of a node, or the first pages of all reports,
// then read one or two days however many are kept.
//
// A query over events ordered by their timestamp, with no window of
// timestamps (a search by resource title, newest first), is narrowed the
// same way, by the days' spans of event timestamps (dialect.EventDays).
//
// A query on one report's hash (sqlgen.NarrowHash: Puppetboard's report
// page asks for its events) is narrowed the same way, to the days of the
// newest reports' end times: a report is stored in one day, so when the
// head has rows they are all of its rows; else the statement keyed by
// the hash answers (narrowing.fallback; the plain statement on a dialect
// that keeps no keys).
type narrowing struct {
	*opt.Narrowing // the column and direction, or by the day of one report (Unique), and the days' spans
	a              *opt.Access
	p              *query.Plan
	// fallback, when set, answers a narrowed lookup by one report's hash
	// whose head has no row (a report older than the head's days, or an
	// unknown hash) in place of the plain statement: the statement keyed
	// by the report's hash (see keying), read from its day alone.
	fallback *keyedStatement
}

// keyedStatement is a keyed statement and its keys.
type keyedStatement struct {
	k *keying
	b *sqlgen.Built
}

func (n *narrowing) render(w sqlgen.Narrow) (*sqlgen.Built, error) {
	return n.a.Head(n.p, w)
}

// head reads the days' spans and renders the head's statement; ok is
// false when no day has a report (the plain statement answers). restEmpty
// is set when every day's span lies within the head's bound, so that the
// rest has no row.
func (n *narrowing) head(ctx context.Context, q store.Querier) (b *sqlgen.Built, w sqlgen.Narrow, restEmpty, ok bool, err error) {
	days, err := readSpans(ctx, q, n.SpansSQL)
	if err != nil || len(days) == 0 {
		return nil, w, false, false, err
	}
	// the bound: NarrowSpan before the newest time (after the oldest)
	if n.Desc {
		edge := days[0].max
		for _, s := range days {
			edge = max(edge, s.max)
		}
		w.Bound = edge - NarrowSpan
	} else {
		edge := days[0].min
		for _, s := range days {
			edge = min(edge, s.min)
		}
		w.Bound = edge + NarrowSpan
	}
	// the head's days: those whose span reaches the bound
	w.Lo, w.Hi, _ = idRange(days, func(s daySpan) bool {
		if n.Desc {
			return s.max >= w.Bound
		}
		return s.min <= w.Bound
	})
	// the rest is empty when no day holds a time beyond the bound on the
	// far side (by one report's hash: when no day is below the head's)
	restEmpty = true
	for _, s := range days {
		switch {
		case n.Unique:
			restEmpty = restEmpty && s.lo >= w.Lo
		case n.Desc:
			restEmpty = restEmpty && s.min >= w.Bound
		default:
			restEmpty = restEmpty && s.max <= w.Bound
		}
	}
	b, err = n.render(w)
	if err != nil {
		return nil, w, false, false, err
	}
	return b, w, restEmpty, b.Narrowed, nil
}

// narrowedRows are the rows of a narrowed query: the head's, then, when
// they did not fill the page, those of the rest (with the limit left),
// or, when the head had no row of a page at an offset (so that how many
// rows it skipped is not known), those of the plain statement.
type narrowedRows struct {
	ctx       context.Context
	q         store.Querier
	n         *narrowing
	w         sqlgen.Narrow
	plain     *sqlgen.Built
	restEmpty bool
	cur       store.Rows
	scan      store.Scanner // ScanValues of rows without it
	got       int64         // rows of the head
	last      bool          // cur is the last statement's
	err       error
}

func (r *narrowedRows) NumColumns() int { return r.cur.NumColumns() }

func (r *narrowedRows) Scan(dest ...any) error { return r.cur.Scan(dest...) }

func (r *narrowedRows) ScanValues(dst []store.Value) error { return r.scan.Scan(r.cur, dst) }

func (r *narrowedRows) Err() error {
	if r.err != nil {
		return r.err
	}
	return r.cur.Err()
}

func (r *narrowedRows) Close() { r.cur.Close() }

func (r *narrowedRows) Next() bool {
	if r.cur.Next() {
		if !r.last {
			r.got++
		}
		return true
	}
	if r.last || r.cur.Err() != nil || r.err != nil {
		return false
	}
	// the head is read
	r.last = true
	p := r.n.p
	if r.restEmpty || (r.n.Unique && r.got > 0) || (!r.n.Unique && r.got >= p.Limit) {
		return false
	}
	var next *sqlgen.Built
	switch {
	case r.n.Unique && r.n.fallback != nil:
		// the head's rows are closed first: on a snapshot's one
		// connection the keys' statement could not run beside them
		r.cur.Close()
		if err := r.n.fallback.k.bind(r.ctx, r.q, r.n.fallback.b); err != nil {
			r.err = err
			return false
		}
		next = r.n.fallback.b
	case r.n.Unique || (r.got == 0 && p.Offset > 0):
		next = r.plain
	default:
		// the head had all of its rows from the offset on: the page
		// goes on with the first rows of the rest
		rest := *p
		rest.Limit, rest.Offset = p.Limit-r.got, 0
		w := r.w
		w.Rest = true
		b, err := r.n.a.Head(&rest, w)
		if err != nil {
			r.err = err
			return false
		}
		next = b
	}
	r.cur.Close()
	rows, err := r.q.Query(r.ctx, statement(next))
	if err != nil {
		r.err = err
		r.cur = emptyRows{}
		return false
	}
	r.cur = rows
	return r.Next()
}

// emptyRows stand for a statement that could not be run.
type emptyRows struct{}

func (emptyRows) NumColumns() int   { return 0 }
func (emptyRows) Next() bool        { return false }
func (emptyRows) Scan(...any) error { return nil }
func (emptyRows) Err() error        { return nil }
func (emptyRows) Close()            {}

// HashHeadTTL is how long the head's bound of a lookup by one report's
// hash is reused (see Engine.head).
const HashHeadTTL = 10 * time.Second

// hashHead is a head's lower bound of report ids, and when it was read.
type hashHead struct {
	lo int64
	at time.Time
}

// head is n.head, except that a lookup by one report's hash (n.Unique)
// reuses for HashHeadTTL the bound that the last one read from the days'
// spans, instead of reading them again: a round trip of the two that
// Puppetboard's report page makes for its events. Any bound is right for
// such a head: it reads the ids at or above it, newer days included, and
// a report is stored in one day, so that when the head has rows they are
// the report's; only whether the rest is empty is not known without the
// spans, so that an empty head is followed by the fallback or the plain
// statement (an unknown hash, or a report older than the bound). An old bound makes the
// head read a day more after midnight, until it is read again.
func (e *Engine) head(ctx context.Context, q store.Querier, n *narrowing) (b *sqlgen.Built, w sqlgen.Narrow, restEmpty, ok bool, err error) {
	if !n.Unique {
		return n.head(ctx, q)
	}
	if c := e.hashHead.Load(); c != nil && time.Since(c.at) < HashHeadTTL {
		w.Lo = c.lo
		if b, err = n.render(w); err != nil {
			return nil, w, false, false, err
		}
		return b, w, false, b.Narrowed, nil
	}
	b, w, restEmpty, ok, err = n.head(ctx, q)
	if err == nil && ok {
		e.hashHead.Store(&hashHead{lo: w.Lo, at: time.Now()})
	}
	return b, w, restEmpty, ok, err
}

// runNarrowed is run (see there) for a narrowed query: plain is the
// plan's statement as it is, which answers when no day has a report.
func (e *Engine) runNarrowed(ctx context.Context, n *narrowing, plain, count *sqlgen.Built, fn rowsFunc) error {
	return e.runRows(ctx, nil, count, func(q store.Querier) (store.Rows, error) {
		head, w, restEmpty, ok, err := e.head(ctx, q, n)
		if err != nil {
			return nil, err
		}
		if !ok {
			return q.Query(ctx, statement(plain))
		}
		rows, err := q.Query(ctx, statement(head))
		if err != nil {
			return nil, err
		}
		return &narrowedRows{ctx: ctx, q: q, n: n, w: w, plain: plain, restEmpty: restEmpty, cur: rows}, nil
	}, fn)
}
