package sqlgen

import (
	"math"
	"strings"

	"reportdb/query"
)

// Option adjusts how Select and Count render a statement.
type Option func(*builder)

// BoundReportIDs makes a statement over events read only the events of a
// range of report ids, bound later: where the statement has such a
// condition, Built.ReportIDArgs are the indexes in Built.Args of the
// range's first id and first id after it, [lo, hi). The engine asks for
// it for a plan whose event timestamps are bounded (EventTimeWindow) and
// binds the range of the days that can hold them (EventDays): a backend
// whose events are partitioned by ranges of report ids then plans and
// reads only those partitions. The range must not change the answer: it
// has to hold every event of the window.
func BoundReportIDs() Option {
	return func(b *builder) { b.boundIDs = true }
}

// EventWindow is a window [From, To] (Unix ms) of event timestamps that
// a subquery of a statement reads, and the indexes in Built.Args of the
// bounds [lo, hi) of the report ids it reads: the engine binds those of
// the days whose span of event timestamps meets the window (EventDays),
// both 0 when none does (the subquery then reads nothing, as there is no
// event in the window).
type EventWindow struct {
	From, To int64
	Lo, Hi   int
}

// eventWindowCond bounds the report ids of the events (alias e) and the
// reports they join (alias r) that a subquery reads in the window [from,
// to] of event timestamps, where the dialect keeps the days' spans
// (EventDays): "" where it does not. The statement is then planned with
// its values, so that the bounds prune the partitions as it is planned.
func (b *builder) eventWindowCond(from, to int64, e, r string) string {
	if b.d.Capabilities().EventDays == nil {
		return ""
	}
	lo := b.rangeArg(int64(0))
	w := EventWindow{From: from, To: to, Lo: len(b.args) - 1}
	hi := b.rangeArg(int64(0))
	w.Hi = len(b.args) - 1
	b.windows = append(b.windows, w)
	c := " AND " + e + ".report_id >= " + lo + " AND " + e + ".report_id < " + hi
	if r != "" {
		c += " AND " + r + ".id >= " + lo + " AND " + r + ".id < " + hi
	}
	return c
}

// EventTimeWindow returns the window [from, to] (Unix ms, inclusive) of
// event timestamps that a plan over events can return, from the
// comparisons of the event timestamp that its filter requires (those
// ANDed at its top); ok is false when it has none, or for a
// distinct_resources plan (its own window decides).
func EventTimeWindow(p *query.Plan) (from, to int64, ok bool) {
	if p.Entity != query.Events || p.Distinct != nil {
		return 0, 0, false
	}
	from, to = math.MinInt64, math.MaxInt64
	for _, x := range conjuncts(p.Filter) {
		c, isCmp := x.(query.Cmp)
		if !isCmp || c.Field == nil || c.Field.Table != query.EventsTable || c.Field.Column != "timestamp" {
			continue
		}
		v, isInt := c.Value.(int64)
		if !isInt {
			continue
		}
		switch c.Op {
		case ">", ">=":
			from, ok = max(from, v), true
		case "<", "<=":
			to, ok = min(to, v), true
		case "=":
			from, to, ok = max(from, v), min(to, v), true
		}
	}
	return from, to, ok
}

// reportIDCond is the condition BoundReportIDs adds to the WHERE clause
// of a statement over events reading u ("" when it adds none): on the
// events' report ids, and on the reports' ids when the statement joins
// them (the planner does not carry a range across the join's equality).
func (b *builder) reportIDCond(p *query.Plan, u uses) string {
	if !b.boundIDs || b.alias != "" || b.depth > 0 || p.Entity != query.Events || p.Distinct != nil {
		return ""
	}
	lo := b.arg(int64(0))
	b.idArgs = append(b.idArgs, len(b.args)-1)
	hi := b.arg(int64(0))
	b.idArgs = append(b.idArgs, len(b.args)-1)
	conds := []string{tableSQL[query.EventsTable].alias + ".report_id"}
	if u.tables.has(query.ReportsTable) {
		conds = append(conds, tableSQL[query.ReportsTable].alias+".id")
	}
	for i, c := range conds {
		conds[i] = c + " >= " + lo + " AND " + c + " < " + hi
	}
	return strings.Join(conds, " AND ")
}
