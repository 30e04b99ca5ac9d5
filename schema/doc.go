// Package schema is the stored schema as the code sees it: the tables and
// columns the code names (Catalogue, checked against both backends'
// migrations by this package's tests), the rollups kept at write time
// (Rollup and its instances, latest_rollup, resource_latest and
// distinct_rollup) and the write-side SQL that keeps them: the deltas and
// upserts every writer (ingest, retention, partition drops) runs in the
// transaction that stores or deletes the rows they count.
//
// The read side (query/sqlgen) plans from the same definitions, so that a
// rollup is defined once for the planner, the writers and compaction. The
// tables themselves are created by the backends' migrations
// (postgres/migrations, sqlite/migrations), which also hold the triggers
// that keep latest_rollup.
package schema
