package sqlgen

import (
	"strings"

	"reportdb/query"
)

// Events counted by status from the counts stored with each report
// (reports.ev_success, ev_failure, ev_noop, ev_skipped and ev_total, kept
// at write time): dashboards ask
//
//	["extract", [["function","count"], "status"], ["=","latest_report?",true], ["group_by","status"]]
//
// and a scan of the events reads every event of every node's latest report
// (10,000 index probes at 10,000 nodes, 52-75 ms), where the stored counts
// are one narrow row per report. The four statuses Puppet reports are
// columns; any other status (audit, or whatever a wire report names) is
// the part of ev_total they leave, counted from the events of the few
// reports that have one, so the answer is exact for every status.

// storedStatuses are the statuses with a column of their own, in the
// order the rows are produced.
var storedStatuses = []struct{ status, column string }{
	{"success", "ev_success"}, {"failure", "ev_failure"}, {"noop", "ev_noop"}, {"skipped", "ev_skipped"},
}

// statusCountsFromReports renders an events aggregate of count() (and
// status, grouped by status) whose filter tests only fields of the
// event's report, from the counts stored with the reports. ok is false
// when the plan has another shape, and then nothing has been bound.
func (b *builder) statusCountsFromReports(p *query.Plan) (string, []OutCol, bool, error) {
	if !b.d.Capabilities().Rollups {
		return "", nil, false, nil
	}
	if p.Entity != query.Events || p.Distinct != nil || len(p.OrderBy) > 0 || p.Limit > 0 || p.Offset > 0 ||
		len(p.Columns) == 0 {
		return "", nil, false, nil
	}
	isStatus := func(f *query.Field) bool {
		return f != nil && f.Name == "status" && f.Table == query.EventsTable && f.Column == "status"
	}
	grouped := false
	switch len(p.GroupBy) {
	case 0:
	case 1:
		if g := p.GroupBy[0]; g.Func != "" || !isStatus(g.Field) {
			return "", nil, false, nil
		}
		grouped = true
	default:
		return "", nil, false, nil
	}
	counted := false
	for _, c := range p.Columns {
		switch {
		case c.Func == "count" && c.Field == nil:
			counted = true
		case c.Func == "" && grouped && isStatus(c.Field):
		default:
			return "", nil, false, nil
		}
	}
	if !counted {
		return "", nil, false, nil
	}
	filter, ok := query.ReportLevel(p.Filter)
	if !ok {
		return "", nil, false, nil
	}
	// the nodes' latest reports (and their type, environment, status):
	// their sums kept at write time
	rolled, fromRollup := b.latestRollupFilter(filter, query.ReportsTable, "id")
	from := tableSQL[query.ReportsTable].from
	if rest, copies, ok := b.latestReportsFilter(filter, query.ReportsTable, "id"); ok {
		filter, from = rest, copies // the nodes' latest reports: their copies
	}
	cols := make([]OutCol, len(p.Columns))
	for i, c := range p.Columns {
		if c.Func == "count" {
			cols[i] = OutCol{Name: c.Name, Type: query.Number, Func: "count", Width: 1}
		} else {
			cols[i] = OutCol{Name: c.Name, Type: query.String, Width: 1}
		}
	}
	project := func(count, status string) string {
		parts := make([]string, len(p.Columns))
		for i, c := range p.Columns {
			if c.Func == "count" {
				parts[i] = count
			} else {
				parts[i] = status
			}
		}
		return strings.Join(parts, ", ")
	}
	if !grouped && fromRollup {
		sums, err := b.latestSums(rolled, []string{"ev_total"})
		if err != nil {
			return "", nil, false, err
		}
		return "SELECT " + project("CAST(t.ev_total AS BIGINT)", "") + " FROM (" + sums + ") t", cols, true, nil
	}
	where := ""
	if filter != nil {
		w, err := b.expr(filter)
		if err != nil {
			return "", nil, false, err
		}
		where = " WHERE " + w
	}
	if !grouped {
		return "SELECT " + project("CAST(COALESCE(SUM(r.ev_total), 0) AS BIGINT)", "") + " FROM " + from + where,
			cols, true, nil
	}
	// the four stored statuses: one pass over the reports
	var sums, rows, known, stored []string
	for _, s := range storedStatuses {
		sums = append(sums, "SUM(r."+s.column+") AS "+s.column)
		rows = append(rows, "SELECT '"+s.status+"' AS status, t."+s.column+" AS n FROM t")
		known = append(known, "'"+s.status+"'")
		stored = append(stored, "r."+s.column)
	}
	// the rest: events of the reports whose total the four do not make up
	other := "r.ev_total > " + strings.Join(stored, " + ")
	// and renders where with more conditions
	and := func(conds ...string) string {
		if where == "" {
			return " WHERE " + strings.Join(conds, " AND ")
		}
		return where + " AND " + strings.Join(conds, " AND ")
	}
	// probe renders the events of the reports ids (a table expression of
	// their ids, o.id): on dialects with LATERAL each report's events are
	// probed by id, whatever the planner estimates of the reports
	lateral := b.d.Capabilities().Lateral
	probe := func(ids string) string {
		if lateral {
			return ids + " CROSS JOIN LATERAL (SELECT e.status FROM resource_events e WHERE e.report_id = o.id OFFSET 0) e"
		}
		return ids + " JOIN resource_events e ON e.report_id = o.id"
	}
	var t, others string
	switch {
	case fromRollup:
		// the sums, and the number of latest reports with other statuses:
		// their events are read only when there are any (a one-time
		// filter on PostgreSQL)
		measures := []string{"other"}
		for _, s := range storedStatuses {
			measures = append(measures, s.column)
		}
		sums, err := b.latestSums(rolled, measures, "others")
		if err != nil {
			return "", nil, false, err
		}
		t = sums
		others = probe("(SELECT r.id FROM " + from + and("(SELECT t.others FROM t) > 0", other) + ") o")
	case lateral:
		// the same pass over the reports collects the ids of those with
		// another status (an array, mostly empty), instead of a second
		// scan: at 1,000 nodes the latest reports' counts took 0.30 ms
		// instead of 0.41 (stmttime, 200 runs, twice)
		sums = append(sums, "array_agg(r.id) FILTER (WHERE "+other+") AS others")
		t = "SELECT " + strings.Join(sums, ", ") + " FROM " + from + where
		others = probe("t CROSS JOIN unnest(t.others) o(id)")
	default:
		t = "SELECT " + strings.Join(sums, ", ") + " FROM " + from + where
		others = probe("(SELECT r.id FROM " + from + and(other) + ") o")
	}
	sql := "WITH t AS (" + t + ") " +
		"SELECT " + project("CAST(x.n AS BIGINT)", "x.status") + " FROM (" + strings.Join(rows, " UNION ALL ") +
		" UNION ALL SELECT e.status AS status, COUNT(*) AS n FROM " + others +
		" WHERE e.status NOT IN (" + strings.Join(known, ", ") + ") GROUP BY e.status) x WHERE x.n > 0"
	return sql, cols, true, nil
}
