package sqlgen

import (
	"slices"
	"strconv"
	"strings"

	"reportdb/query"
	"reportdb/schema"
	"reportdb/schema/dialect"
)

// Rollups: counts of reports and of events kept at write time, per time
// bucket and per dimensions (package schema defines them and renders the
// deltas every writer runs); a count is the SUM of n over a bucket's rows,
// whatever compaction has merged yet.
//
// A covered aggregate (count() grouped by dimensions or by to_string of the
// time field at day or hour precision; include_total of a covered filter)
// is answered from whole buckets of the coarsest width that fits inside
// the time range, then finer widths at its edges, and the base table for
// the part of the range finer than the finest bucket. Its cost depends on
// the number of buckets and dimension combinations the answer spans, not
// on the number of rows stored.

// rollups are the rollups of each entity, in the order they are tried:
// the smallest that covers a plan answers it
var rollups = map[*query.Entity][]schema.Rollup{query.Reports: schema.ReportRollups, query.Events: schema.EventRollups}

// dim reports whether the rollup def keeps f's value (or f is always null):
// an expression over such fields means the same on a rollup row as on
// every row the rollup row counts.
func dim(def schema.Rollup, f *query.Field) bool {
	return f.Table == query.NoTable || f.Type != query.Path && slices.Contains(def.Dims, f.Name)
}

// unbounded ends of a time range, far beyond any stored timestamp and far
// from overflowing when a bucket width is added.
const (
	minTime = -1 << 62
	maxTime = 1 << 62
)

// rollupPlan is a plan the rollup can answer.
type rollupPlan struct {
	def    schema.Rollup
	lo, hi int64      // the time range, half-open [lo, hi) in ms
	dims   query.Expr // the rest of the filter: dimensions only (nil: none)
	// base is the filter of the base-table segments: dims and the
	// restriction of the rollup (def.Only), which its rows satisfy
	base query.Expr
	// timeKey is the width group keys of the time field are floored to
	// (0: the plan does not group by time).
	timeKey int64
}

// coveredRollup reports whether a rollup of p's entity can answer p's
// filter and grouping; counting says p is counted whole (include_total),
// so its projection does not matter.
func coveredRollup(d dialect.Dialect, p *query.Plan, counting bool) (*rollupPlan, bool) {
	if !d.Capabilities().Rollups {
		return nil, false
	}
	if p.Distinct != nil {
		return nil, false
	}
	for _, def := range rollups[p.Entity] {
		if rp, ok := covers(def, p, counting); ok {
			return rp, true
		}
	}
	return nil, false
}

// covers reports whether the rollup def can answer p.
func covers(def schema.Rollup, p *query.Plan, counting bool) (*rollupPlan, bool) {
	rp := &rollupPlan{def: def, lo: minTime, hi: maxTime}
	var rest, implied []query.Expr
	for _, x := range conjuncts(p.Filter) {
		if c, ok := x.(query.Cmp); ok && c.Field.Name == def.Time && c.Field.Table != query.NoTable {
			v, ok := c.Value.(int64)
			if !ok || !rp.bound(c.Op, v) {
				return nil, false
			}
			continue
		}
		if onlyTerm(def, x) {
			implied = append(implied, x)
			continue
		}
		if !dimsOnly(def, x) {
			return nil, false
		}
		rest = append(rest, x)
	}
	if def.Only != nil && len(implied) == 0 {
		return nil, false
	}
	rp.dims = query.AndExpr(rest...)
	rp.base = query.AndExpr(append(implied, rest...)...)
	if counting {
		return rp, len(p.GroupBy) == 0 && !aggregates(p)
	}
	if len(p.OrderBy) > 0 || p.Limit > 0 || p.Offset > 0 || len(p.GroupBy) == 0 && !aggregates(p) {
		return nil, false
	}
	for _, g := range p.GroupBy {
		if !rp.groupKey(g) {
			return nil, false
		}
	}
	for _, c := range p.Columns {
		switch {
		case c.Func == "count" && c.Field == nil:
		case c.Aggregate():
			return nil, false
		case !inGroup(p.GroupBy, c):
			return nil, false
		}
	}
	return rp, true
}

// onlyTerm reports whether x is the conjunct field = value of a
// restricted rollup.
func onlyTerm(def schema.Rollup, x query.Expr) bool {
	c, ok := x.(query.Cmp)
	if !ok || def.Only == nil || c.Op != "=" || c.Field.Name != def.Only.Field || c.Field.Table == query.NoTable {
		return false
	}
	v, ok := c.Value.(string)
	return ok && v == def.Only.Value
}

