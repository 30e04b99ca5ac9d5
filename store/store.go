// Package store defines the contract every storage backend implements
// (SQLite and PostgreSQL) and the helpers they share. A backend stores
// normalised reports and runs read statements; which statements is the
// query engine's business (package engine, which also needs the backend's
// SQL dialect). It knows nothing about HTTP or the query language.
package store

import (
	"context"
	"unsafe"

	"reportdb"
)

// Backend is a storage backend.
type Backend interface {
	// StoreReports writes the reports together (one transaction or one
	// statement), duplicates (by hash) becoming reportdb.Duplicate. A
	// report that fails must not fail the others: it is reported in
	// errs[i] (outcomes[i] is then meaningless) and nothing of it is
	// stored (SQLite uses a savepoint per report; PostgreSQL retries the
	// reports of a failed batch one by one). The call returns only after
	// the commit is durable. err is set when nothing could be stored.
	StoreReports(ctx context.Context, reports []*reportdb.Report) (outcomes []reportdb.Outcome, errs []error, err error)
	// Snapshot runs fn with a read-only view of one consistent snapshot
	// (for several statements that must agree, e.g. a count and its rows).
	Snapshot(ctx context.Context, fn func(Querier) error) error
	// Querier runs single read statements (each its own snapshot) without
	// the cost of an explicit transaction.
	Querier
	// Ping checks that the database answers.
	Ping(ctx context.Context) error
	// DeleteReportsBefore removes the reports whose producer_timestamp is
	// older than cutoff (Unix ms) with their events, and returns how many.
	DeleteReportsBefore(ctx context.Context, cutoff int64) (int64, error)
	// NodeLifecycle records deactivation and expiry (see its methods).
	NodeLifecycle
	// Housekeeping is the backend's background work (see Housekeeping).
	Housekeeping() Housekeeping
	// Close releases the backend.
	Close() error
}

// NodeLifecycle is a node's life cycle as PuppetDB keeps it in its
// certnames: a node is active until the "deactivate node" command or
// node-ttl (expiry) makes it inactive, active again when a report newer
// than that arrives (StoreReports clears both marks when the report's
// producer_timestamp is later than either), and purged node-purge-ttl
// after it became inactive. Times are Unix milliseconds.
type NodeLifecycle interface {
	// DeactivateNode marks certname deactivated at ts, adding the node if
	// it is unknown, unless its latest report is newer than ts (then it
	// changes nothing and returns false, PuppetDB's "stale" command). A
	// node already deactivated keeps the later of the two times.
	DeactivateNode(ctx context.Context, certname string, ts int64) (bool, error)
	// ExpireNodes marks expired at now every active node whose latest
	// report is older than horizon (or that has none), and returns them.
	ExpireNodes(ctx context.Context, horizon, now int64) ([]string, error)
	// PurgeNodes deletes at most limit nodes deactivated or expired before
	// horizon, with every report and event of theirs, and returns them.
	PurgeNodes(ctx context.Context, horizon int64, limit int) ([]string, error)
}

// Querier runs read statements.
type Querier interface {
	Query(ctx context.Context, st Statement) (Rows, error)
}

// Statement is a read statement and its arguments.
type Statement struct {
	SQL  string
	Args []any
	// ValueSensitive marks a statement whose best plan depends on its
	// argument values (ranges, regular expressions): a backend that caches
	// plans should plan it with the values each time.
	ValueSensitive bool
}

// Rows iterates over a result set; Scan takes pointers to any and stores
// int64, float64, string, []byte, bool, []string or nil.
type Rows interface {
	// NumColumns is the number of result columns.
	NumColumns() int
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// Kind is the kind of a Value.
type Kind uint8

// The kinds of Values: what Scan would store, without the boxing.
const (
	Null    Kind = iota
	Int          // Value.Int
	Float        // Value.Float
	Bool         // Value.Int: 0 or 1
	Text         // Value.Bytes
	Strings      // Value.Strings (a text array)
	Other        // Value.Any: another type, as Scan stores it
)

// Value is one column of a row as ScanValues reads it. Reading a row of
// values into a []Value allocates nothing: putting an integer or a byte
// slice into an interface does, once per value, which for a page of
// 1,000 events of 21 columns was a quarter of the server's CPU time for
// the request.
type Value struct {
	Kind    Kind
	Int     int64
	Float   float64
	Bytes   []byte
	Strings []string
	Any     any
}

// ValueOf is the Value of x as Scan stores it. A string's bytes are the
// string's own (the Value is read, never written).
func ValueOf(x any) Value {
	switch v := x.(type) {
	case nil:
		return Value{}
	case int64:
		return Value{Kind: Int, Int: v}
	case int32:
		return Value{Kind: Int, Int: int64(v)}
	case int16:
		return Value{Kind: Int, Int: int64(v)}
	case int8:
		return Value{Kind: Int, Int: int64(v)}
	case int:
		return Value{Kind: Int, Int: int64(v)}
	case float64:
		return Value{Kind: Float, Float: v}
	case bool:
		if v {
			return Value{Kind: Bool, Int: 1}
		}
		return Value{Kind: Bool}
	case string:
		return Value{Kind: Text, Bytes: unsafe.Slice(unsafe.StringData(v), len(v))}
	case []byte:
		return Value{Kind: Text, Bytes: v}
	case []string:
		return Value{Kind: Strings, Strings: v}
	}
	return Value{Kind: Other, Any: x}
}

// ValueRows are rows that read a row into Values (ScanValues) without
// copying: text and the elements of arrays are the row's own bytes, only
// valid until the next call to Next or Close. For a consumer that is done
// with a row's values before it moves on (the JSON encoder of a response,
// which appends them to the body).
type ValueRows interface {
	Rows
	ScanValues(dst []Value) error
}

// Scanner reads rows into Values: with ScanValues where the rows have it,
// else with Scan and ValueOf (in a buffer of its own, reused row after
// row).
type Scanner struct {
	vals []any
	dest []any
}

// Scan reads rows' current row into dst (one Value per column).
func (s *Scanner) Scan(rows Rows, dst []Value) error {
	if v, ok := rows.(ValueRows); ok {
		return v.ScanValues(dst)
	}
	if len(s.vals) != len(dst) {
		s.vals = make([]any, len(dst))
		s.dest = make([]any, len(dst))
		for i := range s.vals {
			s.dest[i] = &s.vals[i]
		}
	}
	if err := rows.Scan(s.dest...); err != nil {
		return err
	}
	for i, x := range s.vals {
		dst[i] = ValueOf(x)
	}
	return nil
}
