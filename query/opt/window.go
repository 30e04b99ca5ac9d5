package opt

import (
	"reportdb/query"
	"reportdb/query/sqlgen"
	"reportdb/schema/dialect"
)

// window: a plan over a window of event timestamps, on a backend that
// keeps each day's span of event timestamps, reads only the events of
// the report ids of the days whose span meets the window, bound once
// those are read (a report's events are all in its day).
func window(a *Access, caps dialect.Capabilities, p *query.Plan) {
	if caps.EventDays == nil {
		return
	}
	if _, _, ok := sqlgen.EventTimeWindow(p); !ok {
		return
	}
	a.BoundIDs = true
	a.opts = append(a.opts, sqlgen.BoundReportIDs())
}

// windowChosen records whether the rendered statements bound the window's
// report ids (a statement over rollups or reports alone has none).
func windowChosen(a *Access, p *query.Plan) {
	if !a.BoundIDs {
		return
	}
	if len(a.Rows.ReportIDArgs) == 0 && (a.Total == nil || len(a.Total.ReportIDArgs) == 0) {
		a.BoundIDs = false
		return
	}
	from, to, _ := sqlgen.EventTimeWindow(p)
	a.reason("window-ids: events in [%d, %d]: the days' report ids are read first", from, to)
}
