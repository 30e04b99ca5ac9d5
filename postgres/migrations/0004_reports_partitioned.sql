-- reports partitioned by day, like resource_events and report_data (by
-- ranges of id, whose upper bits are the day of producer_timestamp: see
-- postgres/ids.go). An insert then touches the indexes of its day only:
-- unpartitioned, the indexes on the hash (a random SHA-1) and on
-- (certname, start_time) grew with the days kept, and every insert wrote a
-- random leaf page of them, so ingest slowed with retention (41-63 % of
-- the empty database's rate at 10,000 nodes x 14 days). Retention drops a
-- day's reports with its partition.
--
-- A report's hash is unique within its day's partition (reports_<day>_hash,
-- created with the partition: postgres/ingest.go), which is unique
-- overall: the hash covers the producer_timestamp, so a duplicate has the
-- same day.
ALTER TABLE reports RENAME TO reports_unpartitioned;
ALTER INDEX reports_pkey RENAME TO reports_unpartitioned_pkey;
ALTER INDEX reports_hash_key RENAME TO reports_unpartitioned_hash_key;
ALTER INDEX reports_certname_start RENAME TO reports_unpartitioned_certname_start;
ALTER INDEX reports_end_time RENAME TO reports_unpartitioned_end_time;
ALTER INDEX reports_producer_timestamp RENAME TO reports_unpartitioned_producer_timestamp;

CREATE TABLE reports (LIKE reports_unpartitioned INCLUDING DEFAULTS INCLUDING STORAGE INCLUDING COMPRESSION)
  PARTITION BY RANGE (id);
ALTER TABLE reports ADD PRIMARY KEY (id);
CREATE INDEX reports_certname_start ON reports (certname, start_time);
CREATE INDEX reports_end_time ON reports (end_time, id) WHERE type = 'agent';
CREATE INDEX reports_producer_timestamp ON reports (producer_timestamp);

DO $$
DECLARE
  d bigint;
  name text;
BEGIN
  FOR d IN SELECT DISTINCT (id >> 32) - 100000 FROM reports_unpartitioned ORDER BY 1 LOOP
    name := 'reports_' || to_char(to_timestamp(d * 86400) AT TIME ZONE 'UTC', 'YYYYMMDD');
    EXECUTE format('CREATE TABLE %I PARTITION OF reports FOR VALUES FROM (%s) TO (%s)',
      name, (d + 100000) << 32, (d + 100001) << 32);
    EXECUTE format('CREATE UNIQUE INDEX %I ON %I (hash)', name || '_hash', name);
  END LOOP;
END $$;

INSERT INTO reports SELECT * FROM reports_unpartitioned;
DROP TABLE reports_unpartitioned;
ANALYZE reports;
