package query

import (
	"math"
	"strconv"

	"reportdb/internal/pgcompat"
	"reportdb/jsonv"
)

// ParseTimestampValue parses a timestamp given as a string in a query, as
// PuppetDB's lenient parser does, to Unix milliseconds.
func ParseTimestampValue(s string) (int64, bool) {
	t, ok := pgcompat.ParseTimestamp(s)
	if !ok {
		return 0, false
	}
	return t.UnixMilli(), true
}

// NumberMillis reads a JSON number as epoch milliseconds.
func NumberMillis(n jsonv.Number) (int64, bool) {
	if n.IsInteger() {
		v, err := strconv.ParseInt(string(n), 10, 64)
		return v, err == nil
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 9e15 {
		return 0, false
	}
	return int64(f), true
}

// numberValue reads a JSON number as int64 when integral, else float64.
func numberValue(n jsonv.Number) (any, bool) {
	if n.IsInteger() {
		if v, err := strconv.ParseInt(string(n), 10, 64); err == nil {
			return v, true
		}
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		return nil, false
	}
	return f, true
}

// truthy is Clojure truthiness: everything but false and nil.
func truthy(v any) bool {
	if v == nil {
		return false
	}
	if b, ok := v.(bool); ok {
		return b
	}
	return true
}
