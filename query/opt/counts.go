package opt

import (
	"reportdb/query"
	"reportdb/query/sqlgen"
	"reportdb/schema/dialect"
)

// ChooseCounts chooses how an event-counts plan (aggregate: an element
// of aggregate-event-counts) is read on dialect d, and renders its
// statements (Total: its count, for include_total). The compiler has
// already chosen whether the counts stored with each report answer it
// (query.CountsPlan.FromReports); here:
//
//   - an aggregate over every node's latest report reads latest_rollup's
//     sums (latest-rollup);
//   - a distinct_resources window counted by resource reads the distinct
//     tables (distinct);
//   - counts from the reports read the copies of the latest reports when
//     the filter selects those (latest-copies), else the reports
//     (stored-counts);
//   - else the events are scanned (scan).
func ChooseCounts(d dialect.Dialect, p *query.CountsPlan, aggregate, total bool) (*Access, error) {
	a := &Access{d: d}
	via := sqlgen.ViaRows
	switch {
	case aggregate && sqlgen.LatestRollupAnswers(d, p):
		via, a.Path = sqlgen.ViaLatestRollup, LatestRollup
		a.reason("latest-rollup: every node's latest report, filtered on latest_rollup's dimensions")
	case sqlgen.DistinctAnswers(d, p):
		via, a.Path = sqlgen.ViaDistinct, Distinct
		a.reason("distinct: a distinct_resources window counted by resource")
	case p.FromReports && sqlgen.LatestReportsFilter(d, p):
		a.Path = LatestCopies
		a.reason("latest-copies: the counts stored with the nodes' latest reports, one row per node")
	case p.FromReports:
		a.Path = StoredCounts
		a.reason("stored-counts: the counts stored with each report, summed by node")
	default:
		a.Path = Scan
		a.reason("scan: the events are counted")
	}
	opts := []sqlgen.Option{sqlgen.Using(via)}
	var err error
	if aggregate {
		a.Rows, err = sqlgen.Aggregate(d, p, opts...)
	} else {
		a.Rows, err = sqlgen.EventCounts(d, p, opts...)
	}
	if err != nil {
		return nil, err
	}
	if total {
		if a.Total, err = sqlgen.EventCountsTotal(d, p, opts...); err != nil {
			return nil, err
		}
		a.Count = a.Path
	}
	return a, nil
}
