-- Compaction merges a bucket's deltas into its merged rows in place
-- (postgres/rollup.go): the deltas' sums are added to the bucket's merged
-- row of each dimension combination, and only the deltas and the merged
-- rows they change get new versions. It
-- used to delete every row of the bucket and insert the sums, so each
-- merge of a few new deltas rewrote the whole bucket: after a 14-day import
-- of 10,000 nodes, where old buckets keep receiving deltas (distinct_rollup
-- whenever a resource's newest event moves out of one), distinct_rollup
-- held 61.6M dead rows beside 1.9M live ones (6.9 GB).
--
-- Each table is merged once here, so that every combination has at most
-- one merged row per bucket (two instances compacting the same bucket at
-- once could leave two before; compaction now holds an advisory lock), which
-- the in-place merge relies on: it adds a sum to every merged row of its
-- combination. Pages are filled to
-- 80 %, leaving room for the new versions of merged rows, which change no
-- indexed column: HOT updates, pruned on the page without a vacuum.
WITH d AS (DELETE FROM report_rollup RETURNING *)
INSERT INTO report_rollup (width, bucket, type, environment, status, noop, noop_pending,
  cached_catalog_status, n, merged)
SELECT width, bucket, type, environment, status, noop, noop_pending, cached_catalog_status, sum(n), true
FROM d GROUP BY 1, 2, 3, 4, 5, 6, 7, 8 HAVING sum(n) <> 0;
ALTER TABLE report_rollup SET (fillfactor = 80);

WITH d AS (DELETE FROM event_rollup RETURNING *)
INSERT INTO event_rollup (width, bucket, status, resource_type, environment, n, merged)
SELECT width, bucket, status, resource_type, environment, sum(n), true
FROM d GROUP BY 1, 2, 3, 4, 5 HAVING sum(n) <> 0;
ALTER TABLE event_rollup SET (fillfactor = 80);

WITH d AS (DELETE FROM failure_rollup RETURNING *)
INSERT INTO failure_rollup (width, bucket, resource_type, resource_title, n, merged)
SELECT width, bucket, resource_type, resource_title, sum(n), true
FROM d GROUP BY 1, 2, 3, 4 HAVING sum(n) <> 0;
ALTER TABLE failure_rollup SET (fillfactor = 80);

WITH d AS (DELETE FROM distinct_rollup RETURNING *)
INSERT INTO distinct_rollup (width, bucket, status, resource_type, resource_title, n, merged)
SELECT width, bucket, status, resource_type, resource_title, sum(n), true
FROM d GROUP BY 1, 2, 3, 4, 5 HAVING sum(n) <> 0;
ALTER TABLE distinct_rollup SET (fillfactor = 80);
