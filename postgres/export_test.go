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

// SetOnStoreRetry sets the hook called with the error of each attempt of a
// write that is retried (nil: none), for the tests in package
// postgres_test.
func SetOnStoreRetry(f func(err error)) { onStoreRetry = f }

// TransientReason is transientReason, for the tests in package
// postgres_test.
func TransientReason(err error) (string, bool) { return transientReason(err) }

// PartitionName is partitionName for the day of Unix ms ms.
func PartitionName(parent string, ms int64) string { return partitionName(parent, dayIndex(ms)) }
