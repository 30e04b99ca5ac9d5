package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"reportdb"
	"reportdb/query/sqlgen"
	"reportdb/schema"
	"reportdb/store"
	"reportdb/wire"
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

// newApartPage is a page to read apart for the statement rendered as b.
func newApartPage(b *sqlgen.Built) *apartPage {
	a := pages.Get().(*apartPage)
	*a = apartPage{buf: a.buf[:0], ends: a.ends[:0], rep: a.rep[:0], reps: a.reps[:0], repAt: a.repAt[:0]}
	for _, c := range b.Columns {
		if c.Apart {
			a.cols++
		}
	}
	return a
}

// readPage reads into a the rows of a page read apart (rendered as b),
// encoded with enc: each row's JSON but for the values read apart (a.buf,
// cut at each of them: a.ends) and the row's report (a.rep, an index of
// ids, the page's report ids in the order it first names them). A row's
// report id is its column idFromEnd columns from its end; gap renders an
// apart column c around its gap (marked in a.ends) from v, the row's
// values from c's on, and returns how many of them are c's (none for a
// report column of a page of events). first, when set, gets the row's
// values when its report is first seen.
func readPage(rows store.Rows, b *sqlgen.Built, enc *rowEncoder, a *apartPage, idFromEnd int,
	gap func(c sqlgen.OutCol, v []store.Value) int, first func(vals []store.Value) error) (ids []int64, index map[int64]int, err error) {
	width := rows.NumColumns()
	var sc store.Scanner
	vals := make([]store.Value, width)
	index = map[int64]int{} // report id: its index in ids
	for rows.Next() {
		if err := sc.Scan(rows, vals); err != nil {
			return nil, nil, err
		}
		id := vals[width-idFromEnd]
		if id.Kind != store.Int {
			return nil, nil, fmt.Errorf("report id of %s", describe(id))
		}
		r, ok := index[id.Int]
		if !ok {
			r = len(ids)
			index[id.Int] = r
			ids = append(ids, id.Int)
			if first != nil {
				if err := first(vals); err != nil {
					return nil, nil, err
				}
			}
		}
		a.rep = append(a.rep, r)
		a.buf = append(a.buf, '{')
		j := 0
		for i, c := range b.Columns {
			a.buf = append(a.buf, enc.keys[i]...)
			if c.Apart {
				j += gap(c, vals[j:])
				continue
			}
			var err error
			if a.buf, err = appendValue(a.buf, c, vals[j:j+c.Width]); err != nil {
				return nil, nil, fmt.Errorf("column %s: %w", c.Name, err)
			}
			j += c.Width
		}
		a.buf = append(a.buf, '}')
		a.ends = append(a.ends, len(a.buf))
		a.n++
		if len(a.buf) > apartMaxBytes {
			return nil, nil, errPageTooLarge
		}
	}
	return ids, index, rows.Err()
}

// idBounds are the least and greatest of ids (not empty).
func idBounds(ids []int64) (lo, hi int64) {
	lo, hi = ids[0], ids[0]
	for _, id := range ids {
		lo, hi = min(lo, id), max(hi, id)
	}
	return lo, hi
}

