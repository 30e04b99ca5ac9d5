-- distinct_rollup gets five-minute buckets beside the hours (see
-- query/sqlgen/distinct.go, DistinctWidths): a window's edges finer than a
-- bucket are read key by key from resource_latest, and five minutes makes
-- them 12 times smaller than an hour. Counted from resource_latest, as
-- 0004 counted the hours: for every bucket at or after
-- distinct_state.valid_from (the only ones a query reads), its rows are
-- the keys whose newest timestamp falls in the bucket.
INSERT INTO distinct_rollup (width, bucket, status, resource_type, resource_title, n, merged)
SELECT w.width, l.ts - ((l.ts % w.width) + w.width) % w.width, s.status, l.resource_type, l.resource_title,
  sum(CASE s.status WHEN 'failure' THEN l.n_failure WHEN 'skipped' THEN l.n_skipped
    WHEN 'success' THEN l.n_success ELSE l.n_noop END), 1
FROM resource_latest l CROSS JOIN (SELECT 300000 AS width) w
  CROSS JOIN (SELECT 'failure' AS status UNION ALL SELECT 'skipped' UNION ALL SELECT 'success' UNION ALL SELECT 'noop') s
GROUP BY 1, 2, 3, 4, 5
HAVING sum(CASE s.status WHEN 'failure' THEN l.n_failure WHEN 'skipped' THEN l.n_skipped
    WHEN 'success' THEN l.n_success ELSE l.n_noop END) <> 0;

ANALYZE distinct_rollup;
