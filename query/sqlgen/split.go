package sqlgen

import (
	"strings"

	"reportdb/query"
)

// ReportLookups is implemented by dialects on which a page of events
// whose filter and order read the events alone is better answered in two
// statements than with the join to the events' reports (SplitReports):
// the page's events with their report ids, then the reports' columns by
// id. On PostgreSQL reports are partitioned by day, and the join probes
// the reports for each event of the page: an Append over the day
// partitions rescanned per event, 1,000 probes for the 355 reports of a
// page of the medium fleet's title search (5.6 of its 14.9 ms), where
// one lookup of the 355 ids takes 1.8 ms.
type ReportLookups interface {
	ReportKeys
	// LookupReports reports whether pages of events are split.
	LookupReports() bool
}

// MaxSplitLimit is the largest page of events that SplitReports splits:
// the engine holds the page's events in memory until their reports are
// read (it cannot read them beside the events on a snapshot's one
// connection). A larger page, or one without a limit, is joined.
const MaxSplitLimit = 10000

// ReportSplit is an events plan answered in two statements (SplitReports).
type ReportSplit struct {
	// Events reads the page of events: the plan's event columns, then
	// the event's report id (its last column).
	Events *query.Plan
	// Reports reads the reports' columns by id: the id first, then the
	// report columns, one per field of Fields. KeyArgs are the indexes in
	// Args of the ids (an array) and of their days' range [lo, hi), to be
	// bound before it runs.
	Reports *Built
	// Out maps each SQL result column of the plan's own statement to the
	// column it is read from: i >= 0 the events' column i, -(i+1) the
	// reports' column i (after the id).
	Out []int
	// Columns are the plan's output columns, as Select renders them.
	Columns []OutCol
	days    ReportKeys
}

// ReportsOf returns the Reports statement bound to ids.
func (s *ReportSplit) ReportsOf(ids []int64) *Built {
	b := *s.Reports
	b.Args = append([]any(nil), b.Args...)
	lo, hi := s.days.IDDays(ids)
	b.Args[b.KeyArgs[0]], b.Args[b.KeyArgs[1]], b.Args[b.KeyArgs[2]] = ids, lo, hi
	return &b
}

// SplitReports splits plan p (SplitReports' conditions) on dialect d
// when d asks for it (ReportLookups): p reads events, with no grouping,
// function or distinct window, a limit of at most MaxSplitLimit, output
// columns of which at least one is its report's (none a blob), and a
// filter and an order that read columns of the events alone, with no
// subquery and no latest-report test. The join is an inner one, and every
// event has its report (both are written in one transaction and removed
// together); an event whose report the lookup does not find is left out,
// as the join leaves it out.
func SplitReports(d Dialect, p *query.Plan) (*ReportSplit, bool) {
	rl, ok := d.(ReportLookups)
	if !ok || !rl.LookupReports() {
		return nil, false
	}
	if p.Entity != query.Events || p.Distinct != nil || len(p.GroupBy) > 0 ||
		p.Limit <= 0 || p.Limit > MaxSplitLimit || !eventsOnly(p) {
		return nil, false
	}
	cols := p.Columns
	if cols == nil {
		for _, name := range p.Entity.Output {
			f := p.Entity.Field(name)
			cols = append(cols, query.Column{Name: f.Name, Field: f})
		}
	}
	s := &ReportSplit{days: rl}
	var evCols []query.Column
	var repFields []*query.Field
	for _, c := range cols {
		if c.IsFunc() || c.Field == nil || c.Field.Type == query.Blob {
			return nil, false
		}
		if c.Field.Table == query.ReportsTable {
			repFields = append(repFields, c.Field)
			s.Out = append(s.Out, -len(repFields))
			continue
		}
		if c.Field.Table != query.EventsTable && c.Field.Table != query.NoTable {
			return nil, false
		}
		evCols = append(evCols, c)
		s.Out = append(s.Out, len(evCols)-1)
	}
	if len(repFields) == 0 {
		return nil, false // no join to save
	}
	ev := *p
	ev.Columns = append(evCols, query.Column{Name: "report_id",
		Field: &query.Field{Name: "report_id", Type: query.Number, Table: query.EventsTable, Column: "report_id", NotNull: true}})
	s.Events = &ev
	_, s.Columns = newBuilder(d, nil).selectList(p)

	b := newBuilder(d, nil)
	sel := make([]string, 0, len(repFields)+1)
	sel = append(sel, b.col(&query.Field{Table: query.ReportsTable, Column: "id"}))
	for _, f := range repFields {
		sel = append(sel, b.col(f))
	}
	idsArg := b.arg([]int64(nil))
	lo, hi := b.arg(int64(0)), b.arg(int64(0))
	r := schema[query.ReportsTable].alias
	sql := "SELECT " + strings.Join(sel, ", ") + " FROM " + schema[query.ReportsTable].from + " WHERE " +
		rl.AnyID(r+".id", idsArg) + " AND " + r + ".id >= " + lo + " AND " + r + ".id < " + hi
	s.Reports = &Built{SQL: sql, Args: b.args, Keyed: true, KeyArgs: []int{0, 1, 2}}
	return s, true
}

// eventsOnly reports whether p's filter and order read columns of the
// events alone (or constants), with no subquery and no latest-report
// test (whose statement reads the nodes' latest reports in place of the
// events' reports).
func eventsOnly(p *query.Plan) bool {
	var u uses
	exprUses(&u, p.Filter)
	for _, o := range p.OrderBy {
		if o.Column != nil || o.Field == nil {
			return false
		}
		u.field(o.Field)
	}
	if u.subquery || u.blobs || hasLatestTest(p.Filter) {
		return false
	}
	return u.tables&^(1<<query.EventsTable|1<<query.NoTable) == 0
}

// hasLatestTest reports whether x tests latest_report? or a node's state
// anywhere.
func hasLatestTest(x query.Expr) bool {
	switch x := x.(type) {
	case query.And:
		for _, a := range x.Args {
			if hasLatestTest(a) {
				return true
			}
		}
	case query.Or:
		for _, a := range x.Args {
			if hasLatestTest(a) {
				return true
			}
		}
	case query.Not:
		return hasLatestTest(x.X)
	case query.LatestReport, query.NodeState:
		return true
	}
	return false
}
