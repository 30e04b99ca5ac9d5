package opt

import (
	"reportdb/query"
	"reportdb/query/sqlgen"
)

// window: a plan over a window of event timestamps, on a backend that
// keeps each day's span of event timestamps, reads only the events of
// the report ids of the days whose span meets the window, bound once
// those are read (a report's events are all in its day).
func window(a *Access, caps sqlgen.Capabilities, p *query.Plan) {
	if caps.EventDays == nil {
		return
	}
	from, to, ok := sqlgen.EventTimeWindow(p)
	if !ok {
		return
	}
	a.BoundIDs = true
	a.opts = append(a.opts, sqlgen.BoundReportIDs())
	a.reason("window-ids: events in [%d, %d]: the days' report ids are read first", from, to)
}
