package sqlgen

import (
	"math"
	"strings"

	"reportdb/query"
	"reportdb/schema"
	"reportdb/schema/dialect"
)

// distinct_resources counted at write time.
//
// An event-counts query with distinct_resources=true counts, of each
// (certname, resource_type, resource_title, property, name), the events
// with the newest timestamp in the window [S, E] (all of them when several
// share it: equal timestamps do not supersede each other). The scan path
// computes that newest timestamp per key over every event of the window,
// so its cost is the window's size (1.5M events a day at 10,000 nodes).
//
// Kept at write time instead (package schema, its distinct.go, renders
// what the writers run): resource_latest, one row per key with its newest
// stored timestamp (ts) and the next older one (prev_ts) and how many
// events of each status have them; distinct_rollup, the ts side of those
// rows counted per bucket of ts; and distinct_state.valid_from, the
// newest timestamp retention removed.
//
// When no key has two timestamps after E, the newest event of a key within
// [S, E] is its ts side if S <= ts <= E, or its prev side if ts > E and
// S <= prev_ts <= E, and there is none otherwise. So, with S >= valid_from,
// the counts summarised by resource are the rollup's whole hours inside
// the range, the rows at its edges (ts within the partial hours, read by
// resource_latest's ts index) and the prev side of the rows newer than E
// (usually the few runs still reporting at E): the cost depends on the
// hours and resources the answer spans, not on the events stored. Both
// conditions are checked by the statement itself, against the snapshot it
// answers from, and the scan answers when they do not hold (a window
// ending well in the past, or starting before what retention removed).

// distinctPlan is an event-counts query the distinct tables can answer.
type distinctPlan struct {
	start, end int64 // the distinct window, inclusive
	lo, hi     int64 // the events counted: [lo, hi), within the window
	// segs are the parts of [lo, hi): whole buckets, and edges finer than
	// a bucket (complemented when they cover more than half of one);
	// readsFrom is the lowest instant they read: the window's start, or
	// the start of a bucket read whole for its first edge
	segs      []rollupSegment
	readsFrom int64
}

// coveredDistinct reports whether the distinct tables can answer p: the
// counts of a distinct_resources window, summarised by resource and
// counted by resource, filtered on the events' timestamp only.
func coveredDistinct(d dialect.Dialect, p *query.CountsPlan) (*distinctPlan, bool) {
	if !d.Capabilities().Rollups {
		return nil, false
	}
	ev := p.Events
	if ev == nil || ev.Distinct == nil || ev.DistinctLatest != nil || p.FromReports || p.Corrective ||
		p.SummarizeBy != "resource" || p.CountBy != "resource" {
		return nil, false
	}
	w := ev.Distinct
	if w.Start <= minTime || w.End >= maxTime-1 || w.Start > w.End {
		return nil, false
	}
	rp := &rollupPlan{lo: w.Start, hi: w.End + 1}
	for _, x := range conjuncts(ev.Filter) {
		c, ok := x.(query.Cmp)
		if !ok || c.Field.Name != "timestamp" || c.Field.Table != query.EventsTable {
			return nil, false
		}
		v, ok := c.Value.(int64)
		if !ok || !rp.bound(c.Op, v) {
			return nil, false
		}
	}
	segs, lowest := complementEdges(rollupSegments(rp.lo, rp.hi, schema.DistinctWidths), schema.DistinctWidths[len(schema.DistinctWidths)-1])
	return &distinctPlan{start: w.Start, end: w.End, lo: rp.lo, hi: rp.hi, segs: segs, readsFrom: min(lowest, w.Start)}, true
}

// distinctCountsSQL renders the counts of a covered plan: the subject and
// count columns of eventCounts, one row per resource with any count.
func (b *builder) distinctCountsSQL(dp *distinctPlan) string {
	var parts []string
	for _, s := range dp.segs {
		var sel []string
		if s.width != 0 {
			for _, c := range schema.DistinctCounts {
				sel = append(sel, s.sum("SUM(CASE WHEN ru.status = '"+c.Status+"' THEN ru.n ELSE 0 END)")+" AS "+c.Count)
			}
			parts = append(parts, "SELECT ru.resource_type AS resource_type, ru.resource_title AS resource_title, "+
				strings.Join(sel, ", ")+" FROM distinct_rollup ru WHERE ru.width = "+b.arg(s.width)+
				" AND ru.bucket >= "+b.rangeArg(s.from)+" AND ru.bucket < "+b.rangeArg(s.to)+
				" GROUP BY ru.resource_type, ru.resource_title")
			continue
		}
		// the keys whose newest event is in the edge: of the keys of the
		// edge's events, those whose newest timestamp is still there
		parts = append(parts, latestSumSQL("", s.sign, latestOfEventKeys(b.d.TitleKey(), true,
			"e.timestamp >= "+b.rangeArg(s.from)+" AND e.timestamp < "+b.rangeArg(s.to)+
				b.eventWindowCond(s.from, s.to-1, "e", "r")),
			"l.ts >= "+b.rangeArg(s.from)+" AND l.ts < "+b.rangeArg(s.to)))
	}
	// the keys with events newer than the window: their newest event in
	// the window is their previous timestamp's (the guard makes sure no
	// key has two timestamps after the window)
	if dp.lo < dp.hi {
		parts = append(parts, latestSumSQL("prev_", 1, latestOfEventKeys(b.d.TitleKey(), true,
			"e.timestamp > "+b.rangeArg(dp.end)+b.eventWindowCond(dp.end+1, math.MaxInt64, "e", "r")),
			"l.ts > "+b.rangeArg(dp.end)+" AND l.prev_ts >= "+b.rangeArg(dp.lo)+" AND l.prev_ts < "+b.rangeArg(dp.hi)))
	}
	out := []string{"t.resource_type AS resource_type", "t.resource_title AS resource_title"}
	var total []string
	for _, c := range query.CountColumns(false) {
		out = append(out, "CAST(SUM(t."+c+") AS BIGINT) AS "+c)
		total = append(total, "t."+c)
	}
	if len(parts) == 0 {
		// an empty range: no rows, typed as the counts
		return "SELECT CAST(NULL AS TEXT) AS resource_type, CAST(NULL AS TEXT) AS resource_title, " +
			"CAST(0 AS BIGINT) AS failures, CAST(0 AS BIGINT) AS skips, CAST(0 AS BIGINT) AS successes, " +
			"CAST(0 AS BIGINT) AS noops WHERE 1 = 0"
	}
	return "SELECT " + strings.Join(out, ", ") + " FROM (" + strings.Join(parts, " UNION ALL ") +
		") t GROUP BY t.resource_type, t.resource_title HAVING SUM(" + strings.Join(total, " + ") + ") > 0"
}

