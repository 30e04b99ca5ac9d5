package sqlgen

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
	// Rollups: the rollup tables are kept (see rollupDef).
	Rollups bool
	// LatestRollup: latest_rollup is kept with the latest reports.
	LatestRollup bool
	// Lateral: LATERAL joins, which keep the probe of each report's
	// events a nested loop whatever the planner estimates.
	Lateral bool
	// ReportDays: the spans of each day's reports' times (Narrowed).
	ReportDays ReportDays
	// EventDays: the spans of each day's event timestamps.
	EventDays EventDays
	// ReportKeys: the reports' lookup keys (Keyed).
	ReportKeys ReportKeys
	// IDArrays: a column compared with an array of bound ids
	// (ReportsApart).
	IDArrays IDArrays
	// EventsByIDs: the events of a page's reports read apart
	// (EventsApart).
	EventsByIDs EventsByIDs
	// BoundedColumns: report columns stored apart whose reads can be
	// bounded to a range of report ids.
	BoundedColumns BoundedColumns
}
