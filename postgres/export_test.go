package postgres

import "context"

// SetBeforeDropCommit sets the hook that retention calls before the
// transaction dropping a detached day table commits (nil: none), for the
// tests in package postgres_test.
func SetBeforeDropCommit(f func(table string) error) { beforeDropCommit = f }

// ArchiveKeysThrough archives the keys of the days up to and including
// the day of Unix ms dayMs (ArchiveKeys archives those before today).
func ArchiveKeysThrough(ctx context.Context, db *DB, dayMs int64) (int64, error) {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Release()
	return archiveKeys(ctx, conn.Conn(), dayIndex(dayMs))
}
