package sqlgen

import (
	"reportdb/query"
)

// Narrow is how a statement over reports is narrowed to the rows that
// come first in its order (Narrowed): the plan's first ORDER BY key is
// a time column of reports (or the events' timestamp, for a statement
// over events), and the rows on the near side of a bound
// Bound come before every other row, so that they can be read first, from
// only the days that can hold them.
//
// For a descending order, the head is the rows whose Column is at least
// Bound, read from the report ids at or above Lo ([Lo, Hi) must hold
// every such row; later days are read too), and the rest the rows whose
// Column is below Bound, from every day; ascending, at most and above
// Bound, from the ids below Hi. The plan's LIMIT and OFFSET apply to
// either statement as rendered: the engine asks for the head first, and
// for the rest (with the limit left) only when the head did not fill the
// page.
type Narrow struct {
	Column string // a column of reports, "start_time" or "end_time"; of events, "timestamp"
	Desc   bool   // the order's direction
	Bound  int64
	Lo, Hi int64 // report ids [Lo, Hi), of the head's days
	Rest   bool  // render the rest, not the head
	// Unique narrows a plan on one report's hash (NarrowHash) instead:
	// the head is the rows of the reports with ids at or above Lo, with
	// no bound on a column. The report is in one day, so rows from the
	// head are all of its rows; the rest is the plain statement.
	Unique bool
}

// Narrowed renders a statement over reports narrowed by n (see Narrow);
// Built.Narrowed reports whether it was (statements answered from
// rollups or the latest reports are not).
func Narrowed(n Narrow) Option {
	return func(b *builder) { b.narrow = &n }
}

// NarrowOrder returns the column and direction by which Narrow can split
// plan p (its first ORDER BY key), and whether it can: p reads reports,
// ordered first by their start_time or end_time (never NULL), or events,
// ordered first by their timestamp (never NULL) and with no window of
// timestamps (a plan with one reads its window's days alone already:
// BoundReportIDs), with a limit, no grouping and no aggregate.
func NarrowOrder(p *query.Plan) (column string, desc, ok bool) {
	if (p.Entity != query.Reports && p.Entity != query.Events) || p.Distinct != nil || p.Limit <= 0 ||
		len(p.OrderBy) == 0 || len(p.GroupBy) > 0 || aggregates(p) {
		return "", false, false
	}
	o := p.OrderBy[0]
	if o.Field == nil || !o.Field.NotNull {
		return "", false, false
	}
	if p.Entity == query.Events {
		if _, _, window := EventTimeWindow(p); window || o.Field.Table != query.EventsTable || o.Field.Column != "timestamp" {
			return "", false, false
		}
		return o.Field.Column, o.Desc, true
	}
	if o.Field.Table != query.ReportsTable || (o.Field.Column != "start_time" && o.Field.Column != "end_time") {
		return "", false, false
	}
	return o.Field.Column, o.Desc, true
}

// decideNarrow decides, before anything of plan p is rendered, whether
// its statement is narrowed (Narrowed): p reads reports themselves (not
// the copies of the nodes' latest reports, which are answered apart) and
// is ordered as the Narrow asks.
func (b *builder) decideNarrow(p *query.Plan) {
	n := b.narrow
	b.narrowing = false
	if n == nil || b.alias != "" {
		return
	}
	if n.Unique {
		if !NarrowHash(p) || p.Entity == query.Events && !planUses(p, nil).tables.has(query.ReportsTable) {
			return
		}
	} else if c, desc, ok := NarrowOrder(p); !ok || c != n.Column || desc != n.Desc {
		return
	}
	b.narrowing = !b.onLatestCopies(p)
}

// onLatestCopies reports whether plan p's statement reads the copies of
// the nodes' latest reports (latest_report? at its top) rather than the
// reports themselves: those are answered apart, never narrowed or keyed.
func (b *builder) onLatestCopies(p *query.Plan) bool {
	col := "id"
	if p.Entity.Base == query.EventsTable {
		col = "report_id"
	}
	_, _, latest := b.latestReportsFilter(p.Filter, p.Entity.Base, col)
	return latest
}

