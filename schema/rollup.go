package schema

import (
	"slices"
	"strconv"
	"strings"
)

// Rollups: counts of reports and of events kept at write time, per time
// bucket and per the dimensions dashboards group and filter by, in the
// same transaction as the rows they count (see the backends' migrations:
// report_rollup, event_rollup). A rollup row is a delta: ingest appends
// one row per (width, bucket, dimensions) and batch, deletion appends
// negative ones, and compaction merges them; a count is the SUM of n over
// the rows, whatever has been merged yet. query/sqlgen answers covered
// aggregates from them (its rollup.go).

// RollupWidths are the bucket widths (ms) rollups are kept at, coarsest
// first: a day, an hour, five minutes. Each divides the one before it, and
// UTC days are bucket boundaries of every width.
var RollupWidths = []int64{86400000, 3600000, 300000}

// Rollup describes the rollup of one entity: the one definition the
// planner, the write-time deltas and compaction all read.
type Rollup struct {
	Table string // SQL table
	// Time is the bucketed timestamp field, also the column of the
	// counted rows a delta reads
	Time string
	// Dims are the dimension fields, in the table's column order; each is
	// also the column's name in the rollup and in the counted rows
	Dims []string
	// Only, when set, is the one value of a field the rollup counts rows
	// of (the rows with other values are not in it): a plan is covered
	// only with the conjunct field = value, which the rollup's rows then
	// satisfy by construction
	Only *Only
}

// Only is a field's value a rollup is restricted to.
type Only struct{ Field, Value string }

var (
	// ReportRollup counts reports per bucket and combination of the
	// dimensions dashboards group and filter reports by.
	ReportRollup = Rollup{Table: "report_rollup", Time: "producer_timestamp",
		Dims: []string{"type", "environment", "status", "noop", "noop_pending", "cached_catalog_status"}}
	// EventRollup counts events per bucket, status, resource type and
	// their report's environment.
	EventRollup = Rollup{Table: "event_rollup", Time: "timestamp",
		Dims: []string{"status", "resource_type", "environment"}}
	// FailureRollup counts failure events per resource: the dashboard's
	// failing resources over the days kept (and the fleet state's hourly
	// reload) are a read of it, not of every failure event stored.
	// Failures are few, so it is small beside event_rollup, which cannot
	// keep resource_title for every status.
	FailureRollup = Rollup{Table: "failure_rollup", Time: "timestamp",
		Dims: []string{"resource_type", "resource_title"}, Only: &Only{"status", "failure"}}
	// ReportTypeRollup counts reports per bucket and report type only: a
	// count that filters and groups by nothing else (reports per day,
	// include_total of an unfiltered reports page) reads a row per
	// bucket and type, where report_rollup has one per combination of
	// its six dimensions (16 a day on the bench fleets, so that reports
	// per day over 14 days read 226 rows instead of 14).
	ReportTypeRollup = Rollup{Table: "report_type_rollup", Time: "producer_timestamp", Dims: []string{"type"}}

	// ReportRollups and EventRollups are the rollups of reports and of
	// events, in the order the planner tries them: the smallest that
	// covers a plan answers it. Every writer of reports runs the deltas
	// of all of ReportRollups (ReportRollupDeltas).
	ReportRollups = []Rollup{ReportTypeRollup, ReportRollup}
	EventRollups  = []Rollup{EventRollup, FailureRollup}
)

// FloorSQL renders expr floored to a multiple of w, an SQL integer
// expression (exact for negative values too).
func FloorSQL(expr, w string) string {
	return "(" + expr + " - ((" + expr + " % " + w + ") + " + w + ") % " + w + ")"
}

// floorTime renders expr floored to a multiple of the width w.
func floorTime(expr string, w int64) string { return FloorSQL(expr, strconv.FormatInt(w, 10)) }

// rollupWidthsSQL renders RollupWidths as a derived table w(width), in
// SQL both databases read.
func rollupWidthsSQL() string {
	parts := make([]string, len(RollupWidths))
	for i, w := range RollupWidths {
		parts[i] = "SELECT " + strconv.FormatInt(w, 10)
		if i == 0 {
			parts[i] += " AS width"
		}
	}
	return "(" + strings.Join(parts, " UNION ALL ") + ") w"
}

// Delta renders the INSERT of rollup deltas that count the rows of from
// (a table expression with the time and dimension columns) sign times: 1
// for stored rows, -1 for deleted ones.
func (d Rollup) Delta(from string, sign int) string {
	groups := make([]string, len(d.Dims)+2)
	for i := range groups {
		groups[i] = strconv.Itoa(i + 1)
	}
	where := ""
	if d.Only != nil {
		where = " WHERE x." + d.Only.Field + " = '" + d.Only.Value + "'"
	}
	return "INSERT INTO " + d.Table + " (width, bucket, " + strings.Join(d.Dims, ", ") + ", n)" +
		" SELECT w.width, " + FloorSQL("x."+d.Time, "w.width") + ", x." + strings.Join(d.Dims, ", x.") +
		", " + strconv.Itoa(sign) + " * COUNT(*) FROM " + from + " x CROSS JOIN " + rollupWidthsSQL() +
		where + " GROUP BY " + strings.Join(groups, ", ")
}

