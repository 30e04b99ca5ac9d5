package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"

	"modernc.org/libc"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"reportdb"
)

// A query must stop at its context's deadline wherever SQLite spends its
// time. The driver interrupts SQLite when the context ends only while a
// statement's first row is computed; between later rows database/sql
// closes the rows only once the current step returns, and a step can scan
// a whole table (or sort it, or run a Go function over a long value) on
// its own. So each query watches its context for the whole time it holds
// its connection: when the context ends, it interrupts the connection
// (sqlite3_interrupt, which SQLite checks between the instructions of
// every running statement) and flags the Go functions running on it
// (functions.go), which check the flag while they work.

// watch is the context watch of one query on one connection.
type watch struct {
	mu    sync.Mutex
	db    uintptr // the sqlite3 handle; 0 when it could not be read
	key   uintptr // the connection's TLS, which its function calls receive
	armed bool
	stop  func() bool
	// interrupted is set when the context ended while the query ran.
	interrupted atomic.Bool
}

// watches maps the TLS of each watched connection to its watch.
var watches sync.Map

// watchConn watches ctx for a query on conn until the returned watch's
// release is called. A context that cannot end needs no watch (nil).
func watchConn(ctx context.Context, conn *sql.Conn) *watch {
	if ctx.Done() == nil {
		return nil
	}
	w := &watch{armed: true}
	conn.Raw(func(dc any) error {
		w.db, w.key = connHandles(dc)
		return nil
	})
	if w.key != 0 {
		watches.Store(w.key, w)
	}
	w.stop = context.AfterFunc(ctx, w.interrupt)
	return w
}

// interrupt stops what runs on the watched connection, unless the query
// is over (the connection may then already serve another).
func (w *watch) interrupt() {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.armed {
		return
	}
	w.interrupted.Store(true)
	if w.db != 0 {
		// A TLS of its own: the connection's may be in use by the
		// statement this interrupts.
		tls := libc.NewTLS()
		sqlite3.Xsqlite3_interrupt(tls, w.db)
		tls.Close()
	}
}

// release ends the watch: nothing is interrupted after it returns.
func (w *watch) release() {
	if w == nil {
		return
	}
	w.stop()
	w.mu.Lock()
	w.armed = false
	w.mu.Unlock()
	if w.key != 0 {
		watches.CompareAndDelete(w.key, w)
	}
}

// connHandles reads the sqlite3 handle and the TLS of a driver connection
// of modernc.org/sqlite, which does not export them (0, 0 if its fields
// are not found, e.g. after an upgrade of the driver: queries then stop
// between rows only, as TestInterruptLongStep notices).
func connHandles(dc any) (db, key uintptr) {
	v := reflect.ValueOf(dc)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return 0, 0
	}
	d, t := v.Elem().FieldByName("db"), v.Elem().FieldByName("tls")
	if !d.IsValid() || d.Kind() != reflect.Uintptr || !t.IsValid() || t.Kind() != reflect.Pointer {
		return 0, 0
	}
	return uintptr(d.Uint()), t.Pointer()
}

// callWatch returns the watch of the query that runs a function call
// (nil if none): the call receives the TLS of the connection it runs on.
func callWatch(fc *sqlite.FunctionContext) *watch {
	if fc == nil {
		return nil
	}
	t := reflect.ValueOf(fc).Elem().FieldByName("tls")
	if !t.IsValid() || t.Kind() != reflect.Pointer {
		return nil
	}
	w, _ := watches.Load(t.Pointer())
	x, _ := w.(*watch)
	return x
}

// errInterrupted is what a function answers when its query's context
// ended while it ran.
var errInterrupted = errors.New("interrupted: the query's context ended")

// queryError maps an error of a read statement: after its context ended,
// whatever SQLite reports (an interrupt, a function's errInterrupted) is
// the context's error, which the API answers as a query timeout; limits
// of SQLite's that a query can reach are the query's fault (400).
func queryError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	msg := err.Error()
	for _, s := range []string{"Expression tree is too large", "too many SQL variables", "parser stack overflow",
		"too many terms in", "too many columns", "at most 64 tables in a join", "too many FROM clause terms"} {
		if strings.Contains(msg, s) {
			return &reportdb.Error{Code: reportdb.EINVALID, Err: err,
				Message: "The query is too large for the embedded store (SQLite: " + msg + "); make it smaller"}
		}
	}
	return err
}
