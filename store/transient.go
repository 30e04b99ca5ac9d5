package store

import (
	"errors"

	"reportdb"
)

// ErrTransient marks a storage failure that says nothing about what was
// being stored and passes by itself: a deadlock or serialization failure
// PostgreSQL broke by failing the transaction, a lock not granted in
// time, a lost connection, a database restarting or out of connections,
// SQLite's writer lock held by another process. Whatever was being
// stored can be stored again as it is. Test for it with IsTransient.
var ErrTransient = errors.New("transient storage failure")

// TransientRetryAfter is the Retry-After, in seconds, of a report refused
// for a transient failure (Transient).
const TransientRetryAfter = 5

// Transient wraps err, a transient failure of the database (see
// ErrTransient), as the error a submitter answers: 503 with a
// Retry-After, which PuppetDB's clients retry, rather than a 500, which
// they do not (the report would be lost). reason says what happened in a
// few words, for the client; err is kept for the logs.
func Transient(err error, reason string) error {
	return &reportdb.Error{Code: reportdb.EUNAVAILABLE, RetryAfter: TransientRetryAfter,
		Message: "The database could not store the report right now (" + reason +
			"); the report was not stored, retry later",
		Err: transientError{err}}
}

// IsTransient tells whether err is, or wraps, a transient storage
// failure (Transient or ErrTransient).
func IsTransient(err error) bool { return errors.Is(err, ErrTransient) }

// transientError is a cause marked as transient: errors.Is matches it
// with ErrTransient and with what it wraps.
type transientError struct{ err error }

func (e transientError) Error() string {
	if e.err == nil {
		return ErrTransient.Error()
	}
	return e.err.Error()
}

func (e transientError) Is(target error) bool { return target == ErrTransient }

func (e transientError) Unwrap() error { return e.err }
