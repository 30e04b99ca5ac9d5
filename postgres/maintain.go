package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"

	"reportdb/schema"
)

// Maintain implements store.Maintainer: it archives the keys of the days
// that have ended (ArchiveKeys), and VACUUMs (and ANALYZEs) the day
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
	// a failure here (the wait for the writers of keys timed out: a long
	// import batch) leaves the days to the next run; the lookups read them
	// from report_keys meanwhile
	if n, err := archiveKeys(ctx, conn.Conn(), lastEndedDay()); err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		slog.Warn("archiving the keys of ended days failed; the next maintenance retries", "err", err)
	} else if n > 0 {
		vacuumed = append(vacuumed, fmt.Sprintf("report_keys_archive (%d keys archived)", n))
	}

	rows, err := conn.Query(ctx, `SELECT s.relname, coalesce(p.relname, '')
		FROM pg_stat_user_tables s
		LEFT JOIN pg_inherits i ON i.inhrelid = s.relid
		LEFT JOIN pg_class p ON p.oid = i.inhparent
		WHERE (s.n_ins_since_vacuum > 0 OR s.n_dead_tup > 0)
		  AND (p.relname IN ('reports', 'resource_events', 'report_data') OR s.relname IN ('certnames', 'latest_reports', 'latest_rollup', 'report_rollup', 'report_type_rollup', 'event_rollup', 'failure_rollup',
		    'resource_latest', 'distinct_rollup', 'report_keys', 'report_keys_archive'))
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
	for _, t := range pointerTables {
		if shrunk, err := shrinkTable(ctx, conn.Conn(), t, maintainLockTimeout); err != nil {
			return vacuumed, err
		} else if shrunk {
			vacuumed = append(vacuumed, t+" (rewritten)")
		}
	}
	return vacuumed, nil
}

// pointerTables hold a row per node, updated by every report of the node:
// latest_reports (the copy of its latest report) and certnames (its
// latest-report pointer). Maintenance and ShrinkAfterLoad rewrite them
// (VACUUM FULL, shrinkTable) when they have grown past bloatFactor times
// the size their live rows take at their fill factor. Their updates are
// HOT and their pages pruned as they are read (migrations 0005 and 0013),
// but a page is pruned only of versions no transaction can see any more:
// under a bulk load with long statements beside it (an import's batches,
// rollup compaction), updates overflow onto new pages. A 14-day import of
// 10,000 nodes left latest_reports at 50 MB for 6.7 MB of rows, and every
// query of the latest reports reads all of it (aggregate event counts:
// 15 ms, 11.7 ms once rewritten); it left certnames, then at fill factor
// 100, at 77 MB for 10,000 rows (5 MB after the 1-day import). Plain
// VACUUM frees the space but does not give it back. The rewrite takes an
// exclusive lock on the table for as long as copying the fleet's rows
// takes (86 ms for latest_reports at 10,000 nodes); maintenance does not
// wait longer than maintainLockTimeout for that lock, so that it never
// queues ingest behind a long query.
var pointerTables = []string{"latest_reports", "certnames"}

// bloatFactor is how many times its compact size a table may grow before
// it is rewritten (pointerTables by maintenance, every table an import
// wrote to after the import).
const bloatFactor = 3

// maintainLockTimeout bounds maintenance's wait for a table's exclusive
// lock.
const maintainLockTimeout = "500ms"

// shrinkTable rewrites table when its heap is over bloatFactor times what
// its live rows take (estimated from the statistics: reltuples rows of
// their average width plus the tuple header, at the table's fill factor).
// A table without statistics is left alone. It gives up, without error,
// when the exclusive lock is not granted within lockTimeout.
func shrinkTable(ctx context.Context, conn *pgx.Conn, table, lockTimeout string) (bool, error) {
	var size int64
	var rows, width *float64
	var fill *int
	err := conn.QueryRow(ctx, `SELECT pg_relation_size(c.oid), nullif(c.reltuples, -1)::float8,
		(SELECT sum(s.avg_width)::float8 FROM pg_stats s WHERE s.schemaname = n.nspname AND s.tablename = c.relname),
		(SELECT substr(o, 12)::int FROM unnest(c.reloptions) o WHERE o LIKE 'fillfactor=%')
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.oid = to_regclass($1)`, table).Scan(&size, &rows, &width, &fill)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && (rows == nil || width == nil) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	ff := 100.0
	if fill != nil {
		ff = float64(*fill)
	}
	// 24 bytes of tuple header and 4 of line pointer per row; a few pages
	// always
	compact := *rows*(*width+28)*100/ff + 8*8192
	if float64(size) <= bloatFactor*compact {
		return false, nil
	}
	if _, err := conn.Exec(ctx, "SET lock_timeout = '"+lockTimeout+"'"); err != nil {
		return false, err
	}
	_, err = conn.Exec(ctx, "VACUUM (FULL, ANALYZE) "+pgx.Identifier{table}.Sanitize())
	if _, rerr := conn.Exec(context.Background(), "RESET lock_timeout"); err == nil {
		err = rerr
	}
	if isLockTimeout(err) {
		return false, nil // busy: next time
	}
	return err == nil, err
}

// ShrinkAfterLoad rewrites the tables a bulk load leaves bloated: the
// rollups, whose deltas pile up faster than compaction merges them during
// a long import (after a 14-day import of 10,000 nodes distinct_rollup
// held 1.9M merged rows in 3.7 GB, and every later merge touched pages all
// over it: 57,000 heap blocks read for a probe of 29,000 reports), and
// pointerTables (see there). Each rewrite locks its table exclusively
// for as long as it takes to copy its live rows (ingest and the queries
// of that table wait; seconds for a large fleet's rollups), and waits at
// most 5 s for the lock. Each table is analyzed first. It returns the
// tables rewritten.
func (db *DB) ShrinkAfterLoad(ctx context.Context) ([]string, error) {
	conn, release, _, err := db.lockedConn(ctx, lockRetention, true)
	if err != nil {
		return nil, err
	}
	defer release()
	var done []string
	tables := append([]string(nil), pointerTables...)
	for _, t := range schema.RollupTables {
		tables = append(tables, t.Table)
	}
	for _, t := range tables {
		// the estimate reads the statistics, which tables only vacuumed
		// (the rollups, by compaction) do not have
		if _, err := conn.Exec(ctx, "ANALYZE "+pgx.Identifier{t}.Sanitize()); err != nil {
			return done, err
		}
		shrunk, err := shrinkTable(ctx, conn.Conn(), t, "5s")
		if err != nil {
			return done, err
		}
		if shrunk {
			done = append(done, t)
		}
	}
	return done, nil
}