// readApart reads the page of rows (rendered as b, with b.Apart set) and
// encodes it with enc, then closes the rows and reads their reports
// with q.
func readApart(ctx context.Context, q store.Querier, rows store.Rows, b *sqlgen.Built, enc *rowEncoder) (*apartPage, error) {
	defer rows.Close()
	a := newApartPage(b)
	// a report column is not in the row: the gap alone
	gap := func(sqlgen.OutCol, []store.Value) int {
		a.ends = append(a.ends, len(a.buf))
		return 0
	}
	ids, index, err := readPage(rows, b, enc, a, 1, gap, nil)
	if err != nil {
		return nil, err
	}
	rows.Close() // its connection is free for the reports
	if len(ids) == 0 {
		return a, nil
	}
	lo, hi := idBounds(ids)
	var sc store.Scanner
	rr, err := q.Query(ctx, store.Statement{SQL: b.Apart.SQL, Args: []any{ids, lo, hi}})
	if err != nil {
		return nil, err
	}
	defer rr.Close()
	vals := make([]store.Value, rr.NumColumns())
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

// errEventsShape is an event whose values readEventsApart does not read
// (a containment path of more dimensions than one, say): the page is then
// read again with its events' subquery, whose values the backend decodes.
var errEventsShape = errors.New("an event of the page has values of another shape")

// readEventsApart reads the page of reports (rendered as b, with
// b.Apart.Events set) and encodes it with enc but for each report's
// resource_events data, then closes the rows and reads the page's events
// with q, each report's encoded as its resource_events data. A report
// whose events are not all found (retention dropped its day in between)
// is errReportGone.
func readEventsApart(ctx context.Context, q store.Querier, rows store.Rows, b *sqlgen.Built, enc *rowEncoder) (*apartPage, error) {
	defer rows.Close()
	a := newApartPage(b)
	// {"data":EVENTS,"href":"/pdb/query/v4/reports/HASH/events"}: the
	// events go between the two pieces, the row's value is the hash
	gap := func(c sqlgen.OutCol, v []store.Value) int {
		a.buf = append(a.buf, `{"data":`...)
		a.ends = append(a.ends, len(a.buf))
		a.buf = append(appendHref(a.buf, v[0], c.BlobSuffix), '}')
		return c.Width
	}
	var want []int64 // per report, its number of events (ev_total, the last column)
	first := func(vals []store.Value) error {
		n := vals[len(vals)-1]
		if n.Kind != store.Int {
			return fmt.Errorf("number of events of %s", describe(n))
		}
		want = append(want, n.Int)
		return nil
	}
	ids, index, err := readPage(rows, b, enc, a, 2, gap, first)
	if err != nil {
		return nil, err
	}
	rows.Close() // its connection is free for the events
	if len(ids) == 0 {
		return a, nil
	}
	lo, hi := idBounds(ids)
	// a report without events is null, as its subquery's aggregate
	a.reps = append(a.reps, "null"...)
	a.repAt = append(a.repAt, make([]int, len(ids)*2)...)
	for r := range ids {
		a.repAt[2*r], a.repAt[2*r+1] = 0, len("null")
	}
	rr, err := q.Query(ctx, store.Statement{SQL: b.Apart.SQL, Args: []any{ids, lo, hi}})
	if err != nil {
		return nil, err
	}
	defer rr.Close()
	if n := rr.NumColumns(); n != 1+len(schema.EventColumns) {
		return nil, fmt.Errorf("%d columns of events, not %d", n, 1+len(schema.EventColumns))
	}
	var sc store.Scanner
	vals := make([]store.Value, 1+len(schema.EventColumns))
	found := make([]int64, len(ids))
	var ev eventValues
	cur := -1
	for rr.Next() {
		if err := sc.Scan(rr, vals); err != nil {
			return nil, err
		}
		r, ok := index[vals[0].Int]
		if vals[0].Kind != store.Int || !ok {
			return nil, fmt.Errorf("events of report id %s not asked for", describe(vals[0]))
		}
		if r != cur {
			if found[r] > 0 {
				return nil, fmt.Errorf("events of report id %d not together", vals[0].Int)
			}
			if cur >= 0 {
				a.reps = append(a.reps, ']')
				a.repAt[2*cur+1] = len(a.reps)
			}
			cur = r
			a.repAt[2*r] = len(a.reps)
			a.reps = append(a.reps, '[')
		} else {
			a.reps = append(a.reps, ", "...)
		}
		e, err := ev.event(vals[1:])
		if err != nil {
			return nil, err
		}
		a.reps = wire.AppendResourceEvent(a.reps, e)
		found[r]++
		if len(a.buf)+len(a.reps) > apartMaxBytes {
			return nil, errPageTooLarge
		}
	}
	if err := rr.Err(); err != nil {
		return nil, err
	}
	if cur >= 0 {
		a.reps = append(a.reps, ']')
		a.repAt[2*cur+1] = len(a.reps)
	}
	for r := range ids {
		if found[r] != want[r] {
			return nil, errReportGone
		}
	}
	return a, nil
}

// eventValues holds the event that event reads from one row of
// schema.EventColumns, its text borrowed from the row's values (valid
// until the next row).
type eventValues struct {
	e    reportdb.Event
	opt  [5]string
	line int64
}

// event reads v (the values of schema.EventColumns) into the event.
func (x *eventValues) event(v []store.Value) (*reportdb.Event, error) {
	x.e = reportdb.Event{}
	text := func(v store.Value) (string, bool) {
		if v.Kind != store.Text {
			return "", false
		}
		return str(v.Bytes), true
	}
	opt := func(v store.Value, i int) (*string, bool) {
		if v.Kind == store.Null {
			return nil, true
		}
		s, ok := text(v)
		x.opt[i] = s
		return &x.opt[i], ok
	}
	var ok [13]bool
	x.e.Status, ok[0] = text(v[0])
	x.e.Timestamp, ok[1] = v[1].Int, v[1].Kind == store.Int
	x.e.ResourceType, ok[2] = text(v[2])
	x.e.ResourceTitle, ok[3] = text(v[3])
	x.e.Property, ok[4] = opt(v[4], 0)
	x.e.NewValue, ok[5] = text(v[5])
	x.e.OldValue, ok[6] = text(v[6])
	x.e.Message, ok[7] = opt(v[7], 1)
	x.e.File, ok[8] = opt(v[8], 2)
	switch v[9].Kind {
	case store.Null:
		ok[9] = true
	case store.Int:
		x.line = v[9].Int
		x.e.Line, ok[9] = &x.line, true
	}
	switch v[10].Kind {
	case store.Null:
		ok[10] = true
	case store.Strings:
		x.e.ContainmentPath, ok[10] = v[10].Strings, true
		if x.e.ContainmentPath == nil {
			x.e.ContainmentPath = []string{}
		}
	}
	x.e.ContainingClass, ok[11] = opt(v[11], 3)
	x.e.Name, ok[12] = opt(v[12], 4)
	for _, o := range ok {
		if !o {
			return nil, errEventsShape
		}
	}
	return &x.e, nil
}
