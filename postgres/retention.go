package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"reportdb/query/sqlgen"
	"reportdb/store"
)

// retentionBatch is how many reports one retention statement deletes: each
// batch is its own short transaction, so ingest and queries never wait for
// a whole day's delete.
const retentionBatch = 2000

// DeleteReportsBefore implements store.Backend: reports whose
// producer_timestamp is older than cutoff go, with their events. While
// one instance runs it, others get store.ErrBusy.
//
// It never holds a lock that stops ingest or queries for long:
//   - the day partitions of events and report data entirely older than
//     cutoff are detached with DETACH PARTITION ... CONCURRENTLY (which
//     waits for the statements using them, and blocks none), then their
//     events are subtracted from the rollups and the detached tables
//     dropped, in one transaction that only they take part in;
//   - then the expired reports are deleted retentionBatch at a time, each
//     batch with the events and data of the cutoff day's partition that
//     belong to it, and its rollup deltas, in one statement.
//
// Between the two steps, the expiring reports have no events or data, and
// for the length of one batch the rollups and the rows may disagree about
// the expiring rows; nothing that is kept is affected. A node whose
// latest report goes keeps no latest report until a newer one arrives (as
// in PuppetDB).
func (db *DB) DeleteReportsBefore(ctx context.Context, cutoff int64) (int64, error) {
	conn, release, got, err := db.lockedConn(ctx, lockRetention, false)
	if err != nil {
		return 0, err
	}
	if !got {
		return 0, store.ErrBusy
	}
	defer release()

	if err := db.dropExpiredPartitions(ctx, conn.Conn(), cutoff); err != nil {
		return 0, err
	}
	var deleted int64
	for {
		var n int64
		if err := conn.QueryRow(ctx, `WITH gone AS (DELETE FROM reports WHERE id IN
		    (SELECT id FROM reports WHERE producer_timestamp < $1 LIMIT $2)
		  RETURNING id, producer_timestamp, type, environment, status, noop, noop_pending, cached_catalog_status),
		cn AS (UPDATE certnames SET latest_report_id = NULL WHERE latest_report_id IN (SELECT id FROM gone)),
		ev AS (DELETE FROM resource_events WHERE report_id IN (SELECT id FROM gone)
		  RETURNING report_id, timestamp, status, resource_type),
		data AS (DELETE FROM report_data WHERE id IN (SELECT id FROM gone)),
		rr AS (`+sqlgen.ReportRollupDelta("gone", -1)+`),
		er AS (`+sqlgen.EventRollupDelta(`(SELECT ev.timestamp, ev.status, ev.resource_type, g.environment
		  FROM ev JOIN gone g ON g.id = ev.report_id)`, -1)+`)
		SELECT count(*) FROM gone`, cutoff, retentionBatch).Scan(&n); err != nil {
			return deleted, err
		}
		deleted += n
		if n < retentionBatch {
			break
		}
	}
	if _, err := conn.Exec(ctx, `DELETE FROM environments e
		WHERE NOT EXISTS (SELECT 1 FROM reports r WHERE r.environment = e.name)`); err != nil {
		return deleted, err
	}
	return deleted, nil
}

// dropExpiredPartitions detaches and drops the day partitions entirely
// older than cutoff, subtracting their events from the rollups. A detach
// left pending by an interrupted run is finalized.
func (db *DB) dropExpiredPartitions(ctx context.Context, conn *pgx.Conn, cutoff int64) error {
	rows, err := conn.Query(ctx, `SELECT p.relname, c.relname, i.inhdetachpending FROM pg_inherits i
		JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
		WHERE p.relname IN ('resource_events', 'report_data') ORDER BY c.relname`)
	if err != nil {
		return err
	}
	type part struct {
		parent, name string
		pending      bool
		day          int64
	}
	var drop []part
	for rows.Next() {
		var p part
		if err := rows.Scan(&p.parent, &p.name, &p.pending); err != nil {
			rows.Close()
			return err
		}
		d, ok := partitionDay(p.parent, p.name)
		if ok && (d+1)*dayMs <= cutoff {
			p.day = d
			drop = append(drop, p)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, p := range drop {
		// this instance must not insert into the day any more (a report
		// older than the cutoff arriving now finds no partition, and its
		// batch recreates one: a later run deletes it)
		db.mu.Lock()
		delete(db.partitions, p.day)
		db.mu.Unlock()
		tab := pgx.Identifier{p.name}.Sanitize()
		detach := "ALTER TABLE " + p.parent + " DETACH PARTITION " + tab + " CONCURRENTLY"
		if p.pending {
			detach = "ALTER TABLE " + p.parent + " DETACH PARTITION " + tab + " FINALIZE"
		}
		if _, err := conn.Exec(ctx, detach); err != nil {
			return fmt.Errorf("detach partition %s: %w", p.name, err)
		}
		tx, err := conn.Begin(ctx)
		if err != nil {
			return err
		}
		if p.parent == "resource_events" {
			// detached, the table takes no more rows: the deltas subtract
			// exactly what the DROP removes
			if _, err := tx.Exec(ctx, sqlgen.EventRollupDelta(`(SELECT e.timestamp, e.status, e.resource_type,
				r.environment FROM `+tab+` e JOIN reports r ON r.id = e.report_id)`, -1)); err != nil {
				tx.Rollback(ctx)
				return fmt.Errorf("rollups of partition %s: %w", p.name, err)
			}
		}
		if _, err := tx.Exec(ctx, "DROP TABLE "+tab); err != nil {
			tx.Rollback(ctx)
			return fmt.Errorf("drop partition %s: %w", p.name, err)
		}
		if err := tx.Commit(ctx); err != nil {
			return err
		}
	}
	return nil
}
