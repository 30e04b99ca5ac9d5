// Package dialect is what differs between the SQL databases reportdb runs
// on: the Dialect each storage backend implements and the Capabilities of
// its schema, which query/sqlgen renders statements for. It is apart from
// sqlgen so that the backends implement it without importing the SQL
// renderer.
package dialect

import "reportdb/query"

// Dialect is what differs between the SQL databases reportdb runs on.
type Dialect interface {
	// Placeholder returns the n-th (1-based) bind parameter marker.
	Placeholder(n int) string
	// Regex returns a condition true when text expression col matches the
	// regular expression bound at param (PostgreSQL ARE semantics).
	Regex(col, param string) string
	// PathContains is true when the string-array column col contains the
	// element bound at param.
	PathContains(col, param string) string
	// PathRegex is true when any element of the string-array column col
	// matches the regular expression bound at param.
	PathRegex(col, param string) string
	// NotDistinct compares two expressions treating NULL as equal.
	NotDistinct(a, b string) string
	// ToChar renders to_char(expr, format) for a timestamp (Unix ms) or
	// numeric expression.
	ToChar(expr string, t query.Type, format string) string
	// OrderKey returns the expression to sort a value expression of type
	// t by.
	OrderKey(expr string, t query.Type) string
	// Bool converts a boolean argument for binding.
	Bool(b bool) any
	// LimitOffset renders the LIMIT/OFFSET clause (limit 0 = none).
	LimitOffset(limit, offset string) string
	// Column renders column col of table t, whose alias is alias:
	// usually alias.col, but a database may store a column elsewhere (e.g.
	// PostgreSQL reads reports' resource_events from the events at query
	// time, as PuppetDB does, and keeps metrics and logs apart).
	Column(t query.Table, alias, col string) string
	// SortHash returns an integer hash of a text expression to lead a
	// sort or partition key (comparisons are then decided by the integer
	// almost always; the full key still follows, so results are exact),
	// or "" when the database has no cheap hash.
	SortHash(text string) string
	// LatestReports names the table holding a copy of each node's latest
	// report row (the one certnames.latest_report_id points at, with
	// reports' columns), or "" when the database keeps none: queries of
	// the latest reports then read it instead of reports.
	LatestReports() string
	// TitleKey names the SQL function whose value of a resource title the
	// database indexes instead of the title, or "" when it indexes titles
	// as they are. PostgreSQL refuses a btree entry over about 2.7 kB, and
	// titles are free text (an Exec's command, a Notify's message): there
	// a long title is indexed by a bounded key. Every equality or prefix
	// range on a title then also compares keys, so that the index serves
	// it; the title comparison stays, so answers are exact.
	TitleKey() string
	// Explain turns a statement into one that describes its execution
	// (explain=analyze); each result row's columns are joined as text.
	Explain(sql string) string
	// Capabilities is what else the database can do (see Capabilities).
	Capabilities() Capabilities
}

// Capabilities is what a backend's schema and SQL can do beyond the
// Dialect's common methods, probed once by Dialect.Capabilities: a false
// or nil field is a fast path the database lacks, and the statements it
// would render are rendered the plain way. One value, rather than an
// optional interface per capability, so that what a backend offers is
// read in one place and a test can turn any capability off by changing a
// field.
type Capabilities struct {
	// Rollups: the rollup tables are kept (package schema: Rollup).
	Rollups bool
	// LatestRollup: latest_rollup is kept with the latest reports.
	LatestRollup bool
	// Lateral: LATERAL joins, which keep the probe of each report's
	// events a nested loop whatever the planner estimates.
	Lateral bool
	// ReportDays: the spans of each day's reports' times (sqlgen.Narrowed).
	ReportDays ReportDays
	// EventDays: the spans of each day's event timestamps.
	EventDays EventDays
	// ReportKeys: the reports' lookup keys (sqlgen.Keyed).
	ReportKeys ReportKeys
	// IDArrays: a column compared with an array of bound ids
	// (sqlgen.ReportsApart).
	IDArrays IDArrays
	// EventsByIDs: the events of a page's reports read apart
	// (sqlgen.EventsApart).
	EventsByIDs EventsByIDs
	// BoundedColumns: report columns stored apart whose reads can be
	// bounded to a range of report ids.
	BoundedColumns BoundedColumns
}

