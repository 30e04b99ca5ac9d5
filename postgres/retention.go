package postgres

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"

	"reportdb/schema"
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
//   - the day partitions of events, report data and reports entirely
//     older than cutoff are detached with DETACH PARTITION ... CONCURRENTLY
//     (which waits for the statements using them, and blocks none), then
//     their rows are subtracted from the rollups (and nodes' latest report
//     pointers into them cleared) and the detached tables dropped, in one
//     transaction that only they take part in, a day's events first and
//     its reports last;
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

	deleted, err := db.dropExpiredPartitions(ctx, conn.Conn(), cutoff)
	if err != nil {
		return deleted, err
	}
	n, err := deleteReportBatches(ctx, conn.Conn(), "producer_timestamp < $1", cutoff)
	deleted += n
	if err != nil {
		return deleted, err
	}
	return deleted, db.afterDelete(ctx, conn.Conn(), deleted)
}

// deleteReportBatches deletes the reports for which where (a condition on
// reports with one argument, $1) holds, retentionBatch at a time, each
// batch with its events, data and rollup deltas in one statement.
func deleteReportBatches(ctx context.Context, conn *pgx.Conn, where string, arg any) (deleted int64, err error) {
	for {
		var n int64
		done := store.TimeStep(ctx, "batches")
		if err := retryTransient(ctx, 2, func() error {
			return conn.QueryRow(ctx, `WITH gone AS (DELETE FROM reports WHERE id IN
		    (SELECT id FROM reports WHERE `+where+` LIMIT $2)
		  RETURNING id, certname, producer_timestamp, type, environment, status, noop, noop_pending, cached_catalog_status),
		cn AS (UPDATE certnames SET latest_report_id = NULL WHERE latest_report_id IN (SELECT id FROM gone)),
		lrep AS (DELETE FROM latest_reports WHERE certname IN (SELECT certname FROM gone) AND id IN (SELECT id FROM gone)),
		ev AS (DELETE FROM resource_events WHERE report_id IN (SELECT id FROM gone)
		  RETURNING report_id, timestamp, status, resource_type, resource_title),
		data AS (DELETE FROM report_data WHERE id IN (SELECT id FROM gone)),
		vf AS (`+raiseValidFrom("(SELECT max(timestamp) FROM ev)")+`),
		`+schema.CTEs("rr", schema.ReportRollupDeltas("gone", -1))+`,
		er AS (`+schema.EventRollupDelta(`(SELECT ev.timestamp, ev.status, ev.resource_type, g.environment
		  FROM ev JOIN gone g ON g.id = ev.report_id)`, -1)+`),
		fr AS (`+schema.FailureRollupDelta("ev", -1)+`)
		SELECT count(*) FROM gone`, arg, retentionBatch).Scan(&n)
		}); err != nil {
			return deleted, err
		}
		done()
		deleted += n
		if n < retentionBatch {
			return deleted, nil
		}
	}
}

// afterDelete drops what no distinct window may read any more and the
// environments no report names, after deleted reports went.
func (db *DB) afterDelete(ctx context.Context, conn *pgx.Conn, deleted int64) error {
	// resource_latest has no index on ts (migration 0008): the stale rows
	// are found by a scan (in chunks), run when this run deleted something
	// or this process has not run it yet (another instance's deletes)
	db.mu.Lock()
	stale := deleted > 0 || !db.staleChecked
	db.mu.Unlock()
	if stale {
		if err := dropStaleLatest(ctx, conn); err != nil {
			return err
		}
		db.mu.Lock()
		db.staleChecked = true
		db.mu.Unlock()
	}
	defer store.TimeStep(ctx, "environments")()
	_, err := conn.Exec(ctx, `DELETE FROM environments
		WHERE name NOT IN (`+schema.StoredEnvironments()+`)`)
	return err
}

