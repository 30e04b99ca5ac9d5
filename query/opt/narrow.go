package opt

import (
	"reportdb/query"
	"reportdb/query/sqlgen"
	"reportdb/schema/dialect"
)

// narrowable: a plan over reports ordered by a time column, or over
// events by their timestamp with no window, on a backend that keeps each
// day's span of that column, reads the day of the newest (oldest) rows
// first, and the rest only when the page is not full: the newest reports
// of a node, or the first pages of all, then read one or two days however
// many are kept. A plan on one report's hash (Puppetboard's report page
// asks for its events) reads the newest reports' days first: a report is
// stored in one day, so when the head has rows they are all of its rows.
// Statements over rollups or the latest reports' copies are not
// narrowed: sqlgen is asked whether the statement takes the narrowing.
func narrowable(a *Access, caps dialect.Capabilities, p *query.Plan) bool {
	rd := caps.ReportDays
	if rd == nil {
		return false
	}
	col, desc, unique := "end_time", true, true
	if !sqlgen.NarrowHash(p) {
		var ok bool
		if col, desc, ok = sqlgen.NarrowOrder(p); !ok {
			return false
		}
		unique = false
	}
	var sql string
	if p.Entity == query.Events && !unique {
		if caps.EventDays == nil {
			return false
		}
		sql = caps.EventDays.EventSpansSQL()
	} else if s, ok := rd.ReportDaysSQL(col); ok {
		sql = s
	} else {
		return false
	}
	a.Narrow = &Narrowing{Column: col, Desc: desc, Unique: unique, SpansSQL: sql}
	if b, err := a.Head(nil, sqlgen.Narrow{}); err != nil || !b.Narrowed {
		a.Narrow = nil
		return false
	}
	if unique {
		a.reason("narrowed: one report's hash: the newest days' reports first")
	} else {
		a.reason("narrowed: ordered by %s: the day of the %s first", col, map[bool]string{true: "newest", false: "oldest"}[desc])
	}
	return true
}
