-- failure_rollup: failure events counted per time bucket and resource
-- (resource_type, resource_title), as deltas like the other rollups (see
-- 0003 and query/sqlgen/rollup.go). The dashboard's failing resources over
-- the days kept, and the fleet state's hourly reload of them, read it
-- instead of every failure event stored.
CREATE TABLE failure_rollup (
  width INTEGER NOT NULL,
  bucket INTEGER NOT NULL,
  resource_type TEXT NOT NULL,
  resource_title TEXT NOT NULL,
  n INTEGER NOT NULL,
  merged INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX failure_rollup_bucket ON failure_rollup (width, bucket);
CREATE INDEX failure_rollup_unmerged ON failure_rollup (width, bucket) WHERE merged = 0;

-- what is already stored
INSERT INTO failure_rollup (width, bucket, resource_type, resource_title, n, merged)
SELECT w.width, e.timestamp - ((e.timestamp % w.width) + w.width) % w.width,
  e.resource_type, e.resource_title, count(*), 1
FROM resource_events e
  CROSS JOIN (SELECT 86400000 AS width UNION ALL SELECT 3600000 UNION ALL SELECT 300000) w
WHERE e.status = 'failure'
GROUP BY 1, 2, 3, 4;
