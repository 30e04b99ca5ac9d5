package sqlgen

import (
	"math"
	"strconv"
	"strings"

	"reportdb/query"
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
// Kept at write time instead (see the backends' migrations):
//
//   - resource_latest: one row per key with its newest stored timestamp
//     (ts) and how many stored events of each status have it, and the same
//     for the next older timestamp (prev_ts).
//   - distinct_rollup: the ts side of those rows counted per hour of ts
//     and per (status, resource_type, resource_title), as deltas like the
//     other rollups: when a key's newest timestamp moves, its old counts
//     are subtracted from the old hour and its new ones added to the new.
//   - distinct_state.valid_from: retention removes events, possibly the
//     newest or previous event of a key; windows that start before the
//     newest timestamp it removed are not answered from these tables.
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

// DistinctWidths are the bucket widths (ms) of distinct_rollup, coarsest
// first: an hour, and five minutes for the edges. A window's edges finer
// than the finest width are read from resource_latest key by key, one
// random heap fetch per key: with hours alone, the first partial hour
// of a day's window was 35k keys on 16k blocks at 10,000 nodes (38 ms at 7
// days kept, more with more days, as the keys that stop changing spread
// over a larger heap). Five minutes makes the edges 12 times smaller, for
// a second delta row per moved key and batch at ingest.
var DistinctWidths = []int64{3600000, 300000}

// distinctCounts maps the count columns to the status they count and to
// resource_latest's column.
var distinctCounts = []struct{ count, status, column string }{
	{"failures", "failure", "n_failure"},
	{"skips", "skipped", "n_skipped"},
	{"successes", "success", "n_success"},
	{"noops", "noop", "n_noop"},
}

// latestCountColumns are resource_latest's count columns, in
// distinctCounts' order.
func latestCountColumns() []string {
	var cols []string
	for _, c := range distinctCounts {
		cols = append(cols, c.column)
	}
	return cols
}

// DistinctDelta renders the INSERT of distinct_rollup deltas for from, a
// table expression with the columns ts, status, resource_type,
// resource_title and n (a signed count).
func DistinctDelta(from string) string {
	var ws []string
	for i, w := range DistinctWidths {
		s := "SELECT " + strconv.FormatInt(w, 10)
		if i == 0 {
			s += " AS width"
		}
		ws = append(ws, s)
	}
	// summed per finest bucket first, then per bucket of every width
	finest := DistinctWidths[len(DistinctWidths)-1]
	return "INSERT INTO distinct_rollup (width, bucket, status, resource_type, resource_title, n)" +
		" SELECT w.width, " + floorSQL("f.b", "w.width") + ", f.status, f.resource_type, f.resource_title, SUM(f.n)" +
		" FROM (SELECT " + floorTime("x.ts", finest) + " AS b, x.status AS status, x.resource_type AS resource_type," +
		" x.resource_title AS resource_title, SUM(x.n) AS n FROM " + from + " x WHERE x.n <> 0 GROUP BY 1, 2, 3, 4) f" +
		" CROSS JOIN (" + strings.Join(ws, " UNION ALL ") + ") w GROUP BY 1, 2, 3, 4, 5 HAVING SUM(f.n) <> 0"
}

// latestAsStatuses renders a table expression of the counts of
// resource_latest-shaped rows (columns ts, resource_type, resource_title
// and the n_ columns), one row per status (zero counts included): of each
// table expression of froms, counted signs[i] times. It is the input of
// DistinctDelta.
func latestAsStatuses(froms []string, signs []int) string {
	var statuses, n []string
	for i, c := range distinctCounts {
		s := "SELECT '" + c.status + "'"
		if i == 0 {
			s += " AS status"
		}
		statuses = append(statuses, s)
		n = append(n, "WHEN '"+c.status+"' THEN l."+c.column)
	}
	var parts []string
	for i, from := range froms {
		parts = append(parts, "SELECT l.ts AS ts, s.status AS status, l.resource_type AS resource_type, "+
			"l.resource_title AS resource_title, "+strconv.Itoa(signs[i])+" * CASE s.status "+strings.Join(n, " ")+
			" END AS n FROM "+from+" l CROSS JOIN ("+strings.Join(statuses, " UNION ALL ")+") s")
	}
	return "(" + strings.Join(parts, " UNION ALL ") + ")"
}

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
func coveredDistinct(d Dialect, p *query.CountsPlan) (*distinctPlan, bool) {
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
	segs, lowest := complementEdges(rollupSegments(rp.lo, rp.hi, DistinctWidths), DistinctWidths[len(DistinctWidths)-1])
	return &distinctPlan{start: w.Start, end: w.End, lo: rp.lo, hi: rp.hi, segs: segs, readsFrom: min(lowest, w.Start)}, true
}

// distinctCountsSQL renders the counts of a covered plan: the subject and
// count columns of eventCounts, one row per resource with any count.
func (b *builder) distinctCountsSQL(dp *distinctPlan) string {
	var parts []string
	for _, s := range dp.segs {
		var sel []string
		if s.width != 0 {
			for _, c := range distinctCounts {
				sel = append(sel, s.sum("SUM(CASE WHEN ru.status = '"+c.status+"' THEN ru.n ELSE 0 END)")+" AS "+c.count)
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
	for _, c := range distinctCounts {
		sel = append(sel, signed(sign, "SUM(l."+prefix+c.column+")")+" AS "+c.count)
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
		" ON " + latestKeyEq(titleKey, "l", "k")
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

// latestKey are the key columns of resource_latest: property and name are
// kept as the empty string for NULL and '=' || v for a value v, so that
// the key is unique and NULL matches NULL (as in the scan's PARTITION BY).
const latestKey = "certname, resource_type, resource_title, property_key, name_key"

// latestConflictKey is the key of resource_latest's unique index: titles
// by their key when the dialect keys them (Dialect.TitleKey).
func latestConflictKey(titleKey string) string {
	if titleKey == "" {
		return latestKey
	}
	return "certname, resource_type, " + titleKey + "(resource_title), property_key, name_key"
}

// latestKeyEq renders the equality of the resource_latest keys of rows a
// and b, comparing the titles' keys too when the dialect keys them, so
// that resource_latest's unique index serves the join.
func latestKeyEq(titleKey, a, b string) string {
	s := a + ".certname = " + b + ".certname AND " + a + ".resource_type = " + b + ".resource_type AND " +
		a + ".resource_title = " + b + ".resource_title AND " + a + ".property_key = " + b + ".property_key AND " +
		a + ".name_key = " + b + ".name_key"
	if titleKey != "" {
		s += " AND " + titleKey + "(" + a + ".resource_title) = " + titleKey + "(" + b + ".resource_title)"
	}
	return s
}

// noTime is the prev_ts of a key with a single stored timestamp (below
// every event, so that GREATEST/MAX over candidates needs no NULL case).
const noTime = "-4611686018427387904"

// LatestOfEvents renders the resource_latest rows of the events of from
// (a table expression with the columns certname, resource_type,
// resource_title, property, name, timestamp and status): per key, the
// newest timestamp and how many of the events have it, by status, and the
// same for the next older timestamp (prev_ts: noTime when none).
func LatestOfEvents(from string) string {
	var counts []string
	for _, c := range distinctCounts {
		counts = append(counts, "SUM(CASE WHEN y.rk = 1 AND y.status = '"+c.status+"' THEN 1 ELSE 0 END) AS "+c.column)
	}
	counts = append(counts, "COALESCE(MAX(CASE WHEN y.rk = 2 THEN y.timestamp END), "+noTime+") AS prev_ts")
	for _, c := range distinctCounts {
		counts = append(counts, "SUM(CASE WHEN y.rk = 2 AND y.status = '"+c.status+"' THEN 1 ELSE 0 END) AS prev_"+c.column)
	}
	pk, nk := "COALESCE('=' || x.property, '')", "COALESCE('=' || x.name, '')"
	return "SELECT y.certname AS certname, y.resource_type AS resource_type, y.resource_title AS resource_title, " +
		"y.property_key AS property_key, y.name_key AS name_key, MAX(y.timestamp) AS ts, " + strings.Join(counts, ", ") +
		" FROM (SELECT x.certname AS certname, x.resource_type AS resource_type, x.resource_title AS resource_title, " +
		pk + " AS property_key, " + nk + " AS name_key, x.timestamp AS timestamp, x.status AS status, " +
		"DENSE_RANK() OVER (PARTITION BY x.certname, x.resource_type, x.resource_title, " + pk + ", " + nk +
		" ORDER BY x.timestamp DESC) AS rk FROM " + from + " x) y WHERE y.rk <= 2" +
		" GROUP BY y.certname, y.resource_type, y.resource_title, y.property_key, y.name_key"
}

// latestColumns are resource_latest's columns after the key.
func latestColumns() []string {
	cols := latestCountColumns()
	out := append([]string{"ts"}, cols...)
	out = append(out, "prev_ts")
	for _, c := range cols {
		out = append(out, "prev_"+c)
	}
	return out
}

// LatestJoin renders the rows of from (rows of LatestOfEvents, one per
// key) beside the stored row of their key as resource_latest reads in the
// statement: the key, then d_ts, d_prev and d_<count>, d_prev_<count> for
// the new row and o_ts, o_prev, o_<count>, o_prev_<count> for the stored
// one (o_ts and o_prev noTime and the counts 0 when there is none). It is
// the input of LatestUpsert and LatestDeltas, which the writer's locks make
// read the rows they replace. titleKey is the dialect's (Dialect.TitleKey).
func LatestJoin(from, titleKey string) string {
	cols := latestCountColumns()
	a := []string{"d.certname AS certname", "d.resource_type AS resource_type", "d.resource_title AS resource_title",
		"d.property_key AS property_key", "d.name_key AS name_key",
		"COALESCE(o.ts, " + noTime + ") AS o_ts", "COALESCE(o.prev_ts, " + noTime + ") AS o_prev",
		"d.ts AS d_ts", "d.prev_ts AS d_prev"}
	for _, c := range cols {
		a = append(a, "COALESCE(o."+c+", 0) AS o_"+c, "COALESCE(o.prev_"+c+", 0) AS o_prev_"+c,
			"d."+c+" AS d_"+c, "d.prev_"+c+" AS d_prev_"+c)
	}
	return "SELECT " + strings.Join(a, ", ") + " FROM " + from + " d LEFT JOIN resource_latest o ON " +
		latestKeyEq(titleKey, "o", "d")
}

// LatestUpsert renders the INSERT that merges the rows of joined (a table
// of LatestJoin's rows) into resource_latest: of the stored row's two
// timestamps and the new row's two, the newest and the next older are
// kept, the counts of equal timestamps added. greatest is the SQL function
// returning the greatest of its arguments (GREATEST, or SQLite's MAX);
// titleKey is the dialect's (Dialect.TitleKey).
func LatestUpsert(joined, greatest, titleKey string) string {
	cols := latestCountColumns()
	// b: a and the newest of the four timestamps; e: b and the newest
	// below it (noTime when none)
	below := func(t string) string { return "CASE WHEN b." + t + " < b.top THEN b." + t + " ELSE " + noTime + " END" }
	sec := greatest + "(" + strings.Join([]string{below("o_ts"), below("o_prev"), below("d_ts"), below("d_prev")}, ", ") + ")"
	var out []string
	for _, c := range cols {
		out = append(out, "CASE WHEN e.o_ts = e.top THEN e.o_"+c+" ELSE 0 END + CASE WHEN e.d_ts = e.top THEN e.d_"+c+
			" ELSE 0 END AS "+c)
	}
	out = append(out, "e.sec AS prev_ts")
	for _, c := range cols {
		var terms []string
		for _, t := range [][2]string{{"o_ts", "o_" + c}, {"o_prev", "o_prev_" + c}, {"d_ts", "d_" + c}, {"d_prev", "d_prev_" + c}} {
			terms = append(terms, "CASE WHEN e."+t[0]+" = e.sec THEN e."+t[1]+" ELSE 0 END")
		}
		out = append(out, strings.Join(terms, " + ")+" AS prev_"+c)
	}
	merged := "SELECT e.certname AS certname, e.resource_type AS resource_type, e.resource_title AS resource_title, " +
		"e.property_key AS property_key, e.name_key AS name_key, e.top AS ts, " + strings.Join(out, ", ") +
		" FROM (SELECT b.*, " + sec + " AS sec FROM (SELECT a.*, " + greatest + "(a.o_ts, a.d_ts) AS top FROM " +
		joined + " a) b) e"
	all := latestColumns()
	var set []string
	for _, c := range all {
		set = append(set, c+" = excluded."+c)
	}
	return "INSERT INTO resource_latest (" + latestKey + ", " + strings.Join(all, ", ") + ") SELECT " +
		latestKey + ", " + strings.Join(all, ", ") + " FROM (" + merged + ") m WHERE 1 = 1 ORDER BY " + latestKey +
		" ON CONFLICT (" + latestConflictKey(titleKey) + ") DO UPDATE SET " + strings.Join(set, ", ")
}

// LatestDelta renders the INSERT of the distinct_rollup deltas that
// merging joined (a table of LatestJoin's rows) into resource_latest
// (LatestUpsert) makes: the new rows that become or join their key's
// newest are added at their ts, and the stored rows they replace are
// subtracted at theirs.
func LatestDelta(joined string) string {
	cols := latestCountColumns()
	side := func(p, cond string) string {
		sel := []string{"j." + p + "_ts AS ts", "j.resource_type AS resource_type", "j.resource_title AS resource_title"}
		for _, c := range cols {
			sel = append(sel, "j."+p+"_"+c+" AS "+c)
		}
		return "(SELECT " + strings.Join(sel, ", ") + " FROM " + joined + " j WHERE " + cond + ")"
	}
	return DistinctDelta(latestAsStatuses([]string{side("d", "j.d_ts >= j.o_ts"), side("o", "j.d_ts > j.o_ts")},
		[]int{1, -1}))
}
