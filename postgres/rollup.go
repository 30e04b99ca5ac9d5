package postgres

import (
	"context"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"reportdb/schema"
)

// CompactRollups merges the delta rows of every bucket that has unmerged
// ones into the bucket's merged rows, one per dimension combination, so
// that reads sum few rows. Each bucket is merged in one statement, in
// place: it deletes the bucket's deltas, adds their sums to the merged rows
// of their combinations (inserting those not there yet), and so writes
// only the deltas and the merged rows they change; the rows it deletes are
// exactly the rows it sums, so a delta committed meanwhile is left for the
// next run, never lost. Merged rows that come to sum to zero are deleted.
// One instance compacts at a time (an advisory lock, waited for: a run
// that starts while another is merging then merges what that one left, so
// that a final compaction, such as an import's, never returns with deltas
// unmerged): the in-place merge relies on at most one merged row per
// combination and bucket, which two merges of the same bucket at once could
// break. It returns the number of buckets merged.
//
// It used to delete every row of the bucket and insert the sums, so a
// merge of a few new deltas rewrote the whole bucket: a 14-day import of
// 10,000 nodes, where old buckets keep receiving deltas, left
// distinct_rollup with 61.6M dead rows beside 1.9M live ones.
func (db *DB) CompactRollups(ctx context.Context) (int, error) {
	conn, release, got, err := db.lockedConn(ctx, lockCompact, true)
	if err != nil || !got {
		return 0, err
	}
	defer release()
	total := 0
	for _, t := range schema.RollupTables {
		rows, err := conn.Query(ctx, "SELECT DISTINCT width, bucket FROM "+t.Table+" WHERE NOT merged")
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
		merge, zero := mergeStatements(t)
		for _, b := range bs {
			if err := mergeBucket(ctx, conn.Conn(), merge, zero, b.width, b.bucket); err != nil {
				return total, err
			}
			total++
		}
		if len(bs) > 0 {
			if err := db.vacuumRollup(ctx, t.Table); err != nil {
				return total, err
			}
		}
	}
	return total, nil
}

// mergeStatements renders t's merge of a bucket's deltas ($1 width, $2
// bucket) and the delete of the merged rows that came to zero.
func mergeStatements(t schema.RollupTable) (merge, zero string) {
	tab := pgx.Identifier{t.Table}.Sanitize()
	dims := t.Dims()
	sDims := "s." + strings.Join(t.Cols, ", s.")
	// d: the deltas, s: their sums per combination, u: the merged rows
	// the sums are added to; the sums of combinations without one are
	// inserted; the statement returns how many merged rows came to zero
	sums := t.List(", ", func(c string) string { return "sum(" + c + ") AS " + c })
	add := t.List(", ", func(c string) string { return c + " = m." + c + " + s." + c })
	sCols := t.List(", ", func(c string) string { return "s." + c })
	nonZero := t.List(" OR ", func(c string) string { return "s." + c + " <> 0" })
	zeroCond := t.List(" AND ", func(c string) string { return c + " = 0" })
	merge = `WITH d AS (DELETE FROM ` + tab + ` WHERE width = $1 AND bucket = $2 AND NOT merged RETURNING *),
			s AS (SELECT ` + dims + `, ` + sums + ` FROM d GROUP BY ` + dims + `),
			u AS (UPDATE ` + tab + ` m SET ` + add + ` FROM s
				WHERE m.width = $1 AND m.bucket = $2 AND m.merged AND ` + t.SameDims("m", "s") + `
				RETURNING m.*),
			i AS (INSERT INTO ` + tab + ` (width, bucket, ` + dims + `, ` + t.List(", ", nil) + `, merged)
				SELECT $1, $2, ` + sDims + `, ` + sCols + `, true FROM s
				WHERE (` + nonZero + `) AND NOT EXISTS (SELECT 1 FROM u WHERE ` + t.SameDims("u", "s") + `))
			SELECT count(*) FROM u WHERE ` + zeroCond
	zero = `DELETE FROM ` + tab + ` WHERE width = $1 AND bucket = $2 AND merged AND ` + zeroCond
	return merge, zero
}

// mergeSettings are mergeBucket's planner settings (see there).
const mergeSettings = "SET LOCAL enable_nestloop = off"

// mergeBucket runs a bucket's merge (and the delete of the merged rows it
// brought to zero) in one transaction, without nested loops.
//
// The planner sees the bucket's deltas through statistics taken when
// (nearly) every row was merged, so it expects one delta row and one
// combination, and joins the combinations to the bucket's rows with a
// nested loop: one scan of the whole bucket, deltas included, per
// combination. After a burst of ingest a bucket holds 10^4-10^5 deltas:
// at 10,000 nodes x 14 days, after three files of newer reports, merging a
// five-minute bucket of 14,896 deltas (1,292 combinations) took 1.6 s and
// one of an hour's (146,234 deltas) was still running after 48 s: the
// server's compaction ran for minutes beside ingest, which ran at 67 % of
// an empty database's rate. With hash joins the same merges take 39 ms and
// 404 ms (EXPLAIN ANALYZE). SET LOCAL keeps the
// setting to this transaction; the statement's plan is cached per
// connection, and it is only ever planned under it.
func mergeBucket(ctx context.Context, conn *pgx.Conn, merge, zero string, width, bucket int64) error {
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, mergeSettings); err != nil {
			return err
		}
		var zeros int64
		if err := tx.QueryRow(ctx, merge, width, bucket).Scan(&zeros); err != nil {
			return err
		}
		if zeros > 0 {
			if _, err := tx.Exec(ctx, zero, width, bucket); err != nil {
				return err
			}
		}
		return nil
	})
}

// DefaultRollupVacuumInterval is how often at most CompactRollups
// vacuums a rollup table (Options.RollupVacuumInterval).
const DefaultRollupVacuumInterval = time.Minute

// vacuumRollup vacuums a rollup table compaction merged buckets of, at
// most once an interval. Each merge deletes the bucket's deltas and leaves
// the old versions of the merged rows it updated, and during a long ingest
// the old buckets keep receiving deltas (distinct_rollup's whenever a
// resource's newest event moves out of them): with autovacuum off and
// maintenance hourly, a 14-day import of 10,000 nodes left distinct_rollup
// at 6.9 GB for 1.9M live rows (61.6M dead, when a merge still rewrote the
// whole bucket), which every read and every later merge paid for. VACUUM
// takes no lock that blocks reads or writes; SKIP_LOCKED skips a table
// another instance is vacuuming.
func (db *DB) vacuumRollup(ctx context.Context, table string) error {
	if db.rollupVacuumEvery < 0 {
		return nil
	}
	db.mu.Lock()
	due := time.Since(db.rollupVacuumed[table]) >= db.rollupVacuumEvery
	if due {
		db.rollupVacuumed[table] = time.Now()
	}
	db.mu.Unlock()
	if !due {
		return nil
	}
	_, err := db.pool.Exec(ctx, "VACUUM (SKIP_LOCKED) "+pgx.Identifier{table}.Sanitize())
	return err
}
