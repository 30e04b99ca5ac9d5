-- Rollups: counts of reports (by producer_timestamp) and of events (by
-- their timestamp) per time bucket and per the dimensions dashboards group
-- and filter by, kept in the same statement as the rows they count (see
-- query/sqlgen/rollup.go). Every bucket exists at three widths (ms): a day,
-- an hour and five minutes. A row is a delta: ingest appends one per
-- (width, bucket, dimensions) and batch, deletion appends negative ones
-- (merged = false); compaction replaces the deltas of a bucket by their
-- sums (merged = true). A count is always SUM(n), merged or not.
CREATE TABLE report_rollup (
  width integer NOT NULL,
  bucket bigint NOT NULL,
  type text COLLATE "C" NOT NULL,
  environment text COLLATE "C" NOT NULL,
  status text COLLATE "C",
  noop boolean,
  noop_pending boolean,
  cached_catalog_status text COLLATE "C",
  n bigint NOT NULL,
  merged boolean NOT NULL DEFAULT false
);
CREATE INDEX report_rollup_bucket ON report_rollup (width, bucket);
CREATE INDEX report_rollup_unmerged ON report_rollup (width, bucket) WHERE NOT merged;

CREATE TABLE event_rollup (
  width integer NOT NULL,
  bucket bigint NOT NULL,
  status text COLLATE "C" NOT NULL,
  resource_type text COLLATE "C" NOT NULL,
  environment text COLLATE "C" NOT NULL,
  n bigint NOT NULL,
  merged boolean NOT NULL DEFAULT false
);
CREATE INDEX event_rollup_bucket ON event_rollup (width, bucket);
CREATE INDEX event_rollup_unmerged ON event_rollup (width, bucket) WHERE NOT merged;

-- what is already stored
INSERT INTO report_rollup (width, bucket, type, environment, status, noop, noop_pending,
  cached_catalog_status, n, merged)
SELECT w.width, r.producer_timestamp - ((r.producer_timestamp % w.width) + w.width) % w.width,
  r.type, r.environment, r.status, r.noop, r.noop_pending, r.cached_catalog_status, count(*), true
FROM reports r CROSS JOIN (VALUES (86400000), (3600000), (300000)) w(width)
GROUP BY 1, 2, 3, 4, 5, 6, 7, 8;

INSERT INTO event_rollup (width, bucket, status, resource_type, environment, n, merged)
SELECT w.width, e.timestamp - ((e.timestamp % w.width) + w.width) % w.width,
  e.status, e.resource_type, r.environment, count(*), true
FROM resource_events e JOIN reports r ON r.id = e.report_id
  CROSS JOIN (VALUES (86400000), (3600000), (300000)) w(width)
GROUP BY 1, 2, 3, 4, 5;
