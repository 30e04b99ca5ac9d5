package postgres

import (
	"context"
	"github.com/jackc/pgx/v5"

	"reportdb/query/sqlgen"
)

// CompactRollups merges the delta rows of every bucket that has unmerged
// ones into one row per dimension combination (dropping combinations that
// sum to zero), so that reads sum few rows. Each bucket is merged in one
// statement: the rows it deletes are exactly the rows it sums, so a delta
// committed meanwhile is left for the next run, never lost. It returns the
// number of buckets merged.
func (db *DB) CompactRollups(ctx context.Context) (int, error) {
	total := 0
	for _, t := range sqlgen.RollupTables {
		rows, err := db.pool.Query(ctx, "SELECT DISTINCT width, bucket FROM "+t.Table+" WHERE NOT merged")
		if err != nil {
			return total, err
		}
		type bucket struct{ width, bucket int64 }
		var bs []bucket
		for rows.Next() {
			var b bucket
			if err := rows.Scan(&b.width, &b.bucket); err != nil {
				rows.Close()
				return total, err
			}
			bs = append(bs, b)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return total, err
		}
		tab := pgx.Identifier{t.Table}.Sanitize()
		stmt := `WITH d AS (DELETE FROM ` + tab + ` WHERE width = $1 AND bucket = $2 RETURNING *)
			INSERT INTO ` + tab + ` (width, bucket, ` + t.Dims + `, n, merged)
			SELECT width, bucket, ` + t.Dims + `, sum(n), true FROM d
			GROUP BY width, bucket, ` + t.Dims + ` HAVING sum(n) <> 0`
		for _, b := range bs {
			if _, err := db.pool.Exec(ctx, stmt, b.width, b.bucket); err != nil {
				return total, err
			}
			total++
		}
	}
	return total, nil
}
