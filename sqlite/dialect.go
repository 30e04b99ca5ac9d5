package sqlite

import (
	"strconv"

	"reportdb/query"
	"reportdb/schema/dialect"
)

// Dialect renders SQL for SQLite. Regular expressions, containment-path
// ordering and to_char are Go functions registered on every connection
// (functions.go).
type Dialect struct{}

// Placeholder implements dialect.Dialect (numbered, so that a placeholder
// can appear twice).
func (Dialect) Placeholder(n int) string { return "?" + strconv.Itoa(n) }

// Regex implements dialect.Dialect.
func (Dialect) Regex(col, param string) string { return "regexp(" + param + ", " + col + ")" }

// PathContains implements dialect.Dialect (paths are stored as JSON arrays).
func (Dialect) PathContains(col, param string) string {
	return "EXISTS (SELECT 1 FROM json_each(" + col + ") WHERE value = " + param + ")"
}

// PathRegex implements dialect.Dialect.
func (Dialect) PathRegex(col, param string) string {
	return "EXISTS (SELECT 1 FROM json_each(" + col + ") WHERE regexp(" + param + ", value))"
}

// NotDistinct implements dialect.Dialect.
func (Dialect) NotDistinct(a, b string) string { return a + " IS " + b }

// ToChar implements dialect.Dialect.
func (Dialect) ToChar(expr string, t query.Type, format string) string {
	if t == query.Timestamp {
		return "to_char_ts(" + expr + ", " + format + ")"
	}
	return "to_char_num(" + expr + ", " + format + ")"
}

// OrderKey implements dialect.Dialect: containment paths sort element-wise
// like PostgreSQL arrays.
func (Dialect) OrderKey(expr string, t query.Type) string {
	if t == query.Path {
		return "pathkey(" + expr + ")"
	}
	return expr
}

// Bool implements dialect.Dialect.
func (Dialect) Bool(b bool) any {
	if b {
		return int64(1)
	}
	return int64(0)
}

// LimitOffset implements dialect.Dialect.
func (Dialect) LimitOffset(limit, offset string) string {
	if limit == "" {
		limit = "-1"
	}
	s := " LIMIT " + limit
	if offset != "" {
		s += " OFFSET " + offset
	}
	return s
}

// Explain implements dialect.Dialect.
func (Dialect) Explain(sql string) string { return "EXPLAIN QUERY PLAN " + sql }

// Column implements dialect.Dialect: SQLite stores every column where the
// schema says.
func (Dialect) Column(_ query.Table, alias, col string) string { return alias + "." + col }

// SortHash implements dialect.Dialect: none.
func (Dialect) SortHash(string) string { return "" }

// LatestReports: none; reports is one table, and a node's latest report
// is a rowid lookup.
func (Dialect) LatestReports() string { return "" }

// TitleKey: none; SQLite indexes values of any length.
func (Dialect) TitleKey() string { return "" }

// Capabilities implements dialect.Dialect: migration 0003 keeps the
// rollups and 0008's triggers latest_rollup with certnames'
// latest_report_id. reports is one table, so the fast paths that find a
// statement's day partitions have nothing to find.
func (Dialect) Capabilities() dialect.Capabilities {
	return dialect.Capabilities{Rollups: true, LatestRollup: true}
}
