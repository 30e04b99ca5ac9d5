package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"reportdb/store"
)

// DeleteReportsBefore implements store.Backend: reports whose
// producer_timestamp is older than cutoff go, with their events. Event
// partitions entirely older than cutoff are dropped whole; only the
// partition holding the cutoff is deleted from row by row. A node whose
// latest report goes keeps no latest report until a newer one arrives
// (as in PuppetDB). While one instance runs it, others get store.ErrBusy.
func (db *DB) DeleteReportsBefore(ctx context.Context, cutoff int64) (int64, error) {
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback(context.Background())
	var got bool
	if err := tx.QueryRow(ctx, "SELECT pg_try_advisory_xact_lock($1)", lockRetention).Scan(&got); err != nil {
		return 0, err
	}
	if !got {
		return 0, store.ErrBusy
	}
	// serialise with partition creation (DROP takes locks on the parent)
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", lockPartitions); err != nil {
		return 0, err
	}
	if _, err := tx.Exec(ctx, `UPDATE certnames SET latest_report_id = NULL
		WHERE latest_report_id IS NOT NULL AND latest_report_timestamp < $1`, cutoff); err != nil {
		return 0, err
	}
	// whole days of events and report data go as partitions
	rows, err := tx.Query(ctx, `SELECT p.relname, c.relname FROM pg_inherits i
		JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
		WHERE p.relname IN ('resource_events', 'report_data')`)
	if err != nil {
		return 0, err
	}
	var drop []string
	var dropped []int64
	for rows.Next() {
		var parent, name string
		if err := rows.Scan(&parent, &name); err != nil {
			rows.Close()
			return 0, err
		}
		d, ok := partitionDay(parent, name)
		if !ok {
			continue
		}
		if (d+1)*dayMs <= cutoff {
			drop = append(drop, name)
			if parent == "resource_events" {
				dropped = append(dropped, d)
			}
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	for _, name := range drop {
		if _, err := tx.Exec(ctx, "DROP TABLE "+pgx.Identifier{name}.Sanitize()); err != nil {
			return 0, fmt.Errorf("drop partition %s: %w", name, err)
		}
	}
	// then the reports, and the events of the expired reports of the day
	// that holds the cutoff (the only partition with expired rows left)
	lo, _ := idRange(dayIndex(cutoff))
	var deleted int64
	if err := tx.QueryRow(ctx, `WITH gone AS (DELETE FROM reports WHERE producer_timestamp < $1 RETURNING id),
		ev AS (DELETE FROM resource_events WHERE report_id IN (SELECT id FROM gone WHERE id >= $2)),
		data AS (DELETE FROM report_data WHERE id IN (SELECT id FROM gone WHERE id >= $2))
		SELECT count(*) FROM gone`, cutoff, lo).Scan(&deleted); err != nil {
		return 0, err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM environments e
		WHERE NOT EXISTS (SELECT 1 FROM reports r WHERE r.environment = e.name)`); err != nil {
		return 0, err
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, err
	}
	db.mu.Lock()
	for _, d := range dropped {
		delete(db.partitions, d)
	}
	db.mu.Unlock()
	return deleted, nil
}
