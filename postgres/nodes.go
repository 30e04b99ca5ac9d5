package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"reportdb/store"
)

// activateNodes runs after storeStatement in its batch's transaction: a
// report newer than its node's deactivation or expiry makes the node
// active again, also when the report was a duplicate (as in PuppetDB).
// The certname rows are already locked by storeStatement's upsert, in
// certname order.
const activateNodes = `UPDATE certnames c SET deactivated = NULL, expired = NULL
  FROM (SELECT certname, max(ts) AS ts FROM unnest($1::text[], $2::bigint[]) AS t(certname, ts)
        GROUP BY certname) a
  WHERE c.certname = a.certname AND (c.deactivated < a.ts OR c.expired < a.ts)`

// DeactivateNode implements store.NodeLifecycle.
func (db *DB) DeactivateNode(ctx context.Context, certname string, ts int64) (bool, error) {
	var done bool
	err := retryStore(ctx, func() error {
		return pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `INSERT INTO certnames (certname) VALUES ($1) ON CONFLICT (certname) DO NOTHING`, certname); err != nil {
				return err
			}
			var latest *int64
			if err := tx.QueryRow(ctx, `SELECT latest_report_timestamp FROM certnames WHERE certname = $1 FOR UPDATE`, certname).Scan(&latest); err != nil {
				return err
			}
			if done = latest == nil || *latest <= ts; !done {
				return nil // a newer report: the command is stale
			}
			_, err := tx.Exec(ctx, `UPDATE certnames SET deactivated = $2
			  WHERE certname = $1 AND (deactivated IS NULL OR deactivated < $2)`, certname, ts)
			return err
		})
	})
	return done, err
}

// ExpireNodes implements store.NodeLifecycle. One instance at a time runs
// it (the retention lock); another gets store.ErrBusy.
func (db *DB) ExpireNodes(ctx context.Context, horizon, now int64) (expired []string, err error) {
	err = db.exclusively(ctx, func(conn *pgxpool.Conn) error {
		return retryTransient(ctx, 2, func() error {
			rows, err := conn.Query(ctx, `UPDATE certnames SET expired = $1
			  WHERE deactivated IS NULL AND expired IS NULL
			    AND (latest_report_timestamp IS NULL OR latest_report_timestamp < $2)
			  RETURNING certname`, now, horizon)
			if err != nil {
				return err
			}
			expired, err = pgx.CollectRows(rows, pgx.RowTo[string])
			return err
		})
	})
	return expired, err
}

// exclusively runs fn on a connection holding the retention lock, which
// one instance at a time holds; store.ErrBusy when another holds it.
func (db *DB) exclusively(ctx context.Context, fn func(conn *pgxpool.Conn) error) error {
	conn, release, got, err := db.lockedConn(ctx, lockRetention, false)
	if err != nil {
		return err
	}
	if !got {
		return store.ErrBusy
	}
	defer release()
	return fn(conn)
}

// PurgeNodes implements store.NodeLifecycle. One instance at a time runs
// it (the retention lock); another gets store.ErrBusy.
func (db *DB) PurgeNodes(ctx context.Context, horizon int64, limit int) (purged []string, err error) {
	err = db.exclusively(ctx, func(conn *pgxpool.Conn) error {
		rows, err := conn.Query(ctx, `SELECT certname FROM certnames
		  WHERE deactivated < $1 OR expired < $1 ORDER BY certname LIMIT $2`, horizon, limit)
		if err != nil {
			return err
		}
		if purged, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil || len(purged) == 0 {
			return err
		}
		deleted, err := deleteReportBatches(ctx, conn.Conn(), "certname = ANY($1)", purged)
		if err != nil {
			return err
		}
		if err := db.afterDelete(ctx, conn.Conn(), deleted); err != nil {
			return err
		}
		// a report of the node stored meanwhile made it active again: it
		// stays (with that report)
		_, err = conn.Exec(ctx, `DELETE FROM certnames WHERE certname = ANY($1)
		  AND (deactivated < $2 OR expired < $2)`, purged, horizon)
		return err
	})
	if err != nil {
		return nil, err
	}
	return purged, nil
}
