package engine

import (
	"context"
	"fmt"
	"slices"

	"reportdb/query/sqlgen"
	"reportdb/store"
)

// readSplit reads the rows of a split page of events (sqlgen.SplitReports:
// each row the event's columns, then its report id; width columns in
// all), then the reports of those ids, on q, and returns the page's rows
// with their reports' columns, in the plan's order of columns. The
// events are read to the end, and closed, before the reports are looked
// up: on a snapshot's one connection the two statements cannot be open
// together, and a second connection could wait for one that a full pool
// does not give back. The page holds at most sqlgen.MaxSplitLimit rows.
func readSplit(ctx context.Context, q store.Querier, rows store.Rows, s *sqlgen.ReportSplit, width int) (store.Rows, error) {
	defer rows.Close()
	var page [][]any
	var ids []int64
	for rows.Next() {
		vals := make([]any, width)
		dest := make([]any, width)
		for i := range vals {
			dest[i] = &vals[i]
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		id, ok := asInt(vals[width-1])
		if !ok {
			return nil, fmt.Errorf("engine: an event's report id is %T", vals[width-1])
		}
		page = append(page, vals)
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	r := &splitRows{page: page, ids: ids, out: s.Out, i: -1}
	if len(page) == 0 {
		return r, nil
	}
	distinct := slices.Clone(ids)
	slices.Sort(distinct)
	reports, err := lookupReports(ctx, q, s, slices.Compact(distinct))
	if err != nil {
		return nil, err
	}
	r.reports = reports
	return r, nil
}

// lookupReports runs s.Reports on ids (sorted, distinct): the reports'
// columns by id.
func lookupReports(ctx context.Context, q store.Querier, s *sqlgen.ReportSplit, ids []int64) (map[int64][]any, error) {
	rows, err := q.Query(ctx, statement(s.ReportsOf(ids)))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	n := rows.NumColumns()
	reports := make(map[int64][]any, len(ids))
	for rows.Next() {
		vals := make([]any, n)
		dest := make([]any, n)
		for i := range vals {
			dest[i] = &vals[i]
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		id, ok := asInt(vals[0])
		if !ok {
			return nil, fmt.Errorf("engine: a report's id is %T", vals[0])
		}
		reports[id] = vals[1:]
	}
	return reports, rows.Err()
}

// splitRows are a split page's rows: each event's columns and its
// report's, in the plan's order (sqlgen.ReportSplit.Out). An event whose
// report was not found is left out, as the join leaves it out.
type splitRows struct {
	page    [][]any
	ids     []int64
	reports map[int64][]any
	out     []int
	i       int
	report  []any
}

func (r *splitRows) NumColumns() int { return len(r.out) }

func (r *splitRows) Next() bool {
	for r.i+1 < len(r.page) {
		r.i++
		if rep, ok := r.reports[r.ids[r.i]]; ok {
			r.report = rep
			return true
		}
	}
	r.i = len(r.page)
	return false
}

func (r *splitRows) Scan(dest ...any) error {
	if len(dest) != len(r.out) {
		return fmt.Errorf("engine: %d destinations for %d columns", len(dest), len(r.out))
	}
	ev := r.page[r.i]
	for i, o := range r.out {
		p, ok := dest[i].(*any)
		if !ok {
			return fmt.Errorf("engine: destination %d is %T, not *any", i, dest[i])
		}
		if o >= 0 {
			*p = ev[o]
		} else {
			*p = r.report[-o-1]
		}
	}
	return nil
}

func (r *splitRows) Err() error { return nil }

func (r *splitRows) Close() {}
