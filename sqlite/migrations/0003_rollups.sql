-- Rollups: counts of reports (by producer_timestamp) and of events (by
-- their timestamp) per time bucket and per the dimensions dashboards group
-- and filter by, kept in the same transaction as the rows they count (see
-- query/sqlgen/rollup.go). Every bucket exists at three widths (ms): a day,
-- an hour and five minutes. A row is a delta: ingest appends one per
-- (width, bucket, dimensions) and transaction, deletion appends negative
-- ones (merged = 0); compaction replaces the deltas of a bucket by their
-- sums (merged = 1). A count is always SUM(n), merged or not.
CREATE TABLE report_rollup (
  width INTEGER NOT NULL,
  bucket INTEGER NOT NULL,
  type TEXT NOT NULL,
  environment TEXT NOT NULL,
  status TEXT,
  noop INTEGER,
  noop_pending INTEGER,
  cached_catalog_status TEXT,
  n INTEGER NOT NULL,
  merged INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX report_rollup_bucket ON report_rollup (width, bucket);
CREATE INDEX report_rollup_unmerged ON report_rollup (width, bucket) WHERE merged = 0;

CREATE TABLE event_rollup (
  width INTEGER NOT NULL,
  bucket INTEGER NOT NULL,
  status TEXT NOT NULL,
  resource_type TEXT NOT NULL,
  environment TEXT NOT NULL,
  n INTEGER NOT NULL,
  merged INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX event_rollup_bucket ON event_rollup (width, bucket);
CREATE INDEX event_rollup_unmerged ON event_rollup (width, bucket) WHERE merged = 0;

-- what is already stored
INSERT INTO report_rollup (width, bucket, type, environment, status, noop, noop_pending,
  cached_catalog_status, n, merged)
SELECT w.width, r.producer_timestamp - ((r.producer_timestamp % w.width) + w.width) % w.width,
  r.type, r.environment, r.status, r.noop, r.noop_pending, r.cached_catalog_status, count(*), 1
FROM reports r CROSS JOIN (SELECT 86400000 AS width UNION ALL SELECT 3600000 UNION ALL SELECT 300000) w
GROUP BY 1, 2, 3, 4, 5, 6, 7, 8;

INSERT INTO event_rollup (width, bucket, status, resource_type, environment, n, merged)
SELECT w.width, e.timestamp - ((e.timestamp % w.width) + w.width) % w.width,
  e.status, e.resource_type, r.environment, count(*), 1
FROM resource_events e JOIN reports r ON r.id = e.report_id
  CROSS JOIN (SELECT 86400000 AS width UNION ALL SELECT 3600000 UNION ALL SELECT 300000) w
GROUP BY 1, 2, 3, 4, 5;
