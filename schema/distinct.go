package schema

import (
	"strconv"
	"strings"
)

// distinct_resources counted at write time (query/sqlgen's distinct.go
// says how a window is answered from these tables, and when it is not):
//
//   - resource_latest: one row per (certname, resource_type,
//     resource_title, property, name) with its newest stored timestamp
//     (ts) and how many stored events of each status have it, and the same
//     for the next older timestamp (prev_ts).
//   - distinct_rollup: the ts side of those rows counted per bucket of ts
//     and per (status, resource_type, resource_title), as deltas like the
//     other rollups: when a key's newest timestamp moves, its old counts
//     are subtracted from the old bucket and its new ones added to the new.
//   - distinct_state.valid_from: retention removes events, possibly the
//     newest or previous event of a key; windows that start before the
//     newest timestamp it removed are not answered from these tables.

// Tables of distinct_resources.
const (
	ResourceLatest = "resource_latest"
	DistinctRollup = "distinct_rollup"
	DistinctState  = "distinct_state"
)

// DistinctWidths are the bucket widths (ms) of distinct_rollup, coarsest
// first: an hour, and five minutes for the edges. A window's edges finer
// than the finest width are read from resource_latest key by key, one
// random heap fetch per key: with hours alone, the first partial hour
// of a day's window was 35k keys on 16k blocks at 10,000 nodes (38 ms at 7
// days kept, more with more days, as the keys that stop changing spread
// over a larger heap). Five minutes makes the edges 12 times smaller, for
// a second delta row per moved key and batch at ingest.
var DistinctWidths = []int64{3600000, 300000}

// distinctDims are distinct_rollup's dimension columns.
var distinctDims = []string{"status", "resource_type", "resource_title"}

// DistinctCounts maps the count columns of event counts to the status
// they count and to resource_latest's column.
var DistinctCounts = []struct{ Count, Status, Column string }{
	{"failures", "failure", "n_failure"},
	{"skips", "skipped", "n_skipped"},
	{"successes", "success", "n_success"},
	{"noops", "noop", "n_noop"},
}

// latestCountColumns are resource_latest's count columns, in
// DistinctCounts' order.
func latestCountColumns() []string {
	var cols []string
	for _, c := range DistinctCounts {
		cols = append(cols, c.Column)
	}
	return cols
}

// distinctDelta renders the INSERT of distinct_rollup deltas for from, a
// table expression with the columns ts, status, resource_type,
// resource_title and n (a signed count).
func distinctDelta(from string) string {
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
		" SELECT w.width, " + FloorSQL("f.b", "w.width") + ", f.status, f.resource_type, f.resource_title, SUM(f.n)" +
		" FROM (SELECT " + floorTime("x.ts", finest) + " AS b, x.status AS status, x.resource_type AS resource_type," +
		" x.resource_title AS resource_title, SUM(x.n) AS n FROM " + from + " x WHERE x.n <> 0 GROUP BY 1, 2, 3, 4) f" +
		" CROSS JOIN (" + strings.Join(ws, " UNION ALL ") + ") w GROUP BY 1, 2, 3, 4, 5 HAVING SUM(f.n) <> 0"
}

// latestAsStatuses renders a table expression of the counts of
// resource_latest-shaped rows (columns ts, resource_type, resource_title
// and the n_ columns), one row per status (zero counts included): of each
// table expression of froms, counted signs[i] times. It is the input of
// distinctDelta.
func latestAsStatuses(froms []string, signs []int) string {
	var statuses, n []string
	for i, c := range DistinctCounts {
		s := "SELECT '" + c.Status + "'"
		if i == 0 {
			s += " AS status"
		}
		statuses = append(statuses, s)
		n = append(n, "WHEN '"+c.Status+"' THEN l."+c.Column)
	}
	var parts []string
	for i, from := range froms {
		parts = append(parts, "SELECT l.ts AS ts, s.status AS status, l.resource_type AS resource_type, "+
			"l.resource_title AS resource_title, "+strconv.Itoa(signs[i])+" * CASE s.status "+strings.Join(n, " ")+
			" END AS n FROM "+from+" l CROSS JOIN ("+strings.Join(statuses, " UNION ALL ")+") s")
	}
	return "(" + strings.Join(parts, " UNION ALL ") + ")"
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

// LatestKeyEq renders the equality of the resource_latest keys of rows a
// and b, comparing the titles' keys too when the dialect keys them
// (titleKey, Dialect.TitleKey), so that resource_latest's unique index
// serves the join.
func LatestKeyEq(titleKey, a, b string) string {
	s := a + ".certname = " + b + ".certname AND " + a + ".resource_type = " + b + ".resource_type AND " +
		a + ".resource_title = " + b + ".resource_title AND " + a + ".property_key = " + b + ".property_key AND " +
		a + ".name_key = " + b + ".name_key"
	if titleKey != "" {
		s += " AND " + titleKey + "(" + a + ".resource_title) = " + titleKey + "(" + b + ".resource_title)"
	}
	return s
}

// NoTime is the prev_ts of a key with a single stored timestamp: below
// every event, so that GREATEST/MAX over candidates needs no NULL case.
const NoTime = -1 << 62

// noTime is NoTime in SQL.
var noTime = strconv.FormatInt(NoTime, 10)

// LatestOfEvents renders the resource_latest rows of the events of from
// (a table expression with the columns certname, resource_type,
// resource_title, property, name, timestamp and status): per key, the
// newest timestamp and how many of the events have it, by status, and the
// same for the next older timestamp (prev_ts: NoTime when none).
func LatestOfEvents(from string) string {
	var counts []string
	for _, c := range DistinctCounts {
		counts = append(counts, "SUM(CASE WHEN y.rk = 1 AND y.status = '"+c.Status+"' THEN 1 ELSE 0 END) AS "+c.Column)
	}
	counts = append(counts, "COALESCE(MAX(CASE WHEN y.rk = 2 THEN y.timestamp END), "+noTime+") AS prev_ts")
	for _, c := range DistinctCounts {
		counts = append(counts, "SUM(CASE WHEN y.rk = 2 AND y.status = '"+c.Status+"' THEN 1 ELSE 0 END) AS prev_"+c.Column)
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
// one (o_ts and o_prev NoTime and the counts 0 when there is none). It is
// the input of LatestUpsert and LatestDelta, which the writer's locks make
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
		LatestKeyEq(titleKey, "o", "d")
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
	return distinctDelta(latestAsStatuses([]string{side("d", "j.d_ts >= j.o_ts"), side("o", "j.d_ts > j.o_ts")},
		[]int{1, -1}))
}