// bound narrows the time range by one comparison (timestamps are whole
// milliseconds, so > v is >= v+1).
func (rp *rollupPlan) bound(op string, v int64) bool {
	if v <= minTime || v >= maxTime {
		return false
	}
	switch op {
	case ">=":
		rp.lo = max(rp.lo, v)
	case ">":
		rp.lo = max(rp.lo, v+1)
	case "<":
		rp.hi = min(rp.hi, v)
	case "<=":
		rp.hi = min(rp.hi, v+1)
	case "=":
		rp.lo, rp.hi = max(rp.lo, v), min(rp.hi, v+1)
	default:
		return false
	}
	return true
}

// groupKey reports whether the rollup can group by g, noting the
// precision a time key needs.
func (rp *rollupPlan) groupKey(g query.Column) bool {
	switch {
	case g.Func == "" && dim(rp.def, g.Field):
		return true
	case g.Func == "to_string" && g.Field.Name == rp.def.Time && g.Field.Table != query.NoTable:
		w := formatPrecision(g.Format)
		if w == 0 || rp.timeKey != 0 && rp.timeKey != w {
			return false
		}
		rp.timeKey = w
		return true
	}
	return false
}

// formatPrecision is the coarsest bucket width whose instants a to_char
// format renders alike: a day for date-only formats, an hour for formats
// that add only hour fields; 0 when the format needs finer.
func formatPrecision(format string) int64 {
	if dateOnly(format) {
		return schema.RollupWidths[0]
	}
	hourless := format
	for _, h := range []string{"HH24", "HH12", "HH", "AM", "PM", "am", "pm", "A.M.", "P.M.", "a.m.", "p.m."} {
		hourless = strings.ReplaceAll(hourless, h, "")
	}
	if hourless != format && !strings.Contains(hourless, `"`) && !strings.Contains(hourless, `\`) && dateOnly(hourless) {
		return schema.RollupWidths[1]
	}
	return 0
}

func inGroup(gs []query.Column, c query.Column) bool {
	for _, g := range gs {
		if g.Field == c.Field && g.Func == c.Func && g.Format == c.Format {
			return true
		}
	}
	return false
}

// conjuncts flattens nested ANDs.
func conjuncts(x query.Expr) []query.Expr {
	switch x := x.(type) {
	case nil:
		return nil
	case query.And:
		var out []query.Expr
		for _, a := range x.Args {
			out = append(out, conjuncts(a)...)
		}
		return out
	}
	return []query.Expr{x}
}

// dimsOnly reports whether x reads nothing but the rollup's dimensions.
func dimsOnly(def schema.Rollup, x query.Expr) bool {
	return onlyFields(x, func(f *query.Field) bool { return dim(def, f) })
}

// onlyFields reports whether x is made of comparisons, matches and tests
// of fields keep reports true of (and constants).
func onlyFields(x query.Expr, keep func(*query.Field) bool) bool {
	all := func(xs []query.Expr) bool {
		for _, a := range xs {
			if !onlyFields(a, keep) {
				return false
			}
		}
		return true
	}
	switch x := x.(type) {
	case query.And:
		return all(x.Args)
	case query.Or:
		return all(x.Args)
	case query.Not:
		return onlyFields(x.X, keep)
	case query.Cmp:
		return keep(x.Field)
	case query.Match:
		return keep(x.Field)
	case query.IsNull:
		return keep(x.Field)
	case query.InValues:
		return keep(x.Field)
	case query.Const:
		return true
	}
	return false
}

// rollupSegment is a part of a time range: whole buckets of one width
// [from, to) of the rollup, or (width 0) rows of the base table; sign -1
// subtracts its count (see complementEdges).
type rollupSegment struct {
	width, from, to int64
	sign            int64
}

// sum renders an aggregate of a segment's count, negated when it is
// subtracted.
func (s rollupSegment) sum(agg string) string { return signed(s.sign, agg) }

// signed renders agg negated when sign is negative.
func signed(sign int64, agg string) string {
	if sign < 0 {
		return "-" + agg
	}
	return agg
}

// complementEdges rewrites each base-table segment that covers more than
// half of one bucket of the finest width w as that whole bucket minus the
// base-table rows of the bucket outside the segment: an edge then reads
// at most half a bucket of rows, and a range starting or ending a
// millisecond off a bucket boundary (as `timestamp > T` does) almost none.
// It also returns the lowest bucket start read whole for such an edge
// (maxTime when none).
func complementEdges(segs []rollupSegment, w int64) ([]rollupSegment, int64) {
	var out []rollupSegment
	lowest := int64(maxTime)
	for _, s := range segs {
		b := floorTo(s.from, w)
		if s.width != 0 || s.from == minTime || s.to == maxTime || s.to > b+w || 2*(s.to-s.from) <= w {
			out = append(out, s)
			continue
		}
		out = append(out, rollupSegment{w, b, b + w, 1})
		if s.from > b {
			out = append(out, rollupSegment{0, b, s.from, -1})
		}
		if s.to < b+w {
			out = append(out, rollupSegment{0, s.to, b + w, -1})
		}
		lowest = min(lowest, b)
	}
	return out, lowest
}

// rollupSegments splits [lo, hi) into whole buckets, coarsest first, and
// base-table ranges finer than the finest bucket. widths are the widths
// that may be used, coarsest first.
func rollupSegments(lo, hi int64, widths []int64) []rollupSegment {
	if lo >= hi {
		return nil
	}
	if len(widths) == 0 {
		return []rollupSegment{{0, lo, hi, 1}}
	}
	w := widths[0]
	a, b := ceilTo(lo, w), floorTo(hi, w)
	if lo == minTime {
		a = minTime
	}
	if hi == maxTime {
		b = maxTime
	}
	if a >= b {
		return rollupSegments(lo, hi, widths[1:])
	}
	segs := rollupSegments(lo, a, widths[1:])
	segs = append(segs, rollupSegment{w, a, b, 1})
	return append(segs, rollupSegments(b, hi, widths[1:])...)
}

func floorTo(v, w int64) int64 {
	m := v % w
	if m < 0 {
		m += w
	}
	return v - m
}

func ceilTo(v, w int64) int64 {
	f := floorTo(v, w)
	if f == v {
		return v
	}
	return f + w
}

// floorTime renders expr floored to a multiple of the width w.
func floorTime(expr string, w int64) string { return schema.FloorSQL(expr, strconv.FormatInt(w, 10)) }

// rollupBuilder renders the parts of a rollup statement.
type rollupBuilder struct {
	*builder
	rp *rollupPlan
	p  *query.Plan
}

// widths are the rollup widths a statement may read: all of them, or
// those no coarser than the time key.
func (rb rollupBuilder) widths() []int64 {
	var ws []int64
	for _, w := range schema.RollupWidths {
		if rb.rp.timeKey == 0 || w <= rb.rp.timeKey {
			ws = append(ws, w)
		}
	}
	return ws
}

// union renders one SELECT per segment, each yielding the group keys
// g0.. and the count n, combined with UNION ALL.
func (rb rollupBuilder) union(keys []query.Column) (string, error) {
	var parts []string
	timeCol := rb.p.Entity.Field(rb.rp.def.Time)
	segs, _ := complementEdges(rollupSegments(rb.rp.lo, rb.rp.hi, rb.widths()), schema.RollupWidths[len(schema.RollupWidths)-1])
	for _, s := range segs {
		var sel, group, conds []string
		rollup := s.width != 0
		for i, k := range keys {
			var e string
			switch {
			case k.Func == "to_string" && rollup:
				e = floorTime("ru.bucket", rb.rp.timeKey)
			case k.Func == "to_string":
				e = floorTime(rb.col(timeCol), rb.rp.timeKey)
			case rollup:
				e = rb.rollupCol(k.Field)
			default:
				e = rb.col(k.Field)
			}
			sel = append(sel, e+" AS g"+strconv.Itoa(i))
			group = append(group, e)
		}
		var from string
		if rollup {
			from = rb.rp.def.Table + " ru"
			sel = append(sel, s.sum("SUM(ru.n)")+" AS n")
			conds = append(conds, "ru.width = "+rb.arg(s.width))
			if s.from != minTime {
				conds = append(conds, "ru.bucket >= "+rb.rangeArg(s.from))
			}
			if s.to != maxTime {
				conds = append(conds, "ru.bucket < "+rb.rangeArg(s.to))
			}
		} else {
			u := planUses(&query.Plan{Entity: rb.p.Entity, Filter: rb.rp.base}, &uses{})
			u.field(timeCol)
			for _, k := range keys {
				u.field(k.Field)
			}
			from = rb.fromClause(rb.p.Entity, u)
			sel = append(sel, s.sum("COUNT(*)")+" AS n")
			t := rb.col(timeCol)
			if s.from != minTime {
				conds = append(conds, t+" >= "+rb.rangeArg(s.from))
			}
			if s.to != maxTime {
				conds = append(conds, t+" < "+rb.rangeArg(s.to))
			}
			if rb.p.Entity.Base == query.EventsTable && timeCol.Table == query.EventsTable {
				// the days whose events can fall in the segment: the
				// events are partitioned by their report's day, not
				// by their own time
				r := ""
				if u.tables.has(query.ReportsTable) {
					r = tableSQL[query.ReportsTable].alias
				}
				if w := rb.eventWindowCond(s.from, s.to-1, tableSQL[query.EventsTable].alias, r); w != "" {
					conds = append(conds, strings.TrimPrefix(w, " AND "))
				}
			}
		}
		filter := rb.rp.base
		if rollup {
			filter = rb.rp.dims
		}
		if filter != nil {
			rb.alias = ""
			if rollup {
				rb.alias = "ru"
			}
			w, err := rb.expr(filter)
			rb.alias = ""
			if err != nil {
				return "", err
			}
			conds = append(conds, w)
		}
		q := "SELECT " + strings.Join(sel, ", ") + " FROM " + from
		if len(conds) > 0 {
			q += " WHERE " + strings.Join(conds, " AND ")
		}
		if len(group) > 0 {
			q += " GROUP BY " + strings.Join(group, ", ")
		}
		parts = append(parts, q)
	}
	if len(parts) == 0 {
		// an empty range: no rows, typed as the keys
		var sel []string
		for i, k := range keys {
			t := "BIGINT" // a time key
			if k.Func == "" {
				t = sqlType(k.Field.Type)
			}
			sel = append(sel, "CAST(NULL AS "+t+") AS g"+strconv.Itoa(i))
		}
		sel = append(sel, "0 AS n")
		return "SELECT " + strings.Join(sel, ", ") + " WHERE 1 = 0", nil
	}
	return strings.Join(parts, " UNION ALL "), nil
}

// rollupCol renders a dimension's column in the rollup table.
func (rb rollupBuilder) rollupCol(f *query.Field) string {
	if f.Table == query.NoTable {
		return rb.col(f)
	}
	return "ru." + f.Column
}

// rollupSelect renders a covered aggregate: the segments' counts per
// group key, summed per group.
func (b *builder) rollupSelect(p *query.Plan, rp *rollupPlan) (string, []OutCol, error) {
	rb := rollupBuilder{builder: b, rp: rp, p: p}
	inner, err := rb.union(p.GroupBy)
	if err != nil {
		return "", nil, err
	}
	outKey := func(i int) string {
		g := p.GroupBy[i]
		if g.Func == "to_string" {
			return b.d.ToChar("t.g"+strconv.Itoa(i), query.Timestamp, b.sameArg(g.Format))
		}
		return "t.g" + strconv.Itoa(i)
	}
	var sel, group []string
	var cols []OutCol
	for _, c := range p.Columns {
		if c.Func == "count" {
			sel = append(sel, "COALESCE(CAST(SUM(t.n) AS BIGINT), 0)")
			cols = append(cols, OutCol{Name: c.Name, Func: c.Func, Type: query.Number, Width: 1})
			continue
		}
		for i, g := range p.GroupBy {
			if g.Field == c.Field && g.Func == c.Func && g.Format == c.Format {
				sel = append(sel, outKey(i))
				oc := OutCol{Name: c.Name, Func: c.Func, Type: c.Field.Type, Width: 1}
				if c.Func == "to_string" {
					oc.Type = query.String
				}
				cols = append(cols, oc)
				break
			}
		}
	}
	for i := range p.GroupBy {
		group = append(group, outKey(i))
	}
	sql := "SELECT " + strings.Join(sel, ", ") + " FROM (" + inner + ") t"
	if len(group) > 0 {
		// a group whose rows have all been deleted sums to zero: it has
		// no rows, so it is no group
		sql += " GROUP BY " + strings.Join(group, ", ") + " HAVING SUM(t.n) > 0"
	}
	// ungrouped, an aggregate of no rows is one row of zero, as PuppetDB's
	return sql, cols, nil
}

// rollupCount renders the number of rows a covered plan has.
func (b *builder) rollupCount(p *query.Plan, rp *rollupPlan) (string, error) {
	rb := rollupBuilder{builder: b, rp: rp, p: p}
	inner, err := rb.union(nil)
	if err != nil {
		return "", err
	}
	return "SELECT COALESCE(CAST(SUM(t.n) AS BIGINT), 0) FROM (" + inner + ") t", nil
}
