// Package opt is reportdb's access-path optimiser: for a plan and what the
// backend can do (dialect.Capabilities), it chooses how the plan's
// statements read their rows, and says why. Package sqlgen renders what
// it chooses and package engine runs it; neither chooses.
//
// The rules are tried in one order, each in a file of its own:
//
//   - rollup.go: a rollup's buckets, the counts stored with each report,
//     or the days of a day-formatted grouping, when one answers the plan;
//   - latest.go: the copies of the nodes' latest reports;
//   - narrow.go: the newest (or oldest) day of reports first;
//   - keyed.go: the reports stored under a hash or configuration version;
//   - apart.go: a page's reports, or its events, read apart;
//   - window.go: a window of event timestamps bound to its days' ids;
//   - counts.go: the event-counts and aggregate-event-counts plans.
//
// Access.String names the choice (the explain output and the access
// testdata print it), Access.Reasons gives each rule's verdict.
package opt

import (
	"fmt"
	"strings"

	"reportdb/query"
	"reportdb/query/sqlgen"
	"reportdb/schema/dialect"
)

// Path is how a statement reads its rows.
type Path string

const (
	// Rollup reads a rollup's buckets, and the raw rows at the edges of
	// its window.
	Rollup Path = "rollup"
	// StatusCounts counts events by status from the counts stored with
	// each report.
	StatusCounts Path = "status-counts"
	// DayRollup groups by day before formatting the day.
	DayRollup Path = "day-rollup"
	// LatestCopies reads the copies of the nodes' latest reports.
	LatestCopies Path = "latest-copies"
	// Narrowed reads the day of the newest (oldest) reports first, then
	// the rest only when the page is not full.
	Narrowed Path = "narrowed"
	// Keyed reads the ids stored under the plan's keys first, then only
	// those reports' days.
	Keyed Path = "keyed"
	// Scan is the plain statement over reports and events.
	Scan Path = "scan"

	// LatestRollup reads latest_rollup's sums (aggregate-event-counts).
	LatestRollup Path = "latest-rollup"
	// Distinct reads a distinct_resources window's counts from the
	// distinct tables (event-counts).
	Distinct Path = "distinct"
	// StoredCounts sums the event counts stored with each report
	// (event-counts summarised by certname).
	StoredCounts Path = "stored-counts"
)

// Options are what the request allows besides the plan.
type Options struct {
	// Total: the count without limit or offset is read too
	// (include_total), in the same snapshot.
	Total bool
	// NoApart: a page reads its reports and events with its rows (a
	// retry after a page read apart found its report gone).
	NoApart bool
}

// Access is the optimiser's choice for a plan, and its statements.
type Access struct {
	// Path is how the rows statement reads; Count how the count
	// statement does ("" without Options.Total).
	Path, Count Path
	// ReportsApart: a page of events reads its reports apart;
	// EventsApart: a page of reports reads its events apart.
	ReportsApart, EventsApart bool
	// BoundIDs: the plan's window of event timestamps is bound to the
	// range of its days' report ids, read first.
	BoundIDs bool
	// Narrow is the narrowing when Path is Narrowed.
	Narrow *Narrowing
	// Keys are the keys of a keyed statement: the rows' or the count's
	// (Path or Count Keyed), or the fallback's (Fallback).
	Keys []string
	// Reasons are the rules' verdicts, in the order they were tried.
	Reasons []string

	// Rows and Total are the rendered rows and count statements (Total
	// nil without Options.Total); Fallback, when set, is the keyed
	// statement that answers a narrowed lookup by hash whose head has no
	// row. Their arguments bound later (report ids, keys, a narrowed
	// head's bound) are bound by the engine.
	Rows, Total, Fallback *sqlgen.Built

	d    dialect.Dialect
	p    *query.Plan
	opts []sqlgen.Option // the rows statement's, but Using and Narrowed
}

// Narrowing is how a narrowed plan's head is bounded: by the column's
// time (descending from the newest, or ascending from the oldest), or by
// the day of one report (Unique), whose days' spans SpansSQL reads.
type Narrowing struct {
	Column   string
	Desc     bool
	Unique   bool
	SpansSQL string
}

// Head renders the statement of a narrowed plan's head (or, with
// w.Rest, of the rest) bounded by w: of the plan chosen for, or of p
// when it is not nil (the rest of a page, with the limit left).
func (a *Access) Head(p *query.Plan, w sqlgen.Narrow) (*sqlgen.Built, error) {
	if p == nil {
		p = a.p
	}
	w.Column, w.Desc, w.Unique = a.Narrow.Column, a.Narrow.Desc, a.Narrow.Unique
	return sqlgen.Select(a.d, p, append(a.opts[:len(a.opts):len(a.opts)], sqlgen.Narrowed(w))...)
}

// String names the choice, e.g. "narrowed(end_time desc) +events-apart".
func (a *Access) String() string {
	s := string(a.Path)
	switch {
	case a.Path == Narrowed && a.Narrow.Unique:
		s += "(one report's day"
		if a.Fallback != nil {
			s += ", else keyed"
		}
		s += ")"
	case a.Path == Narrowed:
		dir := "asc"
		if a.Narrow.Desc {
			dir = "desc"
		}
		s += "(" + a.Narrow.Column + " " + dir + ")"
	}
	if a.BoundIDs {
		s += " +window-ids"
	}
	if len(a.Rows.EventWindows) > 0 {
		s += " +event-windows"
	}
	if a.ReportsApart {
		s += " +reports-apart"
	}
	if a.EventsApart {
		s += " +events-apart"
	}
	if a.Count != "" {
		s += "; count: " + string(a.Count)
	}
	return s
}

// Explain is String followed by the reasons, one per line.
func (a *Access) Explain() string {
	return a.String() + "\n" + strings.Join(a.Reasons, "\n")
}

func (a *Access) reason(format string, args ...any) {
	a.Reasons = append(a.Reasons, fmt.Sprintf(format, args...))
}

// Choose chooses how plan p is read on dialect d, and renders its
// statements.
func Choose(d dialect.Dialect, p *query.Plan, o Options) (*Access, error) {
	a := &Access{d: d, p: p}
	caps := d.Capabilities()
	window(a, caps, p)
	via, err := summaries(a, d, p)
	if err != nil {
		return nil, err
	}
	keyedRows := false
	if via == sqlgen.ViaRows {
		allowApart(a, o)
		switch {
		case narrowable(a, caps, p):
		case keyable(a, caps, p):
			keyedRows = true
		}
	}
	rows, err := sqlgen.Select(d, p, append(a.opts[:len(a.opts):len(a.opts)], sqlgen.Using(via))...)
	if err != nil {
		return nil, err
	}
	a.Rows = rows
	switch {
	case via == sqlgen.ViaRollup:
		a.Path = Rollup
	case via == sqlgen.ViaStatusCounts:
		a.Path = StatusCounts
	case via == sqlgen.ViaDayRollup:
		a.Path = DayRollup
	case a.Narrow != nil:
		a.Path = Narrowed
	case rows.LatestCopies:
		a.Path = LatestCopies
		a.reason("latest-copies: the filter selects the nodes' latest reports")
	case keyedRows && rows.Keyed:
		a.Path = Keyed
	default:
		a.Path = Scan
		a.reason("scan: no fast path applies")
	}
	apartChosen(a, rows)
	if o.Total {
		if err := count(a, d, p); err != nil {
			return nil, err
		}
	}
	windowChosen(a, p)
	if err := fallback(a, d, p); err != nil {
		return nil, err
	}
	return a, nil
}
