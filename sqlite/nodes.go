package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
)

// DeactivateNode implements store.NodeLifecycle.
func (db *DB) DeactivateNode(ctx context.Context, certname string, ts int64) (done bool, err error) {
	err = db.inWriteTx(ctx, func(tx *sql.Tx) error {
		var latest sql.NullInt64
		err := tx.QueryRowContext(ctx, `SELECT latest_report_timestamp FROM certnames WHERE certname = ?`, certname).Scan(&latest)
		if err != nil && err != sql.ErrNoRows {
			return err
		}
		if latest.Valid && latest.Int64 > ts {
			return nil // a newer report: the command is stale
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO certnames (certname) VALUES (?) ON CONFLICT (certname) DO NOTHING`, certname); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE certnames SET deactivated = ?1
			WHERE certname = ?2 AND (deactivated IS NULL OR deactivated < ?1)`, ts, certname)
		done = err == nil
		return err
	})
	return done, err
}

// ExpireNodes implements store.NodeLifecycle.
func (db *DB) ExpireNodes(ctx context.Context, horizon, now int64) (expired []string, err error) {
	err = db.inWriteTx(ctx, func(tx *sql.Tx) error {
		expired = nil
		rows, err := tx.QueryContext(ctx, `UPDATE certnames SET expired = ?1
			WHERE deactivated IS NULL AND expired IS NULL
			  AND (latest_report_timestamp IS NULL OR latest_report_timestamp < ?2)
			RETURNING certname`, now, horizon)
		if err != nil {
			return err
		}
		expired, err = scanNames(rows)
		return err
	})
	return expired, err
}

// PurgeNodes implements store.NodeLifecycle.
func (db *DB) PurgeNodes(ctx context.Context, horizon int64, limit int) (purged []string, err error) {
	err = db.inWriteTx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT certname FROM certnames
			WHERE deactivated < ?1 OR expired < ?1 ORDER BY certname LIMIT ?2`, horizon, limit)
		if err != nil {
			return err
		}
		if purged, err = scanNames(rows); err != nil || len(purged) == 0 {
			return err
		}
		list, _ := json.Marshal(purged)
		in := "(SELECT value FROM json_each(?1))"
		if _, err := deleteReports(ctx, tx, "r.certname IN "+in, string(list)); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM certnames WHERE certname IN `+in, string(list))
		return err
	})
	return purged, err
}

func scanNames(rows *sql.Rows) ([]string, error) {
	defer rows.Close()
	var names []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		names = append(names, s)
	}
	return names, rows.Err()
}
