package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// lockKeys is the advisory lock the trigger of report_keys holds shared
// while it reads report_keys_merge.archiving (migration 0020), and
// ArchiveKeys takes exclusively once it has raised it.
const lockKeys int64 = 0x726462_05

// keysLockTimeout bounds ArchiveKeys' wait for lockKeys: the wait is for
// the ingest transactions in flight (a batch's, milliseconds; an import's
// larger ones, up to a second or so), and holds off new ones meanwhile,
// once a day; past it the run fails and the next one tries again.
const keysLockTimeout = "2s"

// ArchiveKeys copies the keys of the reports of the days before today that
// are not archived yet from report_keys to report_keys_archive (migration
// 0020), so that lookups by hash or configuration version read one index
// for them, and returns how many keys it copied. One instance at a time:
// it holds the retention lock (as Maintain, which calls it); when another
// instance holds it, it does nothing.
func (db *DB) ArchiveKeys(ctx context.Context) (int64, error) {
	conn, release, got, err := db.lockedConn(ctx, lockRetention, false)
	if err != nil || !got {
		return 0, err
	}
	defer release()
	return archiveKeys(ctx, conn.Conn(), lastEndedDay())
}

// lastEndedDay is the day (as dayIndex) before today: the last day whose
// keys ArchiveKeys and Maintain archive.
func lastEndedDay() int64 { return dayIndex(time.Now().UnixMilli()) - 1 }

// archiveKeys archives the keys of the days up to and including day
// through (a day index, as dayIndex), when they are not yet: it raises
// archiving, so that the trigger marks the days of reports stored into
// them from then on (report_keys_late); waits, holding lockKeys
// exclusively, until every transaction that may have read the old value
// has ended (new ones wait meanwhile, for as long as the longest of those
// takes); then copies the keys of the days between the old merged and
// through, in key order, and raises merged, in one transaction, which
// lookups see whole or not at all. An interrupted run leaves archiving
// raised (the days between merged and archiving are read from report_keys
// by lookups, and copied by the next run). Then it archives the marked
// days again (archiveLateKeys), and vacuums the archive if it added keys.
func archiveKeys(ctx context.Context, conn *pgx.Conn, through int64) (int64, error) {
	lo, _ := idRange(through)
	upto := lo >> 32
	var archiving, merged int64
	if err := conn.QueryRow(ctx, `SELECT archiving, merged FROM report_keys_merge`).Scan(&archiving, &merged); err != nil {
		return 0, fmt.Errorf("archived days: %w", err)
	}
	var n int64
	if merged < upto {
		if archiving < upto {
			if _, err := conn.Exec(ctx, `UPDATE report_keys_merge SET archiving = $1`, upto); err != nil {
				return 0, fmt.Errorf("archiving days: %w", err)
			}
		}
		if err := waitKeyWriters(ctx, conn); err != nil {
			return 0, err
		}
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) (err error) {
			if n, err = copyKeys(ctx, tx, merged, upto); err != nil {
				return err
			}
			_, err = tx.Exec(ctx, `UPDATE report_keys_merge SET merged = $1`, upto)
			return err
		})
		if err != nil {
			return n, err
		}
	}
	late, err := archiveLateKeys(ctx, conn)
	n += late
	if err != nil || n == 0 {
		return n, err
	}
	// the new rows all-visible (index-only lookups) and counted
	if _, err := conn.Exec(ctx, "VACUUM (ANALYZE) report_keys_archive"); err != nil {
		return n, fmt.Errorf("vacuum archived keys: %w", err)
	}
	return n, nil
}

// copyKeys copies the keys of the days in (after, upto] (ids >> 32) from
// report_keys to the archive, in key order (so that the archive's index is
// written page after page), as one row each whatever is there already,
// and returns how many it added.
func copyKeys(ctx context.Context, tx pgx.Tx, after, upto int64) (int64, error) {
	tag, err := tx.Exec(ctx, `INSERT INTO report_keys_archive (key, id)
		SELECT key, id FROM report_keys WHERE (id >> 32) > $1 AND (id >> 32) <= $2
		ORDER BY key, id ON CONFLICT DO NOTHING`, after, upto)
	if err != nil {
		return 0, fmt.Errorf("archive keys: %w", err)
	}
	return tag.RowsAffected(), nil
}

// archiveLateKeys copies the keys of each archived day marked in
// report_keys_late (reports stored into it since it was archived) to the
// archive again, and removes its mark in the same transaction if the mark
// still has the generation read first: a batch that marked the day since
// (committed before the copy or not) gave it a new one, so the day stays
// marked and a lookup reads it from report_keys until a later run. It
// returns how many keys it added.
func archiveLateKeys(ctx context.Context, conn *pgx.Conn) (int64, error) {
	rows, err := conn.Query(ctx, `SELECT l.day, l.gen FROM report_keys_late l, report_keys_merge m
		WHERE l.day <= m.merged ORDER BY l.day`)
	if err != nil {
		return 0, fmt.Errorf("late days: %w", err)
	}
	type mark struct{ day, gen int64 }
	marks, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (mark, error) {
		var m mark
		return m, r.Scan(&m.day, &m.gen)
	})
	if err != nil {
		return 0, fmt.Errorf("late days: %w", err)
	}
	var n int64
	for _, m := range marks {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			added, err := copyKeys(ctx, tx, m.day-1, m.day)
			n += added
			if err != nil {
				return err
			}
			_, err = tx.Exec(ctx, `DELETE FROM report_keys_late WHERE day = $1 AND gen = $2`, m.day, m.gen)
			return err
		})
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// waitKeyWriters returns once every transaction that held lockKeys
// (shared, the trigger of report_keys) when it was called has ended.
func waitKeyWriters(ctx context.Context, conn *pgx.Conn) error {
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL lock_timeout = '"+keysLockTimeout+"'"); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", lockKeys); err != nil {
			return fmt.Errorf("wait for the writers of keys: %w", err)
		}
		return nil
	})
}
