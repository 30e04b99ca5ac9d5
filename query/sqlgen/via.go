package sqlgen

import (
	"reportdb/query"
	"reportdb/schema/dialect"
)

// Via is which statement Select (and Count) renders for a plan. The
// choice is made by the access-path optimiser (package opt), which asks
// the predicates below whether each statement can answer the plan;
// sqlgen renders what it is told.
type Via int

const (
	// ViaRows reads the plan's rows from reports and events: the plain
	// statement, or the copies of the latest reports, narrowed, keyed or
	// apart as the other options and the plan say.
	ViaRows Via = iota
	// ViaRollup reads a rollup's buckets (see schema.Rollup).
	ViaRollup
	// ViaStatusCounts counts events by status from the counts stored
	// with each report.
	ViaStatusCounts
	// ViaDayRollup groups a day-formatted timestamp by day first.
	ViaDayRollup
	// ViaDistinct reads a distinct_resources window's counts from the
	// distinct tables (event-counts).
	ViaDistinct
	// ViaLatestRollup reads an aggregate-event-counts element from
	// latest_rollup's sums.
	ViaLatestRollup
)

func (v Via) String() string {
	switch v {
	case ViaRollup:
		return "rollup"
	case ViaStatusCounts:
		return "status-counts"
	case ViaDayRollup:
		return "day-rollup"
	case ViaDistinct:
		return "distinct"
	case ViaLatestRollup:
		return "latest-rollup"
	}
	return "rows"
}

// Using renders the statement v (ViaRows when not given).
func Using(v Via) Option { return func(b *builder) { b.via = v } }

// RollupAnswers reports whether a rollup answers plan p on dialect d:
// its rows, or, when counting, its count (include_total, where the
// projection does not matter).
func RollupAnswers(d dialect.Dialect, p *query.Plan, counting bool) bool {
	_, ok := coveredRollup(d, p, counting)
	return ok
}

// StatusCountsAnswer reports whether the counts stored with the reports
// answer p (statusCountsFromReports), rendered with opts; an error is
// the one rendering it would return.
func StatusCountsAnswer(d dialect.Dialect, p *query.Plan, opts ...Option) (bool, error) {
	_, _, ok, err := newBuilder(d, opts).statusCountsFromReports(p)
	return ok, err
}

// DayRollupAnswers reports whether p, grouped by a day-formatted
// timestamp with no order or page, is grouped by day first (dayRollup);
// an error is the one rendering its filter would return.
func DayRollupAnswers(d dialect.Dialect, p *query.Plan, opts ...Option) (bool, error) {
	if len(p.OrderBy) != 0 || p.Limit != 0 || p.Offset != 0 {
		return false, nil
	}
	b := newBuilder(d, opts)
	where, err := b.where(p)
	if err != nil {
		return false, err
	}
	_, _, ok := b.dayRollup(p, where)
	return ok, nil
}

// DistinctAnswers reports whether the distinct tables answer an
// event-counts plan (a distinct_resources window counted by resource).
func DistinctAnswers(d dialect.Dialect, p *query.CountsPlan) bool {
	_, ok := coveredDistinct(d, p)
	return ok
}

// LatestRollupAnswers reports whether latest_rollup's sums answer an
// aggregate-event-counts element.
func LatestRollupAnswers(d dialect.Dialect, p *query.CountsPlan) bool {
	_, ok := newBuilder(d, nil).latestRollupSums(p)
	return ok
}

// LatestReportsFilter reports whether an event-counts plan over the
// reports' stored counts reads the copies of the nodes' latest reports.
func LatestReportsFilter(d dialect.Dialect, p *query.CountsPlan) bool {
	_, _, ok := newBuilder(d, nil).latestReportsFilter(p.ReportFilter, query.ReportsTable, "id")
	return ok
}
