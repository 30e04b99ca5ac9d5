-- failure_rollup: failure events counted per time bucket and resource
-- (resource_type, resource_title), as deltas like the other rollups (see
-- 0002 and query/sqlgen/rollup.go). The dashboard's failing resources over
-- the days kept, and the fleet state's hourly reload of them, read it
-- instead of every failure event stored. Failures are few: it is small
-- beside event_rollup, which cannot keep resource_title for every status.
CREATE TABLE failure_rollup (
  width integer NOT NULL,
  bucket bigint NOT NULL,
  resource_type text COLLATE "C" NOT NULL,
  resource_title text COLLATE "C" NOT NULL,
  n bigint NOT NULL,
  merged boolean NOT NULL DEFAULT false
);
CREATE INDEX failure_rollup_bucket ON failure_rollup (width, bucket);
CREATE INDEX failure_rollup_unmerged ON failure_rollup (width, bucket) WHERE NOT merged;

-- what is already stored
INSERT INTO failure_rollup (width, bucket, resource_type, resource_title, n, merged)
SELECT w.width, e.timestamp - ((e.timestamp % w.width) + w.width) % w.width,
  e.resource_type, e.resource_title, count(*), true
FROM resource_events e CROSS JOIN (VALUES (86400000), (3600000), (300000)) w(width)
WHERE e.status = 'failure'
GROUP BY 1, 2, 3, 4;
