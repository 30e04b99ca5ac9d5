-- distinct_resources kept at write time (see query/sqlgen/distinct.go).
-- resource_latest: per (certname, resource_type, resource_title, property,
-- name), the newest stored event timestamp and how many events of each
-- status have it; property and name are kept as '' for NULL and '=' || v
-- for a value v, so that the key is unique and NULL matches NULL. prev_ts
-- and the prev_ counts are the same for the next older timestamp of the
-- key (prev_ts -4611686018427387904 when there is none).
CREATE TABLE resource_latest (
  certname TEXT NOT NULL,
  resource_type TEXT NOT NULL,
  resource_title TEXT NOT NULL,
  property_key TEXT NOT NULL,
  name_key TEXT NOT NULL,
  ts INTEGER NOT NULL,
  n_failure INTEGER NOT NULL,
  n_skipped INTEGER NOT NULL,
  n_success INTEGER NOT NULL,
  n_noop INTEGER NOT NULL,
  prev_ts INTEGER NOT NULL,
  prev_n_failure INTEGER NOT NULL,
  prev_n_skipped INTEGER NOT NULL,
  prev_n_success INTEGER NOT NULL,
  prev_n_noop INTEGER NOT NULL,
  PRIMARY KEY (certname, resource_type, resource_title, property_key, name_key)
) WITHOUT ROWID;
CREATE INDEX resource_latest_ts ON resource_latest (ts);

-- distinct_rollup: resource_latest counted per hour of ts, status and
-- resource, as deltas like the other rollups.
CREATE TABLE distinct_rollup (
  width INTEGER NOT NULL,
  bucket INTEGER NOT NULL,
  status TEXT NOT NULL,
  resource_type TEXT NOT NULL,
  resource_title TEXT NOT NULL,
  n INTEGER NOT NULL,
  merged INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX distinct_rollup_bucket ON distinct_rollup (width, bucket);
CREATE INDEX distinct_rollup_unmerged ON distinct_rollup (width, bucket) WHERE merged = 0;

-- valid_from: windows starting before it are not answered from the tables
-- above (retention removed events up to it).
CREATE TABLE distinct_state (valid_from INTEGER NOT NULL);
INSERT INTO distinct_state VALUES (-4611686018427387904);

-- what is already stored
INSERT INTO resource_latest (certname, resource_type, resource_title, property_key, name_key, ts,
  n_failure, n_skipped, n_success, n_noop, prev_ts, prev_n_failure, prev_n_skipped, prev_n_success, prev_n_noop)
SELECT y.certname, y.resource_type, y.resource_title, y.property_key, y.name_key, max(y.timestamp),
  sum(CASE WHEN y.rk = 1 AND y.status = 'failure' THEN 1 ELSE 0 END),
  sum(CASE WHEN y.rk = 1 AND y.status = 'skipped' THEN 1 ELSE 0 END),
  sum(CASE WHEN y.rk = 1 AND y.status = 'success' THEN 1 ELSE 0 END),
  sum(CASE WHEN y.rk = 1 AND y.status = 'noop' THEN 1 ELSE 0 END),
  COALESCE(max(CASE WHEN y.rk = 2 THEN y.timestamp END), -4611686018427387904),
  sum(CASE WHEN y.rk = 2 AND y.status = 'failure' THEN 1 ELSE 0 END),
  sum(CASE WHEN y.rk = 2 AND y.status = 'skipped' THEN 1 ELSE 0 END),
  sum(CASE WHEN y.rk = 2 AND y.status = 'success' THEN 1 ELSE 0 END),
  sum(CASE WHEN y.rk = 2 AND y.status = 'noop' THEN 1 ELSE 0 END)
FROM (SELECT r.certname AS certname, e.resource_type AS resource_type, e.resource_title AS resource_title,
    COALESCE('=' || e.property, '') AS property_key, COALESCE('=' || e.name, '') AS name_key,
    e.timestamp AS timestamp, e.status AS status,
    dense_rank() OVER (PARTITION BY r.certname, e.resource_type, e.resource_title,
      COALESCE('=' || e.property, ''), COALESCE('=' || e.name, '') ORDER BY e.timestamp DESC) AS rk
  FROM resource_events e JOIN reports r ON r.id = e.report_id) y
WHERE y.rk <= 2
GROUP BY 1, 2, 3, 4, 5;

INSERT INTO distinct_rollup (width, bucket, status, resource_type, resource_title, n, merged)
SELECT w.width, l.ts - ((l.ts % w.width) + w.width) % w.width, s.status, l.resource_type, l.resource_title,
  sum(CASE s.status WHEN 'failure' THEN l.n_failure WHEN 'skipped' THEN l.n_skipped
    WHEN 'success' THEN l.n_success ELSE l.n_noop END), 1
FROM resource_latest l CROSS JOIN (SELECT 3600000 AS width) w
  CROSS JOIN (SELECT 'failure' AS status UNION ALL SELECT 'skipped' UNION ALL SELECT 'success' UNION ALL SELECT 'noop') s
GROUP BY 1, 2, 3, 4, 5
HAVING sum(CASE s.status WHEN 'failure' THEN l.n_failure WHEN 'skipped' THEN l.n_skipped
    WHEN 'success' THEN l.n_success ELSE l.n_noop END) <> 0;

-- statistics for the plans of the first queries
ANALYZE resource_latest;
ANALYZE distinct_rollup;
