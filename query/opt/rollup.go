package opt

import (
	"reportdb/query"
	"reportdb/query/sqlgen"
	"reportdb/schema/dialect"
)

// summaries: a statement over summaries rather than rows answers the
// plan when one can, in this order: a rollup's buckets (filter and
// grouping on its dimensions and a time range), the counts stored with
// each report (events counted by status, filtered on their reports), or
// a grouping by a day-formatted timestamp grouped by day first.
func summaries(a *Access, d dialect.Dialect, p *query.Plan) (sqlgen.Via, error) {
	if sqlgen.RollupAnswers(d, p, false) {
		a.reason("rollup: a rollup's dimensions cover the filter and grouping")
		return sqlgen.ViaRollup, nil
	}
	if ok, err := sqlgen.StatusCountsAnswer(d, p, a.opts...); err != nil {
		return 0, err
	} else if ok {
		a.reason("status-counts: events counted by status, filtered on their reports")
		return sqlgen.ViaStatusCounts, nil
	}
	if ok, err := sqlgen.DayRollupAnswers(d, p, a.opts...); err != nil {
		return 0, err
	} else if ok {
		a.reason("day-rollup: grouped by a day-formatted timestamp")
		return sqlgen.ViaDayRollup, nil
	}
	return sqlgen.ViaRows, nil
}

// count: the count of a plan (include_total) is read from a rollup when
// one covers its filter and grouping (its projection does not matter),
// else from the rows statement's own (keyed when the rows are).
func count(a *Access, d dialect.Dialect, p *query.Plan) error {
	opts := a.opts[:len(a.opts):len(a.opts)]
	if sqlgen.RollupAnswers(d, p, true) {
		opts = append(opts, sqlgen.Using(sqlgen.ViaRollup))
	}
	b, err := sqlgen.Count(d, p, opts...)
	if err != nil {
		return err
	}
	a.Total = b
	switch {
	case len(opts) > len(a.opts):
		a.Count = Rollup
	case b.Keyed:
		a.Count = Keyed
	default:
		a.Count = Scan
	}
	return nil
}
