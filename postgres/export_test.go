package postgres

// SetBeforeDropCommit sets the hook that retention calls before the
// transaction dropping a detached day table commits (nil: none), for the
// tests in package postgres_test.
func SetBeforeDropCommit(f func(table string) error) { beforeDropCommit = f }