// ReportDays is implemented by dialects that keep, for each day of
// reports, the span of their start and end times (PostgreSQL, migration
// 0015), and partition reports by ranges of their ids, one per day.
type ReportDays interface {
	// ReportDaysSQL is a statement whose rows are, for each day of
	// reports, the range [lo, hi) of its report ids and a span [min, max]
	// (Unix ms) that holds the value of column (a reports column) of
	// every report stored in it; ok is false for a column without spans.
	ReportDaysSQL(column string) (sql string, ok bool)
}

// EventDays is implemented by dialects that keep, for each day of
// reports, the span of their events' timestamps (PostgreSQL, migration
// 0012).
type EventDays interface {
	// EventDaysSQL is a statement of one row: the range [lo, hi) of the
	// report ids of the days whose events' span meets [$1, $2] (Unix ms),
	// both NULL when none does.
	EventDaysSQL() string
	// EventSpansSQL is a statement whose rows are, for each day, the
	// range [lo, hi) of its report ids and the span [min, max] (Unix ms)
	// of its events' timestamps.
	EventSpansSQL() string
}

// ReportKeys is implemented by dialects that keep the ids of the reports
// under keys of their hash and of their node's configuration version in
// one table across the days (PostgreSQL, migration 0016), and partition
// reports by ranges of their ids, one per day.
type ReportKeys interface {
	// ReportKeysSQL is a statement whose rows are the ids (one column)
	// of the reports stored under any of the keys in its one argument,
	// an array of text (sqlgen.HashKey, sqlgen.VersionKey); it may return
	// ids of reports that are not stored, or that have other keys, never
	// fewer.
	ReportKeysSQL() string
	// AnyID renders the condition that the id expression id is an
	// element of the array bound to placeholder arg.
	AnyID(id, arg string) string
	// IDDays is the range [lo, hi) of the ids of the days of ids (0 and 0
	// for none).
	IDDays(ids []int64) (lo, hi int64)
}

// IDArrays is a dialect that binds an array of report ids as one value
// (PostgreSQL's = ANY($1)): the dialects that read a page's reports apart
// (sqlgen.ReportsApart).
type IDArrays interface {
	// InIDs renders col = any of the ids bound to placeholder ph.
	InIDs(col, ph string) string
}

// EventsByIDs is a dialect that reads the events of a page's reports in
// one statement (sqlgen.EventsApart).
type EventsByIDs interface {
	// EventsByReportIDs renders the statement reading, for the report
	// ids bound as its first argument and within the least and greatest
	// of them (the second and third), each event's report id and then the
	// columns of schema.EventColumns, ordered by report id and, within a
	// report, as the report's resource_events would list them; "" when the
	// dialect cannot (then pages read their events with their reports).
	EventsByReportIDs() string
}

// BoundedColumns is implemented by dialects whose report columns may be
// read from other tables by report id (PostgreSQL: metrics, logs and
// resource_events, from report_data and resource_events): BoundedColumn
// renders column col of table t (under alias) reading only the rows of
// the report ids for which bound holds (bound(id) is that condition on
// the id expression id, "" for none), and reports whether it is such a
// column. A narrowed (or keyed: sqlgen.KeyLookup) statement's reports all
// have such ids, so the answer is the same, and a database that
// partitions those tables by report id plans and opens only the
// partitions of the statement's days.
type BoundedColumns interface {
	BoundedColumn(t query.Table, alias, col string, bound func(id string) string) (string, bool)
}
