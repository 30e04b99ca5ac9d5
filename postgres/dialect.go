package postgres

import (
	"strconv"

	"reportdb/query"
)

// Dialect renders SQL for PostgreSQL.
type Dialect struct {
	// RegexCollation, when set, is the collation regular expressions are
	// matched under ("C.utf8": Unicode character classes, as on PuppetDB's
	// C.UTF-8 database, while columns keep the bytewise "C" ordering).
	RegexCollation string
}

// Placeholder implements sqlgen.Dialect.
func (Dialect) Placeholder(n int) string { return "$" + strconv.Itoa(n) }

func (d Dialect) collate(col string) string {
	if d.RegexCollation == "" {
		return col
	}
	return col + ` COLLATE "` + d.RegexCollation + `"`
}

// Regex implements sqlgen.Dialect.
func (d Dialect) Regex(col, param string) string { return d.collate(col) + " ~ " + param }

// PathContains implements sqlgen.Dialect.
func (Dialect) PathContains(col, param string) string { return param + "::text = ANY(" + col + ")" }

// PathRegex implements sqlgen.Dialect.
func (d Dialect) PathRegex(col, param string) string {
	return "EXISTS (SELECT 1 FROM unnest(" + col + ") AS p(el) WHERE " + d.collate("p.el") + " ~ " + param + ")"
}

// NotDistinct implements sqlgen.Dialect.
func (Dialect) NotDistinct(a, b string) string { return a + " IS NOT DISTINCT FROM " + b }

// ToChar implements sqlgen.Dialect (sessions run in UTC).
func (Dialect) ToChar(expr string, t query.Type, format string) string {
	if t == query.Timestamp {
		return "to_char(to_timestamp(" + expr + " / 1000.0), " + format + "::text)"
	}
	return "to_char(" + expr + ", " + format + "::text)"
}

// OrderKey implements sqlgen.Dialect.
func (Dialect) OrderKey(f *query.Field) string { return f.SQL }

// Bool implements sqlgen.Dialect.
func (Dialect) Bool(b bool) any { return b }

// LimitOffset implements sqlgen.Dialect.
func (Dialect) LimitOffset(limit, offset string) string {
	s := ""
	if limit != "" {
		s += " LIMIT " + limit
	}
	if offset != "" {
		s += " OFFSET " + offset
	}
	return s
}

// Explain implements sqlgen.Dialect.
func (Dialect) Explain(sql string) string { return "EXPLAIN (ANALYZE, FORMAT JSON) " + sql }
