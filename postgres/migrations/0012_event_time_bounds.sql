-- The span of event timestamps in each day partition of resource_events
-- (a zone map), kept by a trigger on every insert, so that a query on a
-- window of event timestamps reads only the partitions that can hold it.
--
-- resource_events is partitioned by the day of each report's
-- producer_timestamp (postgres/ids.go), not by the events' own
-- timestamps, so PostgreSQL cannot tell which partitions a timestamp
-- window touches: a query for the failures of the last hour planned and
-- probed the timestamp index of every day kept (19 partitions at 14 days
-- with the days created ahead), and its cost grew with retention. With
-- this table the engine first asks which days' spans meet the window, and
-- bounds the statement's report ids to them (sqlgen.WithReportIDRange), so
-- that the planner prunes the other partitions.
--
-- The spans are rounded out to whole hours, so that the row of a day
-- changes about once an hour while its reports arrive rather than with
-- every batch: a batch whose events lie within the span only reads it.
-- They only ever widen: a span is a superset of the timestamps its
-- partition holds (deleting events, or dropping a partition, leaves it as
-- it was; a day whose partition is created again widens its old span). A
-- trigger rather than the ingest code keeps them, so that no writer (an
-- older reportdb on the same database included) can store an event
-- outside its day's span.
CREATE TABLE event_time_bounds (
  day bigint PRIMARY KEY, -- report_id >> 32 of the partition's reports
  min_ts bigint NOT NULL, -- Unix ms, a whole hour at or before its earliest event
  max_ts bigint NOT NULL  -- Unix ms, a whole hour at or after its latest event
);

CREATE FUNCTION event_time_bounds_widen() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  b record;
BEGIN
  -- day by day in order, so that concurrent batches lock rows in the
  -- same order
  FOR b IN SELECT n.report_id >> 32 AS day,
      floor(min(n.timestamp) / 3600000.0)::bigint * 3600000 AS lo,
      ceil(max(n.timestamp) / 3600000.0)::bigint * 3600000 AS hi
    FROM new_events n GROUP BY 1 ORDER BY 1
  LOOP
    PERFORM 1 FROM event_time_bounds t WHERE t.day = b.day AND t.min_ts <= b.lo AND t.max_ts >= b.hi;
    CONTINUE WHEN FOUND;
    INSERT INTO event_time_bounds AS t (day, min_ts, max_ts) VALUES (b.day, b.lo, b.hi)
      ON CONFLICT (day) DO UPDATE SET min_ts = LEAST(t.min_ts, EXCLUDED.min_ts),
        max_ts = GREATEST(t.max_ts, EXCLUDED.max_ts)
      WHERE t.min_ts > EXCLUDED.min_ts OR t.max_ts < EXCLUDED.max_ts;
  END LOOP;
  RETURN NULL;
END $$;

CREATE TRIGGER resource_events_time_bounds AFTER INSERT ON resource_events
  REFERENCING NEW TABLE AS new_events FOR EACH STATEMENT EXECUTE FUNCTION event_time_bounds_widen();

-- the partitions' spans so far, from their timestamp and report_id
-- indexes (a few index pages per partition; the trigger above already
-- holds off concurrent inserts)
DO $$
DECLARE
  p regclass;
  d bigint;
  lo bigint;
  hi bigint;
BEGIN
  FOR p IN SELECT i.inhrelid::regclass FROM pg_inherits i WHERE i.inhparent = 'resource_events'::regclass LOOP
    EXECUTE format('SELECT min(report_id) >> 32, min(timestamp), max(timestamp) FROM %s', p) INTO d, lo, hi;
    CONTINUE WHEN d IS NULL;
    INSERT INTO event_time_bounds (day, min_ts, max_ts)
      VALUES (d, floor(lo / 3600000.0)::bigint * 3600000, ceil(hi / 3600000.0)::bigint * 3600000);
  END LOOP;
END $$;