// narrowID is the comparison of report ids that bounds a narrowed
// statement's head (ok is false for none): at or above Lo (descending)
// or below Hi (ascending). The days on the far side of the head's are
// empty or have no row of the head, so one bound is enough, and one bound
// alone, unlike a range of ids, does not look selective to a generic
// plan: PostgreSQL estimated a two-sided range of ids at 0.5 % of the
// rows and read the head's days through their primary keys, 3 ms
// instead of 0.5 (200 nodes x 14 days, a node's newest 10 reports).
func (b *builder) narrowID() (op, arg string, ok bool) {
	n := b.narrow
	if !b.narrowing || n.Rest || b.depth > 0 {
		return "", "", false
	}
	if b.narrowArg == "" {
		if n.Desc || n.Unique {
			b.narrowArg = b.arg(n.Lo)
		} else {
			b.narrowArg = b.arg(n.Hi)
		}
	}
	if n.Desc || n.Unique {
		return ">=", b.narrowArg, true
	}
	return "<", b.narrowArg, true
}

// NarrowHash reports whether Narrow can split plan p by the day of one
// report (Narrow.Unique): p reads reports or events, requires (at its
// top) the report's hash to equal a value, and has no grouping or
// aggregate, so that it has a row only where that report is stored.
func NarrowHash(p *query.Plan) bool {
	if (p.Entity != query.Reports && p.Entity != query.Events) || p.Distinct != nil ||
		len(p.GroupBy) > 0 || aggregates(p) {
		return false
	}
	for _, x := range conjuncts(p.Filter) {
		c, ok := x.(query.Cmp)
		if !ok || c.Op != "=" || c.Field == nil || c.Field.Table != query.ReportsTable || c.Field.Column != "hash" {
			continue
		}
		if _, isString := c.Value.(string); isString {
			return true
		}
	}
	return false
}

// narrowCond is the condition Narrowed adds to the WHERE clause of a
// statement over reports ("" when it adds none). The bound is an
// ordinary argument, not a value compared with a range (rangeArg): a
// statement ordered by the column it bounds is planned along that
// column's index whatever the bound, and a generic plan keeps its
// planning off the per-day partitions.
//
// A statement over events (u: what it reads) bounds the events' report
// ids, and the reports' ids when it joins them (the planner does not carry
// a bound across the join's equality).
func (b *builder) narrowCond(p *query.Plan, u uses) string {
	if !b.narrowing || b.depth > 0 {
		return ""
	}
	n := b.narrow
	b.narrowed = true
	ids := func(op, arg string) string {
		r := tableSQL[query.ReportsTable].alias + ".id " + op + " " + arg
		if p.Entity != query.Events {
			return r
		}
		e := tableSQL[query.EventsTable].alias + ".report_id " + op + " " + arg
		if n.Unique || u.tables.has(query.ReportsTable) {
			return e + " AND " + r
		}
		return e
	}
	if n.Unique {
		op, arg, _ := b.narrowID()
		return ids(op, arg)
	}
	col := tableSQL[query.ReportsTable].alias + "." + n.Column
	if p.Entity == query.Events {
		col = tableSQL[query.EventsTable].alias + "." + n.Column
	}
	switch {
	case n.Rest && n.Desc:
		return col + " < " + b.arg(n.Bound)
	case n.Rest:
		return col + " > " + b.arg(n.Bound)
	}
	op, arg, _ := b.narrowID()
	cmp := " >= "
	if !n.Desc {
		cmp = " <= "
	}
	cond := col + cmp + b.arg(n.Bound) + " AND " + ids(op, arg)
	if b.sensitive {
		// Planned with its values (a range or a regular expression in
		// the filter: see Built.ValueSensitive), a two-sided range of ids
		// is estimated right, and the plan opens the head's days alone,
		// not also the empty ones made ahead of today: at 1,000 nodes the
		// title regex's head planned in 0.5 ms instead of 0.95 and ran in
		// 3.9 instead of 4.6 (EXPLAIN ANALYZE, six runs each). A report
		// stored in a later day after the days' spans were read is not
		// answered, as if it had come a moment later (as with
		// BoundReportIDs).
		if n.Desc {
			cond += " AND " + ids("<", b.arg(n.Hi))
		} else {
			cond += " AND " + ids(">=", b.arg(n.Lo))
		}
	}
	return cond
}