// latestSumSQL renders the counts per resource of the resource_latest rows
// (alias l, in from) where cond holds, read from the count columns with
// prefix ("" for the newest timestamp, "prev_" for the previous one),
// negated when sign is -1.
func latestSumSQL(prefix string, sign int64, from, cond string) string {
	var sel []string
	for _, c := range schema.DistinctCounts {
		sel = append(sel, signed(sign, "SUM(l."+prefix+c.Column+")")+" AS "+c.Count)
	}
	return "SELECT l.resource_type AS resource_type, l.resource_title AS resource_title, " +
		strings.Join(sel, ", ") + " FROM " + from + " WHERE " + cond + " GROUP BY l.resource_type, l.resource_title"
}

// latestOfEventKeys renders a FROM item: the resource_latest rows (alias
// l) of the keys of the stored events (alias e) where cond holds, each key
// once when distinct. resource_latest has no index on ts (an update that
// moves a key's timestamp then changes no indexed column, so it is a HOT
// update: no index entry, the same page), so the rows whose timestamp is
// in a range are found from the events in that range, by the events'
// timestamp index and resource_latest's key: every row's ts is the
// timestamp of a stored event of its key, for the rows a covered window
// may read (retention removes only events older than valid_from).
// titleKey is the dialect's (Dialect.TitleKey).
func latestOfEventKeys(titleKey string, distinct bool, cond string) string {
	sel := "SELECT "
	if distinct {
		sel += "DISTINCT "
	}
	return "(" + sel + "r.certname AS certname, e.resource_type AS resource_type, e.resource_title AS resource_title, " +
		"COALESCE('=' || e.property, '') AS property_key, COALESCE('=' || e.name, '') AS name_key" +
		" FROM resource_events e JOIN reports r ON r.id = e.report_id WHERE " + cond + ") k JOIN resource_latest l" +
		" ON " + schema.LatestKeyEq(titleKey, "l", "k")
}

// distinctGuard renders the condition under which the distinct tables
// answer the window: no key has two timestamps newer than its end, and
// nothing it reads starts before what retention left exact (a bucket
// straddling valid_from still counts keys retention removed from
// resource_latest).
func (b *builder) distinctGuard(dp *distinctPlan) string {
	return "NOT EXISTS (SELECT 1 FROM " + latestOfEventKeys(b.d.TitleKey(), false,
		"e.timestamp > "+b.rangeArg(dp.end)+b.eventWindowCond(dp.end+1, math.MaxInt64, "e", "r")) +
		" WHERE l.prev_ts > " + b.rangeArg(dp.end) + ")" +
		" AND NOT EXISTS (SELECT 1 FROM distinct_state WHERE valid_from > " + b.rangeArg(dp.readsFrom) + ")"
}

// distinctScanGate is the condition under which the scan branch of a
// covered plan runs (on the distinctEventCounts CTE).
const distinctScanGate = "(SELECT ok FROM dg) = 0"

// distinctEventCounts renders a covered plan: the distinct tables' answer
// when the guard holds, else the scan's (scan: eventCounts' grouped rows
// with no counts filter, order or limit); one of the two branches runs.
func (b *builder) distinctEventCounts(p *query.CountsPlan, dp *distinctPlan, scan string, paging bool) string {
	// the guard is evaluated once (a CTE), each branch gated on it
	s := "WITH dg AS (SELECT CASE WHEN " + b.distinctGuard(dp) + " THEN 1 ELSE 0 END AS ok)" +
		" SELECT * FROM (SELECT * FROM (" + b.distinctCountsSQL(dp) + ") dr WHERE (SELECT ok FROM dg) = 1" +
		" UNION ALL SELECT * FROM (" + scan + ") ds WHERE " + distinctScanGate + ") ev"
	if f := p.Filter; f != nil {
		s += " WHERE ev." + f.Count + " " + f.Op + " " + b.countArg(f)
	}
	if paging {
		s += b.countsOrderLimit(p)
	}
	return s
}
