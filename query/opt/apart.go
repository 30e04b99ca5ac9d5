package opt

import "reportdb/query/sqlgen"

// allowApart: a page of events may read its reports apart (their ids
// first, then each report once, instead of a join row per event), but
// not with a total: that runs in a snapshot on one connection, and
// reading the reports on another while holding it could wait for the
// pool forever. A page of reports may read its events apart (in the
// snapshot too: there on its connection, once the page is read). Neither
// after a page read apart failed (Options.NoApart). sqlgen decides from
// the plan's shape whether the page is one.
func allowApart(a *Access, o Options) {
	if o.NoApart {
		return
	}
	if !o.Total {
		a.opts = append(a.opts, sqlgen.ReportsApart())
	}
	a.opts = append(a.opts, sqlgen.EventsApart())
}

// apartChosen records whether the rendered rows statement reads apart.
func apartChosen(a *Access, rows *sqlgen.Built) {
	if rows.Apart == nil {
		return
	}
	if rows.Apart.Events {
		a.EventsApart = true
		a.reason("events-apart: a page of whole reports reads its events by report id")
	} else {
		a.ReportsApart = true
		a.reason("reports-apart: a page of events reads its reports by id")
	}
}
