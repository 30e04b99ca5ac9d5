package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// Maintain implements store.Maintainer: it VACUUMs (and ANALYZEs) the day
// partitions of events and report data whose day has ended and that have
// changed since they were last vacuumed, and the reports, certnames and
// rollup tables when they have changed (rollup compaction deletes and
// re-inserts rows all day).
//
// Why reportdb does this itself: a day partition stops receiving rows when
// its day ends, and PostgreSQL's autovacuum vacuums an insert-only table
// only after inserts of 20% of its size, so the last part of every day
// could stay unvacuumed until an anti-wraparound vacuum, months later (and
// nothing is vacuumed where autovacuum is off). Until VACUUM has set a
// page's all-visible bit, index-only scans fetch the row from the heap and
// sequential scans check each row's visibility. Vacuuming a closed day once
// costs one pass over it. Retention's row deletes (reports, and the events
// of the day holding the cutoff) leave dead rows for the same VACUUM.
//
// One instance at a time: it holds the retention lock for its duration, so
// it never overlaps a retention run elsewhere (which drops partitions);
// when another instance holds it, Maintain returns nil and does nothing.
func (db *DB) Maintain(ctx context.Context) (vacuumed []string, err error) {
	conn, release, got, err := db.lockedConn(ctx, lockRetention, false)
	if err != nil || !got {
		return nil, err
	}
	defer release()

	rows, err := conn.Query(ctx, `SELECT s.relname, coalesce(p.relname, '')
		FROM pg_stat_user_tables s
		LEFT JOIN pg_inherits i ON i.inhrelid = s.relid
		LEFT JOIN pg_class p ON p.oid = i.inhparent
		WHERE (s.n_ins_since_vacuum > 0 OR s.n_dead_tup > 0)
		  AND (p.relname IN ('reports', 'resource_events', 'report_data') OR s.relname IN ('certnames', 'latest_reports', 'report_rollup', 'event_rollup', 'failure_rollup',
		    'resource_latest', 'distinct_rollup'))
		ORDER BY 1`)
	if err != nil {
		return nil, err
	}
	var names []string
	today := dayIndex(time.Now().UnixMilli())
	for rows.Next() {
		var name, parent string
		if err := rows.Scan(&name, &parent); err != nil {
			rows.Close()
			return nil, err
		}
		if parent != "" {
			if d, ok := partitionDay(parent, name); !ok || d >= today {
				continue // today's (or a future day's) partition is still filling
			}
		}
		names = append(names, name)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, name := range names {
		if _, err := conn.Exec(ctx, "VACUUM (ANALYZE) "+pgx.Identifier{name}.Sanitize()); err != nil {
			if isUndefinedTable(err) {
				continue // dropped meanwhile
			}
			return vacuumed, err
		}
		vacuumed = append(vacuumed, name)
	}
	if shrunk, err := shrinkLatestReports(ctx, conn.Conn()); err != nil {
		return vacuumed, err
	} else if shrunk {
		vacuumed = append(vacuumed, "latest_reports (rewritten)")
	}
	return vacuumed, nil
}

// latestBloat is how many times its compact size latest_reports may grow
// before maintenance rewrites it.
const latestBloat = 3

// shrinkLatestReports rewrites latest_reports (VACUUM FULL) when it has
// grown past latestBloat times the size its live rows take at its fill
// factor. Its updates are HOT and its pages pruned as they are read
// (migration 0005), but a page is pruned only of versions no transaction
// can see any more: under a bulk load with long statements beside it (an
// import's batches, rollup compaction), updates overflow onto new pages.
// A 14-day import of 10,000 nodes left it at 50 MB for 6.7 MB of rows,
// and every query of the latest reports reads all of it (aggregate event
// counts: 15 ms, 11.7 ms once rewritten). Plain VACUUM frees the space but
// does not give it back. The rewrite takes an exclusive lock on the table
// for as long as copying the fleet's rows takes (86 ms at 10,000 nodes);
// it does not wait longer than latestLockTimeout (500 ms) for that lock, so that
// it never queues ingest behind a long query.
func shrinkLatestReports(ctx context.Context, conn *pgx.Conn) (bool, error) {
	var size, live int64
	err := conn.QueryRow(ctx, `SELECT pg_relation_size('latest_reports'),
		(SELECT coalesce(sum(pg_column_size(l.*)), 0) FROM latest_reports l)`).Scan(&size, &live)
	if err != nil {
		return false, err
	}
	// at fill factor 50 the rows take twice their size; a few pages
	// always
	if size <= latestBloat*(2*live+8*8192) {
		return false, nil
	}
	if _, err := conn.Exec(ctx, "SET lock_timeout = '"+latestLockTimeout+"'"); err != nil {
		return false, err
	}
	_, err = conn.Exec(ctx, "VACUUM (FULL, ANALYZE) latest_reports")
	if _, rerr := conn.Exec(context.Background(), "RESET lock_timeout"); err == nil {
		err = rerr
	}
	if isLockTimeout(err) {
		return false, nil // busy: next time
	}
	return err == nil, err
}

// latestLockTimeout bounds the wait for latest_reports' exclusive lock.
const latestLockTimeout = "500ms"
