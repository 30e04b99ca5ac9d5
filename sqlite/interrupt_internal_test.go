package sqlite

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"reportdb/engine"
	"reportdb/internal/testcorpus"
	"reportdb/query"
	"reportdb/store"
)

func stmt(sql string, args ...any) store.Statement { return store.Statement{SQL: sql, Args: args} }

func openDB(t *testing.T) *DB {
	db, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// within runs fn and fails the test if it has not returned after d (a
// generous bound: what it checks stops at a deadline far shorter).
func within(t *testing.T, d time.Duration, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s: still running after %v", what, d)
	}
}

// TestInterruptLongStep: a statement whose step after the first row runs
// long (here a scan that finds its second row only after two billion
// steps) stops at its context's deadline; the driver alone interrupts the
// first step only, and database/sql closes rows between steps.
func TestInterruptLongStep(t *testing.T) {
	db := openDB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	within(t, 20*time.Second, "the second row of a long scan", func() {
		rows, err := db.Query(ctx, stmt(`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c)
			SELECT x FROM c WHERE x = 1 OR x = 2000000000`))
		if err != nil {
			t.Errorf("query: %v", err)
			return
		}
		defer rows.Close()
		if !rows.Next() {
			t.Errorf("no first row: %v", rows.Err())
			return
		}
		if rows.Next() {
			t.Error("a second row")
		}
		if err := rows.Err(); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("error %v, want the context's deadline", err)
		}
	})
	// the connection serves the next query
	rows, err := db.Query(context.Background(), stmt(`SELECT 1`))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	if !rows.Next() {
		t.Fatalf("after an interrupted query: %v", rows.Err())
	}
}

// TestRegexpStopsAtDeadline: the regexp function over a long value stops
// when its query's context ends, whether the statement is on its first
// row or a later one, alone or in a snapshot (Go's matcher here costs the
// pattern's size for every byte of the value: about 40 s uninterrupted).
func TestRegexpStopsAtDeadline(t *testing.T) {
	db := openDB(t)
	pattern := strings.Repeat("(T|U)", 3000) + "V"
	value := strings.Repeat("T", 1<<20)
	for _, c := range []struct {
		name string
		run  func(ctx context.Context) error
	}{
		{"first row", func(ctx context.Context) error {
			return drain(db.Query(ctx, stmt(`SELECT regexp(?1, ?2)`, pattern, value)))
		}},
		{"later row", func(ctx context.Context) error {
			return drain(db.Query(ctx, stmt(`SELECT regexp(?1, v) FROM (SELECT 'short' AS v UNION ALL SELECT ?2)`, pattern, value)))
		}},
		{"snapshot", func(ctx context.Context) error {
			return db.Snapshot(ctx, func(q store.Querier) error {
				return drain(q.Query(ctx, stmt(`SELECT regexp(?1, ?2)`, pattern, value)))
			})
		}},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		within(t, 20*time.Second, c.name, func() {
			if err := c.run(ctx); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("%s: error %v, want the context's deadline", c.name, err)
			}
		})
		cancel()
	}
}

// drain reads every row and returns the error.
func drain(rows store.Rows, err error) error {
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
	}
	return rows.Err()
}

// TestRegexpLiteral: a literal pattern is searched for as a string, in
// time linear in the value (Go's matcher took a minute here).
func TestRegexpLiteral(t *testing.T) {
	db := openDB(t)
	value := strings.Repeat("T", 1<<20)
	for _, c := range []struct {
		pattern string
		want    int64
	}{
		{strings.Repeat("T", 16000) + "U", 0},
		{strings.Repeat("T", 16000), 1},
	} {
		within(t, 20*time.Second, "a literal pattern", func() {
			rows, err := db.Query(context.Background(), stmt(`SELECT regexp(?1, ?2)`, c.pattern, value))
			if err != nil {
				t.Error(err)
				return
			}
			defer rows.Close()
			var got int64
			if !rows.Next() || rows.Scan(&got) != nil || got != c.want {
				t.Errorf("literal of %d bytes: %d, want %d (%v)", len(c.pattern), got, c.want, rows.Err())
			}
		})
	}
}