// ReportRollupDeltas renders the INSERTs of the deltas of every report
// rollup (ReportRollups) that count the reports of from (a table
// expression with the reports' columns) sign times: 1 for stored reports,
// -1 for deleted ones. Whatever stores or deletes reports runs all of
// them, so that a report rollup added to ReportRollups is kept by every
// writer.
func ReportRollupDeltas(from string, sign int) []string {
	out := make([]string, len(ReportRollups))
	for i, def := range ReportRollups {
		out[i] = def.Delta(from, sign)
	}
	return out
}

// StoredEnvironments renders a query of the environments of the stored
// reports, read from report_rollup at its coarsest buckets (a row per day
// and combination of its dimensions, and the deltas not yet merged), not
// from the reports: retention deletes the environments that are not
// among them, and a scan of every stored report would grow with the days
// kept. Exact because every writer counts the reports it stores and
// deletes in the same transaction (ReportRollupDeltas).
func StoredEnvironments() string {
	return "SELECT environment FROM " + ReportRollup.Table + " WHERE width = " +
		strconv.FormatInt(RollupWidths[0], 10) + " GROUP BY environment HAVING SUM(n) > 0"
}

// CTEs renders statements as the data-modifying CTEs name0 AS (...),
// name1 AS (...), ... of one statement.
func CTEs(name string, stmts []string) string {
	parts := make([]string, len(stmts))
	for i, s := range stmts {
		parts[i] = name + strconv.Itoa(i) + " AS (\n  " + s + "\n)"
	}
	return strings.Join(parts, ", ")
}

// EventRollupDelta renders the INSERT of event_rollup deltas for the
// events of from (timestamp, status, resource_type, and their report's
// environment as environment), each counted sign times.
func EventRollupDelta(from string, sign int) string { return EventRollup.Delta(from, sign) }

// FailureRollupDelta renders the INSERT of failure_rollup deltas for the
// failure events of from (timestamp, status, resource_type,
// resource_title; events of other statuses are not counted), each counted
// sign times.
func FailureRollupDelta(from string, sign int) string { return FailureRollup.Delta(from, sign) }

// RollupTable is a rollup table and its dimension columns (for
// compaction).
type RollupTable struct {
	Table string
	Cols  []string // the dimension columns
	// Nullable are the dimension columns that may hold NULL (matched with
	// IS NOT DISTINCT FROM, the others with =, which a hash join can use)
	Nullable []string
	// Values are the summed columns (n when nil)
	Values []string
}

// Sums returns the summed columns.
func (t RollupTable) Sums() []string {
	if len(t.Values) == 0 {
		return []string{"n"}
	}
	return t.Values
}

// List renders the summed columns as a list, each column c as
// fmt(c) (c itself when fmt is nil), separated by sep.
func (t RollupTable) List(sep string, fmt func(c string) string) string {
	parts := make([]string, len(t.Sums()))
	for i, c := range t.Sums() {
		if fmt != nil {
			c = fmt(c)
		}
		parts[i] = c
	}
	return strings.Join(parts, sep)
}

// SameDims renders the condition that rows a and b (aliases) have the same
// dimension values, NULLs equal.
func (t RollupTable) SameDims(a, b string) string {
	conds := make([]string, len(t.Cols))
	for i, c := range t.Cols {
		op := " = "
		if slices.Contains(t.Nullable, c) {
			op = " IS NOT DISTINCT FROM "
		}
		conds[i] = a + "." + c + op + b + "." + c
	}
	return strings.Join(conds, " AND ")
}

// Dims renders the dimension columns as a list.
func (t RollupTable) Dims() string { return strings.Join(t.Cols, ", ") }

func rollupTable(table string, cols []string, nullable ...string) RollupTable {
	return RollupTable{Table: table, Cols: cols, Nullable: nullable}
}

// RollupTables are the rollup tables: every table of delta rows that
// compaction merges.
var RollupTables = []RollupTable{
	rollupTable(ReportRollup.Table, ReportRollup.Dims, "status", "noop", "noop_pending", "cached_catalog_status"),
	rollupTable(ReportTypeRollup.Table, ReportTypeRollup.Dims),
	rollupTable(EventRollup.Table, EventRollup.Dims),
	rollupTable(FailureRollup.Table, FailureRollup.Dims),
	rollupTable(DistinctRollup, distinctDims),
	{Table: LatestRollupTable, Cols: LatestDims, Nullable: []string{"status"}, Values: LatestSums},
}
