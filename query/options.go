package query

import (
	"strings"
	"time"

	"reportdb"
	"reportdb/jsonv"
)

// Options are the validated request parameters of a query.
type Options struct {
	Query        any // parsed AST; nil = no filter
	QuerySet     bool
	QueryText    string // the raw query text (root endpoint: may be PQL)
	OrderBy      []OrderSpec
	OrderBySet   bool
	Limit        int64 // 0 = none
	Offset       int64
	LimitSet     bool
	OffsetSet    bool
	IncludeTotal bool
	Pretty       bool
	ASTOnly      bool
	Explain      bool
	Distinct     *DistinctWindow
	SummarizeBy  string
	CountBy      string
	CountsFilter any
	// Timeout is the client's timeout parameter (PuppetDB 8): how long the
	// query may run, within the server's own limit. 0: not given, or 0
	// (no limit of the client's).
	Timeout time.Duration
}

// OrderSpec is one validated order_by entry (the field not yet resolved).
type OrderSpec struct {
	Field string
	Desc  bool
}

// DistinctWindow is the distinct_resources time window (inclusive, Unix ms).
type DistinctWindow struct{ Start, End int64 }

// RootQueryIsPQL reports whether a root-endpoint query string is PQL rather
// than the JSON AST.
func RootQueryIsPQL(s string) bool {
	return !strings.HasPrefix(strings.TrimLeft(s, " \t\r\n"), "[")
}

// Error helpers shared by the planner.
func invalidf(format string, args ...any) error {
	return reportdb.Errorf(reportdb.EINVALID, format, args...)
}

func clj(v any) string { return jsonv.Clojure(v) }