// TestWatchedReaderMatchesLikeString: fed through the watched reader, a
// pattern matches exactly what it matches in the string.
func TestWatchedReaderMatchesLikeString(t *testing.T) {
	texts := []string{"", "a", "abc", "x\nabc\ny", "héllo wörld", "\xff\xfeab", strings.Repeat("ab", 3000) + "c", "end."}
	for _, p := range []string{`^abc`, `abc$`, `(?m)^abc$`, `\bwörld\b`, `^$`, `c\z`, `\.$`, `b+c`, `(?i)HÉLLO`, `^x`, `[^a]b`, `\xff`} {
		re := regexp.MustCompile(p)
		for _, s := range texts {
			r := &watchedReader{s: s, w: &watch{}}
			if got, want := re.MatchReader(r), re.MatchString(s); got != want {
				t.Errorf("%q on %.20q: reader %v, string %v", p, s, got, want)
			}
		}
	}
}

// TestQueriesAtTheLimitsFitSQLite: queries as large as the query limits
// allow, in the shapes that make SQLite's expressions deepest (wide "or"s
// at the bottom of nested subqueries, whose depth SQLite counts again for
// every query around them), stay within half of SQLite's limit on the
// depth of an expression.
func TestQueriesAtTheLimitsFitSQLite(t *testing.T) {
	db := openDB(t)
	db.reader.SetMaxOpenConns(1)
	conn, err := db.reader.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sqlite.Limit(conn, sqlite3.SQLITE_LIMIT_EXPR_DEPTH, 500); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	eq := func(i int) string { return fmt.Sprintf(`["=","certname","h%d"]`, i) }
	re := func(i int) string { return fmt.Sprintf(`["~","certname","x%d"]`, i) }
	or := func(n int, leaf func(int) string) string {
		xs := make([]string, n)
		for i := range xs {
			xs[i] = leaf(i)
		}
		return `["or",` + strings.Join(xs, ",") + `]`
	}
	// implicit subqueries alternating between reports and events
	implicit := func(n int, q string) string {
		for i := range n {
			q = fmt.Sprintf(`["subquery",%q,%s]`, []string{"reports", "events"}[i%2], q)
		}
		return q
	}
	// levels of and/or, each w wide, the next level last
	logic := func(levels, w int) string {
		q := eq(0)
		for l := range levels {
			xs := make([]string, w-1)
			for i := range xs {
				xs[i] = eq(l*1000 + i)
			}
			q = fmt.Sprintf(`[%q,%s,%s]`, []string{"or", "and"}[l%2], strings.Join(xs, ","), q)
		}
		return q
	}
	selects := func(n int, q string) string {
		for i := range n {
			q = fmt.Sprintf(`["in","certname",["extract","certname",["select_%s",%s]]]`, []string{"reports", "events"}[i%2], q)
		}
		return q
	}
	e := engine.New(db)
	for name, q := range map[string]string{
		"wide or":                   or(query.MaxQueryClauses-1, re),
		"or under 14 subqueries":    implicit(14, or(query.MaxQueryClauses-15, eq)),
		"logic under 7 subqueries":  implicit(7, logic(7, 61)),
		"logic under 4 subqueries":  implicit(4, logic(10, 44)),
		"logic under 10 subqueries": implicit(10, logic(4, 97)),
		"or under 4 selects":        selects(4, or(query.MaxQueryClauses-20, eq)),
		"5 selects":                 selects(5, eq(0)),
		"deep logic":                logic(14, 33),
		"deep not":                  strings.Repeat(`["not",`, query.MaxQueryDepth-1) + eq(0) + strings.Repeat("]", query.MaxQueryDepth-1),
	} {
		p, err := query.Compile(query.Events, testcorpus.JSON(t, q), &query.Options{})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if err := e.Query(context.Background(), p, true, func(rows *engine.Rows, total int64) error {
			for rows.Next() {
			}
			return rows.Err()
		}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestUnclosedRowsGiveBackTheirConnection: rows a caller never closes
// give their connection back when their context ends, as database/sql's
// own do.
func TestUnclosedRowsGiveBackTheirConnection(t *testing.T) {
	db := openDB(t)
	db.reader.SetMaxOpenConns(1)
	ctx, cancel := context.WithCancel(context.Background())
	if _, err := db.Query(ctx, stmt(`SELECT 1 UNION ALL SELECT 2`)); err != nil {
		t.Fatal(err)
	}
	cancel()
	within(t, 20*time.Second, "the next query on the only connection", func() {
		if err := drain(db.Query(context.Background(), stmt(`SELECT 1`))); err != nil {
			t.Error(err)
		}
	})
}
