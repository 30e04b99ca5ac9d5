package query

import (
	"math"
	"strings"

	"reportdb/jsonv"
)

// Limits on the size of one query. They are checked on the JSON AST (PQL
// having been translated to it) before anything is planned or run, so an
// oversized query costs no database work and is answered 400 with a
// message naming the limit, whichever backend serves it. The defaults are
// far above what PuppetDB's clients send (Puppetboard and pypuppetdb
// queries have a few dozen clauses at most, nested a few levels), while
// keeping the SQL they become within what both databases plan quickly and
// what SQLite accepts: SQLite refuses expressions deeper than 1000 levels,
// and the depth of a subquery adds to that of every query around it.
const (
	// MaxQueryClauses bounds the clauses of a query: every operator array
	// (["=", ...], ["and", ...], ["in", ...], ["extract", ...], ...,
	// subqueries included) and every entry of an extract, group_by or
	// order_by list (the order_by parameter included). Matching a field
	// against many values takes one clause with
	// ["in", field, ["array", [values...]]].
	MaxQueryClauses = 500
	// MaxQueryDepth bounds how deeply the arrays of a query nest
	// (["not", ["=", "certname", "a"]] is 2 deep; a subquery
	// ["in", f, ["extract", f, ["select_reports", q]]] adds 3 to the
	// depth of q, ["subquery", "reports", q] adds 1). SQLite counts the
	// depth of a subquery's SQL again for every query around it: within
	// this depth and MaxQueryClauses, no query comes near its limit of
	// 1000.
	MaxQueryDepth = 16
	// MaxInValues bounds the values listed in the ["array", [...]]
	// targets of "in", over the whole query (PuppetDB's clients send a
	// few thousand certnames this way).
	MaxInValues = 10000
	// MaxRegexBytes bounds the length of a regular expression (~): long
	// enough for a literal prefix of a long title (an Exec's script) or an
	// alternation of a few hundred node names, short enough that
	// PostgreSQL never finds a shorter one too complex. Matching may cost
	// the pattern's length times the value's, for every row.
	MaxRegexBytes = 16384
)

// querySize measures a query against the limits.
type querySize struct {
	clauses, values int
	tooDeep         bool
}

// checkSize checks the queries of one request (the query itself and, for
// event counts, its counts_filter) and the order_by parameter against the
// limits.
func checkSize(o *Options, queries ...any) error {
	var s querySize
	if o != nil {
		s.clauses = len(o.OrderBy)
	}
	for _, q := range queries {
		s.walk(q, 1)
	}
	switch {
	case s.tooDeep:
		return invalidf("The query is nested too deeply: its arrays nest more than %d levels (the limit on the depth of a query)", MaxQueryDepth)
	case s.clauses > MaxQueryClauses:
		return invalidf("The query is too large: it has %d clauses, more than the limit of %d (every operator such as =, ~, and, or, not and in counts, and so does every entry of extract, group_by and order_by). To match a field against many values, use [\"in\", field, [\"array\", [values...]]]", s.clauses, MaxQueryClauses)
	case s.values > MaxInValues:
		return invalidf("The query is too large: its \"in\" arrays list %d values, more than the limit of %d values in one query", s.values, MaxInValues)
	}
	return nil
}

func (s *querySize) walk(v any, depth int) {
	arr, ok := v.([]any)
	if !ok {
		return
	}
	if depth > MaxQueryDepth {
		s.tooDeep = true
		return
	}
	s.clauses++
	if len(arr) == 0 {
		return
	}
	rest := arr[1:]
	switch arr[0] {
	case "array":
		if len(rest) > 0 {
			if vals, ok := rest[0].([]any); ok {
				s.values += len(vals)
				rest = rest[1:]
			}
		}
	case "extract", "order_by":
		if len(rest) > 0 {
			if list, ok := rest[0].([]any); ok {
				s.clauses += len(list)
			}
		}
	case "group_by":
		s.clauses += len(rest)
	}
	for _, a := range rest {
		s.walk(a, depth+1)
		if s.tooDeep {
			return
		}
	}
}

// checkRegex rejects, before it reaches any database, a regular
// expression that is longer than MaxRegexBytes or that PostgreSQL would
// refuse as text (a NUL).
func checkRegex(fld *Field, p string) error {
	if err := checkText(p); err != nil {
		return err
	}
	if len(p) > MaxRegexBytes {
		return invalidf("The query is too large: the regular expression for ~ on field %s is %d bytes long, more than the limit of %d bytes", fld.Name, len(p), MaxRegexBytes)
	}
	return nil
}

// checkText rejects a string that is compared as text and holds a NUL,
// which PostgreSQL's text type cannot hold: PostgreSQL refuses it with
// this message, and SQLite would read a bound pattern only up to the NUL.
func checkText(s string) error {
	if strings.IndexByte(s, 0) >= 0 {
		return invalidf("ERROR: invalid byte sequence for encoding \"UTF8\": 0x00")
	}
	return nil
}

// numberRange is the range of the integer column behind a numeric field
// (PostgreSQL's types: line is integer, report_format smallint).
func numberRange(fld *Field) (lo, hi int64) {
	switch fld.Column {
	case "report_format":
		return math.MinInt16, math.MaxInt16
	case "line":
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

// numberCmp compiles a comparison of a numeric field with a JSON number.
func numberCmp(fld *Field, op string, n jsonv.Number) Cmp {
	val, _ := numberValue(n)
	lo, hi := numberRange(fld)
	op, val = clampNumber(op, val, lo, hi)
	return Cmp{Op: op, Field: fld, Value: val}
}

// clampNumber rewrites "column op val" for an integer column whose values
// lie in [lo, hi] when val lies outside: the value becomes the range's
// bound, with an operator that gives every row the same answer (a NULL
// column stays unknown, so "not" still leaves its row out). No line is
// above 2^31, so "line > 1e30" and "line = 1e30" become "line >
// 2147483647", and "line < 1e30" becomes "line <= 2147483647". PostgreSQL
// would refuse the value itself as a parameter of the column's type.
func clampNumber(op string, val any, lo, hi int64) (string, any) {
	above, below := false, false
	switch x := val.(type) {
	case int64:
		above, below = x > hi, x < lo
	case float64:
		// float64(math.MaxInt64) is 2^63, itself too large for a bigint
		above, below = x > float64(hi) || x >= 0x1p63, x < float64(lo)
	}
	switch {
	case above && (op == "<" || op == "<="):
		return "<=", hi
	case above:
		return ">", hi
	case below && (op == ">" || op == ">="):
		return ">=", lo
	case below:
		return "<", lo
	}
	return op, val
}

// inRange reports whether a number read by numberValue fits fld's column.
func inRange(fld *Field, val any) bool {
	lo, hi := numberRange(fld)
	op, _ := clampNumber("=", val, lo, hi)
	return op == "="
}
