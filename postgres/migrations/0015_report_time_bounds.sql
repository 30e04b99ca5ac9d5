-- The span of the reports' start and end times in each day partition of
-- reports (a zone map, as event_time_bounds is for the events' timestamps:
-- migration 0012), kept by a trigger on every insert, so that a query for
-- the newest (or oldest) reports by start_time or end_time reads only the
-- days that can hold them.
--
-- reports is partitioned by the day of each report's producer_timestamp,
-- and the newest reports of a node (Puppetboard's node page: certname = X
-- order by start_time desc limit 10) or of the fleet (the reports page:
-- order by end_time desc limit 100) are merged from one descent of the
-- (certname, start_time) or end_time index of every day kept: the cost
-- grew with retention. With this table the engine reads the newest day's
-- span first, asks for the rows at or after a bound within the days that
-- can hold such rows, and reads the other days only when those rows are
-- not enough to fill the page (engine.Query, sqlgen.Narrow).
--
-- As in event_time_bounds, the spans are rounded out to whole hours, so
-- that the row of a day changes about once an hour while its reports
-- arrive, only ever widen (a superset of the times its partition holds),
-- and a trigger rather than the ingest code keeps them, so that every
-- writer (an older reportdb on the same database too) keeps them right.
CREATE TABLE report_time_bounds (
  day bigint PRIMARY KEY,    -- id >> 32 of the partition's reports
  min_start bigint NOT NULL, -- Unix ms, a whole hour at or before its earliest start_time
  max_start bigint NOT NULL, -- Unix ms, a whole hour at or after its latest start_time
  min_end bigint NOT NULL,   -- the same for end_time
  max_end bigint NOT NULL
);

CREATE FUNCTION report_time_bounds_widen() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  b record;
BEGIN
  -- day by day in order, so that concurrent batches lock rows in the
  -- same order
  FOR b IN SELECT n.id >> 32 AS day,
      floor(min(n.start_time) / 3600000.0)::bigint * 3600000 AS slo,
      ceil(max(n.start_time) / 3600000.0)::bigint * 3600000 AS shi,
      floor(min(n.end_time) / 3600000.0)::bigint * 3600000 AS elo,
      ceil(max(n.end_time) / 3600000.0)::bigint * 3600000 AS ehi
    FROM new_reports n GROUP BY 1 ORDER BY 1
  LOOP
    PERFORM 1 FROM report_time_bounds t WHERE t.day = b.day
      AND t.min_start <= b.slo AND t.max_start >= b.shi AND t.min_end <= b.elo AND t.max_end >= b.ehi;
    CONTINUE WHEN FOUND;
    INSERT INTO report_time_bounds AS t (day, min_start, max_start, min_end, max_end)
      VALUES (b.day, b.slo, b.shi, b.elo, b.ehi)
      ON CONFLICT (day) DO UPDATE SET min_start = LEAST(t.min_start, EXCLUDED.min_start),
        max_start = GREATEST(t.max_start, EXCLUDED.max_start),
        min_end = LEAST(t.min_end, EXCLUDED.min_end),
        max_end = GREATEST(t.max_end, EXCLUDED.max_end)
      WHERE t.min_start > EXCLUDED.min_start OR t.max_start < EXCLUDED.max_start
        OR t.min_end > EXCLUDED.min_end OR t.max_end < EXCLUDED.max_end;
  END LOOP;
  RETURN NULL;
END $$;

CREATE TRIGGER reports_time_bounds AFTER INSERT ON reports
  REFERENCING NEW TABLE AS new_reports FOR EACH STATEMENT EXECUTE FUNCTION report_time_bounds_widen();

-- the partitions' spans so far: one pass over each (about 15 s for the
-- 6.7 million reports of 10,000 nodes x 14 days; the trigger above
-- already holds off concurrent inserts)
DO $$
DECLARE
  p regclass;
  d bigint;
  slo bigint;
  shi bigint;
  elo bigint;
  ehi bigint;
BEGIN
  FOR p IN SELECT i.inhrelid::regclass FROM pg_inherits i WHERE i.inhparent = 'reports'::regclass LOOP
    EXECUTE format('SELECT min(id) >> 32, min(start_time), max(start_time), min(end_time), max(end_time) FROM %s', p)
      INTO d, slo, shi, elo, ehi;
    CONTINUE WHEN d IS NULL;
    INSERT INTO report_time_bounds (day, min_start, max_start, min_end, max_end)
      VALUES (d, floor(slo / 3600000.0)::bigint * 3600000, ceil(shi / 3600000.0)::bigint * 3600000,
        floor(elo / 3600000.0)::bigint * 3600000, ceil(ehi / 3600000.0)::bigint * 3600000);
  END LOOP;
END $$;
