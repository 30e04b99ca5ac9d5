-- report_type_rollup: report counts per bucket and report type only, kept
-- beside report_rollup by every statement that writes report_rollup
-- (query/sqlgen/rollup.go). A count that filters and groups by nothing but
-- producer_timestamp and type (reports per day, include_total of an
-- unfiltered reports page) reads one row per bucket and type here, where
-- report_rollup holds one per combination of its six dimensions: 16 a day
-- on the bench fleets, so reports per day over 14 days read 226 rows
-- there, and their cost grew with the days kept. Deltas and compaction as
-- report_rollup's (migrations 0002 and 0009).
CREATE TABLE report_type_rollup (
  width integer NOT NULL,
  bucket bigint NOT NULL,
  type text COLLATE "C" NOT NULL,
  n bigint NOT NULL,
  merged boolean NOT NULL DEFAULT false
) WITH (fillfactor = 80);
CREATE INDEX report_type_rollup_bucket ON report_type_rollup (width, bucket);
CREATE INDEX report_type_rollup_unmerged ON report_type_rollup (width, bucket) WHERE NOT merged;

-- what is already counted
INSERT INTO report_type_rollup (width, bucket, type, n, merged)
SELECT width, bucket, type, sum(n), true FROM report_rollup
GROUP BY 1, 2, 3 HAVING sum(n) <> 0;
