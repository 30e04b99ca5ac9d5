package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// concurrentSteps are the parts of migrations that must not run inside a
// transaction, by migration version: they run first, on the migration
// lock's connection, and must be safe to run again after an interruption
// (the migration is recorded only once its transactional part commits).
var concurrentSteps = map[int]func(ctx context.Context, conn *pgx.Conn) error{
	11: buildEventsTimestampFilters,
	14: titleKeyIndexes,
	17: reportKeysByDay,
}

// eventsTimestampFilters is the index migration 0011 swaps in for
// resource_events_timestamp.
const (
	eventsTimestampFilters     = "resource_events_timestamp_filters"
	eventsTimestampFiltersCols = "(timestamp, status, resource_type, resource_title)"
)

// buildEventsTimestampFilters builds migration 0011's index without
// holding off writes (buildPartitionedIndex).
func buildEventsTimestampFilters(ctx context.Context, conn *pgx.Conn) error {
	return buildPartitionedIndex(ctx, conn, eventsTimestampFilters, "_ts_filters", eventsTimestampFiltersCols)
}

// titleKeyFunction is migration 0014's title_key, created by its
// concurrent step, before the indexes that use it (the migration's SQL
// relies on it and does not define it again).
const titleKeyFunction = `CREATE OR REPLACE FUNCTION title_key(t text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT CASE WHEN octet_length(t) <= 1000 THEN t ELSE left(t, 200) || md5(t) END $$`

// titleKeyIndexes builds migration 0014's indexes without holding off
// writes: the two of resource_events as buildPartitionedIndex does, and
// resource_latest's unique key CONCURRENTLY (it is not partitioned).
func titleKeyIndexes(ctx context.Context, conn *pgx.Conn) error {
	if _, err := conn.Exec(ctx, titleKeyFunction); err != nil {
		return err
	}
	if err := buildPartitionedIndex(ctx, conn, "resource_events_title_key", "_title_key",
		"(title_key(resource_title))"); err != nil {
		return err
	}
	if err := buildPartitionedIndex(ctx, conn, "resource_events_timestamp_key", "_ts_key",
		"(timestamp, status, resource_type, title_key(resource_title))"); err != nil {
		return err
	}
	if err := dropInvalidIndex(ctx, conn, "resource_latest_key"); err != nil {
		return err
	}
	_, err := conn.Exec(ctx, `CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS resource_latest_key
		ON resource_latest (certname, resource_type, title_key(resource_title), property_key, name_key)`)
	return err
}

// reportKeysByDay builds migration 0017's index of report_keys without
// holding off writes (report_keys is not partitioned).
func reportKeysByDay(ctx context.Context, conn *pgx.Conn) error {
	if err := dropInvalidIndex(ctx, conn, "report_keys_day_key"); err != nil {
		return err
	}
	_, err := conn.Exec(ctx, `CREATE INDEX CONCURRENTLY IF NOT EXISTS report_keys_day_key
		ON report_keys ((id >> 32), key, id)`)
	return err
}

// dropInvalidIndex drops index idx if an interrupted CONCURRENTLY build
// left it invalid.
func dropInvalidIndex(ctx context.Context, conn *pgx.Conn, idx string) error {
	var valid *bool
	if err := conn.QueryRow(ctx, `SELECT x.indisvalid FROM pg_class c JOIN pg_index x ON x.indexrelid = c.oid
		WHERE c.relname = $1 AND c.relnamespace = current_schema()::regnamespace`, idx).Scan(&valid); err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return err
	}
	if valid != nil && !*valid {
		if _, err := conn.Exec(ctx, "DROP INDEX CONCURRENTLY IF EXISTS "+pgx.Identifier{idx}.Sanitize()); err != nil {
			return err
		}
	}
	return nil
}

// buildPartitionedIndex builds index name on resource_events with the key
// cols without holding off writes: CREATE INDEX on the partitioned table
// cannot be CONCURRENTLY, and on a large database (21M events at 10,000
// nodes x 14 days: 19 s) it would block every insert into
// resource_events, and whatever queues behind them, for the whole build.
// Instead: the index on the parent only (no rows, invalid until every
// partition has its own), then each partition's (named partition +
// suffix) built CONCURRENTLY and attached. A partition created meanwhile
// gets its copy from the parent's definition. Run again after an
// interruption, it drops a partition's index left invalid and picks up
// where it stopped. The migration's SQL then swaps the indexes.
func buildPartitionedIndex(ctx context.Context, conn *pgx.Conn, name, suffix, cols string) error {
	if _, err := conn.Exec(ctx, "CREATE INDEX IF NOT EXISTS "+pgx.Identifier{name}.Sanitize()+
		" ON ONLY resource_events "+cols); err != nil {
		return err
	}
	for {
		// partitions without an index attached to the parent's
		rows, err := conn.Query(ctx, `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
			WHERE i.inhparent = 'resource_events'::regclass AND NOT EXISTS (
			  SELECT 1 FROM pg_inherits ii JOIN pg_index x ON x.indexrelid = ii.inhrelid
			  WHERE ii.inhparent = $1::regclass AND x.indrelid = c.oid)
			ORDER BY 1`, name)
		if err != nil {
			return err
		}
		parts, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		if len(parts) == 0 {
			return nil
		}
		for _, part := range parts {
			idx := part + suffix
			if err := dropInvalidIndex(ctx, conn, idx); err != nil {
				return err
			}
			if _, err := conn.Exec(ctx, "CREATE INDEX CONCURRENTLY IF NOT EXISTS "+pgx.Identifier{idx}.Sanitize()+
				" ON "+pgx.Identifier{part}.Sanitize()+" "+cols); err != nil {
				if isUndefinedTable(err) {
					continue // dropped by retention meanwhile
				}
				return fmt.Errorf("index of %s: %w", part, err)
			}
			if _, err := conn.Exec(ctx, "ALTER INDEX "+pgx.Identifier{name}.Sanitize()+" ATTACH PARTITION "+
				pgx.Identifier{idx}.Sanitize()); err != nil {
				if isUndefinedTable(err) {
					continue
				}
				return fmt.Errorf("attaching the index of %s: %w", part, err)
			}
		}
	}
}