// retryTransient runs fn, a statement or transaction of its own, again
// (retries times at most, waiting 10 ms more each time) when it fails
// with a deadlock or serialization failure: PostgreSQL rolled it back as a
// whole, so it changed nothing. Retention's batch delete locks reports,
// certnames and latest_reports rows in no particular order, and an ingest
// batch storing a duplicate of a report being deleted waits for it while
// holding its node's certname row, which PostgreSQL breaks by failing one
// of them.
func retryTransient(ctx context.Context, retries int, fn func() error) error {
	err := fn()
	for attempt := 0; attempt < retries && isTransient(err); attempt++ {
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(attempt+1) * 10 * time.Millisecond):
		}
		err = fn()
	}
	return err
}

// dropExpiredPartitions detaches and drops the day partitions entirely
// older than cutoff, subtracting their events from the rollups. A detach
// left pending by an interrupted run is finalized, and a day table that
// an interrupted run detached but did not drop (its transaction failed:
// a deadlock with ingest, a lost connection, shutdown) is dropped now,
// whatever the cutoff: its rows are no longer visible, but the rollups
// still count them until its transaction commits.
func (db *DB) dropExpiredPartitions(ctx context.Context, conn *pgx.Conn, cutoff int64) (deleted int64, err error) {
	// the parents' partitions, and the standalone tables named as a day
	// of theirs in their schema (detached, not dropped)
	rows, err := conn.Query(ctx, `SELECT p.relname, c.relname, i.inhdetachpending, true FROM pg_inherits i
		JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
		WHERE p.relname IN ('reports', 'resource_events', 'report_data')
		UNION ALL
		SELECT p.relname, c.relname, false, false FROM pg_class p JOIN pg_class c
		  ON c.relnamespace = p.relnamespace AND c.relname ~ ('^' || p.relname || '_[0-9]{8}$')
		WHERE p.relname IN ('reports', 'resource_events', 'report_data') AND p.relkind = 'p'
		  AND c.relkind = 'r' AND NOT c.relispartition
		ORDER BY 2`)
	if err != nil {
		return deleted, err
	}
	var drop []dayTable
	var dropped []int64 // the days whose reports were dropped
	for rows.Next() {
		var p dayTable
		if err := rows.Scan(&p.parent, &p.name, &p.pending, &p.attached); err != nil {
			rows.Close()
			return deleted, err
		}
		d, ok := partitionDay(p.parent, p.name)
		if ok && ((d+1)*dayMs <= cutoff || !p.attached) {
			p.day = d
			drop = append(drop, p)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return deleted, err
	}
	// a day's events go first (their rollup deltas read their reports'
	// environment), its reports last
	order := map[string]int{"resource_events": 0, "report_data": 1, "reports": 2}
	sort.SliceStable(drop, func(i, j int) bool {
		if drop[i].day != drop[j].day {
			return drop[i].day < drop[j].day
		}
		return order[drop[i].parent] < order[drop[j].parent]
	})
	for _, p := range drop {
		// this instance must not insert into the day any more (a report
		// older than the cutoff arriving now finds no partition, and its
		// batch recreates one: a later run deletes it)
		db.mu.Lock()
		delete(db.partitions, p.day)
		db.mu.Unlock()
		tab := pgx.Identifier{p.name}.Sanitize()
		detached := store.TimeStep(ctx, "detach "+p.parent)
		if p.attached {
			detach := "ALTER TABLE " + p.parent + " DETACH PARTITION " + tab + " CONCURRENTLY"
			if p.pending {
				detach = "ALTER TABLE " + p.parent + " DETACH PARTITION " + tab + " FINALIZE"
			}
			if _, err := conn.Exec(ctx, detach); err != nil {
				return deleted, fmt.Errorf("detach partition %s: %w", p.name, err)
			}
		}
		detached()
		dropDone := store.TimeStep(ctx, "drop "+p.parent)
		// the transaction locks certnames and latest_reports rows, which
		// ingest locks too: run again when PostgreSQL breaks a deadlock
		// by failing it (it changed nothing then)
		var n int64
		if err := retryTransient(ctx, 2, func() (err error) {
			n, err = dropDetached(ctx, conn, p)
			return err
		}); err != nil {
			return deleted, err
		}
		dropDone()
		if p.parent == "reports" {
			deleted += n
			dropped = append(dropped, p.day)
		}
	}
	if len(dropped) > 0 {
		// the keys of the dropped days' reports (migration 0016), and of
		// days dropped by a run that failed before this point: those of
		// every day before the first one kept, in a statement of its own
		// (a range of report_keys' index by day, migration 0017; it holds
		// no lock that ingest or queries wait for). A report older than
		// the cutoff stored while this runs may lose its keys with them;
		// the next run deletes it.
		kept, _ := idRange(dayIndex(cutoff))
		done := store.TimeStep(ctx, "report_keys")
		if _, err := conn.Exec(ctx, `DELETE FROM report_keys WHERE (id >> 32) < $1`, kept>>32); err != nil {
			return deleted, fmt.Errorf("keys of dropped reports: %w", err)
		}
		done()
		done = store.TimeStep(ctx, "report_keys_archive")
		// and their copies in the archive (migration 0020), which has no
		// index by day: a scan of it, once a day
		if _, err := conn.Exec(ctx, `DELETE FROM report_keys_archive WHERE id < $1`, kept); err != nil {
			return deleted, fmt.Errorf("archived keys of dropped reports: %w", err)
		}
		done()
		if _, err := conn.Exec(ctx, `DELETE FROM report_keys_late WHERE day < $1`, kept>>32); err != nil {
			return deleted, fmt.Errorf("late marks of dropped days: %w", err)
		}
	}
	return deleted, nil
}

// dayTable is a day table of a partitioned table: attached (a partition,
// its detach pending when an interrupted DETACH ... CONCURRENTLY left it
// so) or detached and not yet dropped.
type dayTable struct {
	parent, name      string
	pending, attached bool
	day               int64
}

// beforeDropCommit, when set (tests), is called before the transaction
// that drops a detached day table commits; an error fails it.
var beforeDropCommit func(table string) error

// dropDetached subtracts the rows of p, a detached day table, from the
// rollups (and clears nodes' latest report pointers into it) and drops
// it, in one transaction. It returns the reports p held (reports only).
func dropDetached(ctx context.Context, conn *pgx.Conn, p dayTable) (n int64, err error) {
	tab := pgx.Identifier{p.name}.Sanitize()
	tx, err := conn.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback(context.Background())
	if p.parent == "resource_events" {
		// detached, the table takes no more rows: the deltas subtract
		// exactly what the DROP removes
		if _, err := tx.Exec(ctx, raiseValidFrom("(SELECT max(timestamp) FROM "+tab+")")); err != nil {
			return 0, fmt.Errorf("distinct state of partition %s: %w", p.name, err)
		}
		if _, err := tx.Exec(ctx, schema.EventRollupDelta(`(SELECT e.timestamp, e.status, e.resource_type,
			r.environment FROM `+tab+` e JOIN reports r ON r.id = e.report_id)`, -1)); err != nil {
			return 0, fmt.Errorf("rollups of partition %s: %w", p.name, err)
		}
		if _, err := tx.Exec(ctx, schema.FailureRollupDelta(tab, -1)); err != nil {
			return 0, fmt.Errorf("failure rollup of partition %s: %w", p.name, err)
		}
		// and its span of event timestamps (migration 0012)
		lo, _ := idRange(p.day)
		if _, err := tx.Exec(ctx, `DELETE FROM event_time_bounds WHERE day = $1::bigint >> 32`, lo); err != nil {
			return 0, fmt.Errorf("event time span of partition %s: %w", p.name, err)
		}
	}
	if p.parent == "reports" {
		// the same for the day's reports; nodes whose latest report
		// goes keep none until a newer one arrives (as in PuppetDB)
		lo, hi := idRange(p.day)
		if err := tx.QueryRow(ctx, "SELECT count(*) FROM "+tab).Scan(&n); err != nil {
			return 0, fmt.Errorf("count partition %s: %w", p.name, err)
		}
		for _, delta := range schema.ReportRollupDeltas("(SELECT * FROM "+tab+")", -1) {
			if _, err := tx.Exec(ctx, delta); err != nil {
				return 0, fmt.Errorf("rollups of partition %s: %w", p.name, err)
			}
		}
		if _, err := tx.Exec(ctx, `UPDATE certnames SET latest_report_id = NULL
			WHERE latest_report_id >= $1 AND latest_report_id < $2`, lo, hi); err != nil {
			return 0, fmt.Errorf("latest reports of partition %s: %w", p.name, err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM latest_reports WHERE id >= $1 AND id < $2`, lo, hi); err != nil {
			return 0, fmt.Errorf("latest reports of partition %s: %w", p.name, err)
		}
		// and its span of start and end times (migration 0015)
		if _, err := tx.Exec(ctx, `DELETE FROM report_time_bounds WHERE day = $1::bigint >> 32`, lo); err != nil {
			return 0, fmt.Errorf("report time span of partition %s: %w", p.name, err)
		}
	}
	if _, err := tx.Exec(ctx, "DROP TABLE "+tab); err != nil {
		return 0, fmt.Errorf("drop partition %s: %w", p.name, err)
	}
	if beforeDropCommit != nil {
		if err := beforeDropCommit(p.name); err != nil {
			return 0, err
		}
	}
	return n, tx.Commit(ctx)
}

// raiseValidFrom renders the UPDATE that moves distinct_state.valid_from
// past newest (an SQL expression: the newest timestamp of the events being
// deleted, NULL for none), in the transaction that deletes them: from then
// on, no window starting at or before a deleted event is answered from
// resource_latest (see query/sqlgen/distinct.go), whose row for a key may
// be a deleted event.
func raiseValidFrom(newest string) string {
	return "UPDATE distinct_state SET valid_from = GREATEST(valid_from, " + newest + " + 1) WHERE " + newest + " IS NOT NULL"
}

// staleLatestPages is how many heap pages of resource_latest one
// statement of dropStaleLatest reads (64 MB at 8 kB a page): each is its
// own transaction, so an ingest storing a newer event of a key being
// deleted waits for one chunk, not for the whole table's scan.
var staleLatestPages int64 = 8192

// dropStaleLatest deletes the resource_latest rows and distinct_rollup
// buckets that no window may read any more (older than valid_from). They
// are only kept out of queries' way by valid_from; this keeps the tables
// from growing with retention. A row an ingest adds meanwhile below
// valid_from is left for the next run.
//
// resource_latest has no index on ts (migration 0008), so its stale rows
// are found by reading the table, staleLatestPages pages (a TID range
// scan) per statement: one DELETE of the whole table held its row locks
// until it had read all of it (1.2-2 s at 10,000 nodes x 14 days, 3.3M
// keys), and an ingest updating one of those keys waited that long. A
// row an update moves behind the chunk being read has a new ts, so it is
// not stale. distinct_rollup's stale buckets are read through its
// (width, bucket) index, one statement per width, not by a scan.
func dropStaleLatest(ctx context.Context, conn *pgx.Conn) error {
	done := store.TimeStep(ctx, "resource_latest")
	var validFrom *int64
	var pages int64
	if err := conn.QueryRow(ctx, `SELECT (SELECT max(valid_from) FROM distinct_state),
		pg_relation_size('resource_latest') / current_setting('block_size')::bigint`).Scan(&validFrom, &pages); err != nil {
		return fmt.Errorf("stale latest rows: %w", err)
	}
	if validFrom == nil {
		done()
		return nil
	}
	for lo := int64(0); lo < pages; lo += staleLatestPages {
		hi := lo + staleLatestPages
		if _, err := conn.Exec(ctx, `DELETE FROM resource_latest
			WHERE ctid >= format('(%s,0)', $1::bigint)::tid AND ctid < format('(%s,0)', $2::bigint)::tid
			AND ts < $3`, lo, hi, *validFrom); err != nil {
			return fmt.Errorf("stale latest rows: %w", err)
		}
	}
	done()
	defer store.TimeStep(ctx, "distinct_rollup")()
	for _, w := range schema.DistinctWidths {
		if _, err := conn.Exec(ctx, `DELETE FROM distinct_rollup
			WHERE width = $1::integer AND bucket <= $2::bigint - $1::integer`, w, *validFrom); err != nil {
			return fmt.Errorf("stale distinct buckets: %w", err)
		}
	}
	return nil
}
