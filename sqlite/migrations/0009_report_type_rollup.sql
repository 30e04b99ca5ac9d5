-- report_type_rollup: report counts per bucket and report type only, kept
-- beside report_rollup by every statement that writes report_rollup
-- (query/sqlgen/rollup.go). A count that filters and groups by nothing but
-- producer_timestamp and type (reports per day, include_total of an
-- unfiltered reports page) reads one row per bucket and type here, where
-- report_rollup holds one per combination of its six dimensions. Deltas
-- and compaction as report_rollup's (migration 0003).
CREATE TABLE report_type_rollup (
  width INTEGER NOT NULL,
  bucket INTEGER NOT NULL,
  type TEXT NOT NULL,
  n INTEGER NOT NULL,
  merged INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX report_type_rollup_bucket ON report_type_rollup (width, bucket);
CREATE INDEX report_type_rollup_unmerged ON report_type_rollup (width, bucket) WHERE merged = 0;

-- what is already counted
INSERT INTO report_type_rollup (width, bucket, type, n, merged)
SELECT width, bucket, type, sum(n), 1 FROM report_rollup
GROUP BY 1, 2, 3 HAVING sum(n) <> 0;
