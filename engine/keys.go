package engine

import (
	"context"

	"reportdb/query/sqlgen"
	"reportdb/schema/dialect"
	"reportdb/store"
)

// keying is how a query whose answer is made of the reports stored under
// a few keys (sqlgen.KeyLookup: a hash, a node's configuration version:
// Puppetboard's report page) is run on a dialect that keeps them
// (dialect.ReportKeys): the ids under those keys are read first, from one
// index whatever the days kept, then the statement is run on those ids
// alone, bounded to their days, so that only those days' partitions are
// opened. The statement keeps the whole filter: ids of other reports
// (keys that hash alike, reports deleted since) only cost a row read.
type keying struct {
	rk   dialect.ReportKeys
	keys []string
}

// bind reads the ids under k's keys and binds them, and their days'
// range, in each keyed statement of bs.
func (k *keying) bind(ctx context.Context, q store.Querier, bs ...*sqlgen.Built) error {
	rows, err := q.Query(ctx, store.Statement{SQL: k.rk.ReportKeysSQL(), Args: []any{k.keys}})
	if err != nil {
		return err
	}
	defer rows.Close()
	ids := []int64{}
	for rows.Next() {
		var v any
		if err := rows.Scan(&v); err != nil {
			return err
		}
		if id, ok := asInt(v); ok {
			ids = append(ids, id)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	lo, hi := k.rk.IDDays(ids)
	for _, b := range bs {
		if b == nil || !b.Keyed {
			continue
		}
		b.Args[b.KeyArgs[0]], b.Args[b.KeyArgs[1]], b.Args[b.KeyArgs[2]] = ids, lo, hi
	}
	return nil
}

// runKeyed is run (see there) for a keyed query: rows and count were
// rendered with sqlgen.Keyed, and are run as they are when they were not
// keyed (a plan answered apart).
func (e *Engine) runKeyed(ctx context.Context, k *keying, rowsSQL, count *sqlgen.Built, fn rowsFunc) error {
	if !rowsSQL.Keyed && (count == nil || !count.Keyed) {
		return e.run(ctx, rowsSQL, count, fn)
	}
	return e.runRows(ctx, func(q store.Querier) error { return k.bind(ctx, q, rowsSQL, count) }, count,
		func(q store.Querier) (store.Rows, error) { return q.Query(ctx, statement(rowsSQL)) }, fn)
}
