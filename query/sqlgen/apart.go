package sqlgen

import (
	"strings"

	"reportdb/query"
	"reportdb/schema/dialect"
)

// The pages of events whose reports are read apart: at least
// apartMinRows (below, the second statement's round trip costs about what
// the join saves) and at most apartMaxRows (the page is held in memory
// until its reports are read).
const (
	apartMinRows = 500
	apartMaxRows = 10000
)

// ReportsApart renders a page of events whose filter and order read no
// report without its join to reports, where the dialect can (IDArrays):
// the statement's last result column is then the event's report id, and
// Built.Apart reads the page's reports' columns, each report once.
//
// The join is a lookup of the report's primary key for every event, and
// the same report's columns sent again for each of its events: on the
// medium fleet, the newest 1,000 events of a title search (355 reports)
// took 7.0 ms with the join and 4.8 ms without it, plus 0.5 ms for the
// 355 reports by id.
func ReportsApart() Option { return func(b *builder) { b.apartOK = true } }

// Apart is how a statement rendered with ReportsApart reads its reports,
// or one rendered with EventsApart its reports' events.
type Apart struct {
	// SQL reads the reports' ids and their columns (those of Columns set
	// Apart, in order) for the ids bound as its first argument, bounded by
	// the second and third (the least and greatest id); with Events, the
	// events of those reports (EventsByIDs).
	SQL string
	// Events is set when SQL reads the events of a page of reports
	// (EventsApart): each row an event's report id, then schema.EventColumns.
	Events bool
}

// apartable reports whether plan p's rows may read their reports apart
// on dialect d: a page of whole events (every output field, no
// aggregate) in a given order, whose filter and order read only events,
// that outputs some report column.
func apartable(d dialect.Dialect, p *query.Plan) bool {
	if d.Capabilities().IDArrays == nil {
		return false
	}
	if p.Entity != query.Events || p.Columns != nil || p.Distinct != nil || len(p.GroupBy) > 0 ||
		len(p.OrderBy) == 0 || p.Limit < apartMinRows || p.Limit > apartMaxRows {
		return false
	}
	var u uses
	for _, o := range p.OrderBy {
		u.field(o.Field)
	}
	exprUses(&u, p.Filter)
	if u.subquery || u.tables&^(1<<query.EventsTable|1<<query.NoTable) != 0 {
		return false
	}
	reports := false
	for _, name := range p.Entity.Output {
		f := p.Entity.Field(name)
		if f.Type == query.Blob {
			return false
		}
		reports = reports || f.Table == query.ReportsTable
	}
	return reports
}

// apartSelect renders the select list of an apart statement (the events'
// columns, then their report id), what it reads (for its FROM) and the
// output columns, whose report columns are set Apart.
func (b *builder) apartSelect(p *query.Plan) (string, *uses, []OutCol, *Apart) {
	var parts, reports []string
	var cols []OutCol
	var u uses
	for _, name := range p.Entity.Output {
		fld := p.Entity.Field(name)
		if fld.Table == query.ReportsTable {
			cols = append(cols, OutCol{Name: fld.Name, Type: fld.Type, Width: 1, Apart: true})
			reports = append(reports, b.d.Column(query.ReportsTable, tableSQL[query.ReportsTable].alias, fld.Column))
			continue
		}
		u.field(fld)
		s, c := b.fieldColumn(fld)
		parts = append(parts, s)
		cols = append(cols, c)
	}
	e, r := tableSQL[query.EventsTable].alias, tableSQL[query.ReportsTable].alias
	u.field(&query.Field{Table: query.EventsTable, Column: "report_id"})
	parts = append(parts, e+".report_id")
	ph := b.d.Placeholder
	sql := "SELECT " + r + ".id, " + strings.Join(reports, ", ") + " FROM " + tableSQL[query.ReportsTable].from +
		" WHERE " + b.d.Capabilities().IDArrays.InIDs(r+".id", ph(1)) + " AND " + r + ".id >= " + ph(2) + " AND " + r + ".id <= " + ph(3)
	return strings.Join(parts, ", "), &u, cols, &Apart{SQL: sql}
}

// The pages of reports whose events are read apart: at least
// eventsApartMinRows (below, the second statement's round trip costs
// about what the subqueries save) and at most eventsApartMaxRows (the
// page is held in memory until its events are read).
const (
	eventsApartMinRows = 20
	eventsApartMaxRows = 1000
)

// EventsApart renders a page of whole reports without the subquery that
// reads each report's resource_events, where the dialect can
// (EventsByIDs): the resource_events column is then the report's hash
// alone (OutCol.Apart), the statement's last two result columns each
// row's report id and its number of events (ev_total), and Built.Apart
// reads the page's events, every report's in one statement.
//
// The subquery is an index lookup, with run-time partition pruning, for
// every report: on the medium fleet the first page of 100 reports (344
// events) spent 1.7-3.3 ms of its 3.4-6.0 ms statement in them, where the
// same events by report id took 0.9-1.6 ms.
func EventsApart() Option { return func(b *builder) { b.eventsApartOK = true } }

// eventsApartable reports whether plan p's rows may read their events
// apart on dialect d: a page of whole reports (every output field, no
// aggregate) that outputs resource_events.
func eventsApartable(d dialect.Dialect, p *query.Plan) bool {
	if d.Capabilities().IDArrays == nil {
		return false
	}
	if ed := d.Capabilities().EventsByIDs; ed == nil || ed.EventsByReportIDs() == "" {
		return false
	}
	if p.Entity.Base != query.ReportsTable || p.Columns != nil || p.Distinct != nil || len(p.GroupBy) > 0 ||
		p.Limit < eventsApartMinRows || p.Limit > eventsApartMaxRows {
		return false
	}
	for _, name := range p.Entity.Output {
		if f := p.Entity.Field(name); f.Type == query.Blob && f.Column == "resource_events" {
			return true
		}
	}
	return false
}

// eventsApartSelect renders the select list of a statement whose events
// are read apart (the report's columns, the resource_events blob as the
// hash of its href, then the report's id and ev_total), what it reads
// and the output columns, the resource_events one set Apart.
func (b *builder) eventsApartSelect(p *query.Plan) (string, *uses, []OutCol, *Apart) {
	var parts []string
	var cols []OutCol
	var u uses
	r := tableSQL[query.ReportsTable].alias
	for _, name := range p.Entity.Output {
		fld := p.Entity.Field(name)
		if fld.Type == query.Blob && fld.Column == "resource_events" {
			u.tables |= 1 << query.ReportsTable
			parts = append(parts, r+".hash")
			cols = append(cols, OutCol{Name: fld.Name, Type: fld.Type, Width: 1, BlobSuffix: fld.BlobSuffix, Apart: true})
			continue
		}
		u.field(fld)
		s, c := b.fieldColumn(fld)
		parts = append(parts, s)
		cols = append(cols, c)
	}
	parts = append(parts, r+".id", r+".ev_total")
	return strings.Join(parts, ", "), &u, cols, &Apart{SQL: b.d.Capabilities().EventsByIDs.EventsByReportIDs(), Events: true}
}
