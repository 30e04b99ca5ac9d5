// Package store defines the contract every storage backend implements
// (SQLite and PostgreSQL) and the helpers they share. A backend stores
// normalised reports and runs read statements; which statements is the
// query engine's business (package engine, which also needs the backend's
// SQL dialect). It knows nothing about HTTP or the query language.
package store

import (
	"context"

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
	// Close releases the backend.
	Close() error
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

// BorrowingRows are rows that can also scan text values as byte slices
// into their own buffer instead of strings: no copy, but the bytes are
// only valid until the next call to Next or Close. For a consumer that
// is done with a row's values before it moves on (the JSON encoder of a
// response, which appends them to the body).
type BorrowingRows interface {
	Rows
	ScanBorrowed(dest ...any) error
}

// ScanBorrowed scans rows' current row into dest, text as bytes borrowed
// from rows when they can (BorrowingRows), else as Scan does.
func ScanBorrowed(rows Rows, dest ...any) error {
	if b, ok := rows.(BorrowingRows); ok {
		return b.ScanBorrowed(dest...)
	}
	return rows.Scan(dest...)
}
