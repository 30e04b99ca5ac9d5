package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"reportdb/query/sqlgen"
	"reportdb/store"
)

// errReportGone is a report of a page that its statement by ids did not
// find: retention dropped its day between the page's statement and that
// one. The page is then read again with its join.
var errReportGone = errors.New("a report of the page was dropped while it was read")

// errPageTooLarge is a page that outgrew apartMaxBytes while it was read
// whole: it is read again with its join, which streams its rows.
var errPageTooLarge = errors.New("the page is too large to be held")

// apartMaxBytes bounds the JSON of a page held in memory while its reports
// are read (a page of 1,000 events of the medium fleet is 0.9 MB; events
// can carry values of any size): a page that outgrows it is read again
// with its join.
var apartMaxBytes = 16 << 20

// apartPage is a page of events whose reports were read apart
// (sqlgen.ReportsApart), encoded as the statement with the join would be:
// the page is read whole and its rows encoded but for their reports'
// values, then its reports are read by their ids and their values
// encoded, each report once; a row is then its pieces and its report's
// values, in turn.
type apartPage struct {
	cols  int    // the report's columns in a row (OutCol.Apart)
	buf   []byte // the rows' JSON but for their reports' values
	ends  []int  // per row, the ends in buf of its cols+1 pieces
	rep   []int  // per row, its report (an index of reps)
	reps  []byte // the reports' values as JSON
	repAt []int  // per report, where its values start in reps, then where each ends
	n, i  int    // the page's rows, and the current one (1-based)
}

// pages are apartPages to reuse: a page of 1,000 events is about a
// megabyte, which growing anew for each request cost a fifth of the
// server's time for it.
var pages = sync.Pool{New: func() any { return new(apartPage) }}

// release returns a's buffers for another page; a is not used after.
func (a *apartPage) release() {
	if cap(a.buf) > apartMaxBytes {
		return // an outsized page's buffers go to the collector
	}
	pages.Put(a)
}

// readApart reads the page of rows (rendered as b, with b.Apart set) and
// encodes it with enc, then closes the rows and reads their reports
// with q.
func readApart(ctx context.Context, q store.Querier, rows store.Rows, b *sqlgen.Built, enc *rowEncoder) (*apartPage, error) {
	defer rows.Close()
	a := pages.Get().(*apartPage)
	*a = apartPage{buf: a.buf[:0], ends: a.ends[:0], rep: a.rep[:0], reps: a.reps[:0], repAt: a.repAt[:0]}
	for _, c := range b.Columns {
		if c.Apart {
			a.cols++
		}
	}
	width := rows.NumColumns()
	var sc store.Scanner
	vals := make([]store.Value, width)
	index := map[int64]int{} // report id: its index in ids
	var ids []int64
	for rows.Next() {
		if err := sc.Scan(rows, vals); err != nil {
			return nil, err
		}
		id := vals[width-1]
		if id.Kind != store.Int {
			return nil, fmt.Errorf("report id of %s", describe(id))
		}
		r, ok := index[id.Int]
		if !ok {
			r = len(ids)
			index[id.Int] = r
			ids = append(ids, id.Int)
		}
		a.rep = append(a.rep, r)
		a.buf = append(a.buf, '{')
		j := 0
		for i, c := range b.Columns {
			a.buf = append(a.buf, enc.keys[i]...)
			if c.Apart {
				a.ends = append(a.ends, len(a.buf))
				continue
			}
			var err error
			if a.buf, err = appendValue(a.buf, c, vals[j:j+c.Width]); err != nil {
				return nil, fmt.Errorf("column %s: %w", c.Name, err)
			}
			j += c.Width
		}
		a.buf = append(a.buf, '}')
		a.ends = append(a.ends, len(a.buf))
		a.n++
		if len(a.buf) > apartMaxBytes {
			return nil, errPageTooLarge
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close() // its connection is free for the reports
	if len(ids) == 0 {
		return a, nil
	}
	lo, hi := ids[0], ids[0]
	for _, id := range ids {
		lo, hi = min(lo, id), max(hi, id)
	}
	rr, err := q.Query(ctx, store.Statement{SQL: b.Apart.SQL, Args: []any{ids, lo, hi}})
	if err != nil {
		return nil, err
	}
	defer rr.Close()
	vals = make([]store.Value, rr.NumColumns())
	a.repAt = append(a.repAt, make([]int, len(ids)*(a.cols+1))...)
	found := make([]bool, len(ids))
	nfound := 0
	for rr.Next() {
		if err := sc.Scan(rr, vals); err != nil {
			return nil, err
		}
		r, ok := index[vals[0].Int]
		if vals[0].Kind != store.Int || !ok || found[r] {
			return nil, fmt.Errorf("report id of %s not asked for", describe(vals[0]))
		}
		found[r] = true
		nfound++
		at := a.repAt[r*(a.cols+1):]
		at[0] = len(a.reps)
		k := 1
		for _, c := range b.Columns {
			if !c.Apart {
				continue
			}
			if a.reps, err = appendValue(a.reps, c, vals[k:k+1]); err != nil {
				return nil, fmt.Errorf("column %s: %w", c.Name, err)
			}
			at[k] = len(a.reps)
			k++
		}
	}
	if err := rr.Err(); err != nil {
		return nil, err
	}
	if nfound != len(ids) {
		return nil, errReportGone
	}
	return a, nil
}

func (a *apartPage) NumColumns() int { return 0 }

func (a *apartPage) Next() bool {
	if a.i >= a.n {
		return false
	}
	a.i++
	return true
}

func (a *apartPage) Err() error { return nil }
func (a *apartPage) Close()     {}

func (a *apartPage) Scan(dest ...any) error {
	return errors.New("the rows of a page whose reports were read apart are only encoded")
}

// appendRow appends the current row's JSON: its pieces, and its report's
// values between them.
func (a *apartPage) appendRow(b []byte) ([]byte, error) {
	s := a.cols + 1
	row := a.i - 1
	start := 0
	if row > 0 {
		start = a.ends[row*s-1]
	}
	at := a.repAt[a.rep[row]*s:]
	for k := 0; k < s; k++ {
		end := a.ends[row*s+k]
		b = append(b, a.buf[start:end]...)
		if k < a.cols {
			b = append(b, a.reps[at[k]:at[k+1]]...)
		}
		start = end
	}
	return b, nil
}
