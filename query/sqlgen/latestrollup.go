package sqlgen

import (
	"strings"

	"reportdb/query"
	"reportdb/schema"
)

// The latest reports' counts kept at write time. Dashboards count the
// events of every node's latest report, by status
//
//	["extract", [["function","count"], "status"], ["=","latest_report?",true], ["group_by","status"]]
//
// and how many nodes have failures, successes, noops and skips in it
// (aggregate-event-counts summarised by certname). latest_rollup keeps
// their sums per report type, environment and status (package schema, its
// latest.go, says how the backends keep it), so that such a count, with a
// filter on those dimensions at most, reads the sums instead of a wide row
// per node.

// latestRollupFilter reports whether a filter of report-level terms (on
// column col of table base) selects the nodes' latest reports and
// otherwise tests only latest_rollup's dimensions, and returns the rest.
func (b *builder) latestRollupFilter(f query.Expr, base query.Table, col string) (query.Expr, bool) {
	if !b.d.Capabilities().LatestRollup {
		return nil, false
	}
	rest, ok := withoutLatest(f, base, col)
	if !ok {
		return nil, false
	}
	if rest != nil && !onlyFields(rest, latestDim) {
		return nil, false
	}
	return rest, true
}

// latestDim reports whether latest_rollup keeps f's value.
func latestDim(f *query.Field) bool {
	if f.Table == query.NoTable {
		return true
	}
	if f.Table != query.ReportsTable || f.Type == query.Path {
		return false
	}
	for _, d := range schema.LatestDims {
		if f.Column == d {
			return true
		}
	}
	return false
}

// latestSums renders the sums of measures over the latest_rollup rows rest
// selects, each AS its name (aliases override names when given).
func (b *builder) latestSums(rest query.Expr, measures []string, aliases ...string) (string, error) {
	where := ""
	if rest != nil {
		w, err := b.expr(rest) // the dimensions' columns have the reports' names
		if err != nil {
			return "", err
		}
		where = " WHERE " + w
	}
	sums := make([]string, len(measures))
	for i, m := range measures {
		as := m
		if i < len(aliases) {
			as = aliases[i]
		}
		sums[i] = "CAST(COALESCE(SUM(r." + m + "), 0) AS BIGINT) AS " + as
	}
	return "SELECT " + strings.Join(sums, ", ") + " FROM " + schema.LatestRollupTable + " " +
		tableSQL[query.ReportsTable].alias + where, nil
}
