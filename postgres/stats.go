package postgres

import "github.com/jackc/pgx/v5/pgxpool"

// PoolStat returns a snapshot of the connection pool's statistics (for
// metrics).
func (db *DB) PoolStat() *pgxpool.Stat {
	return db.pool.Stat()
}
