-- The ids of the reports by their hash and by their node's configuration
-- version, in one table across the days kept, so that a lookup by either
-- reads one index however many days are kept.
--
-- reports is partitioned by the day of each report's producer_timestamp,
-- and a hash or a configuration version does not say its day: Puppetboard's
-- report page (certname = N and (hash = X or configuration_version = X))
-- probed the hash and configuration_version indexes of every day partition,
-- and a generic plan opened every partition of report_data and
-- resource_events for the report's columns: 0.62 ms at 1 day against 1.23
-- ms at 14 days (10,000 nodes). With this table the engine reads
-- the ids first (sqlgen.KeyLookup), then the reports by those ids, bounded
-- to their days, so that only those days' partitions are opened.
--
-- key is hashtextextended(k, 0) of
--   'h' || hash                                           and
--   'c' || certname || chr(1) || configuration_version    (when not NULL)
-- (sqlgen.ReportKeys; the engine compares the rows it finds with the query
-- itself, so that two keys hashing alike cost a row, never an answer).
-- hashtextextended is the hash of hash partitioning, which PostgreSQL keeps
-- stable across versions and pg_upgrade.
--
-- A trigger rather than the ingest code keeps it (as report_time_bounds,
-- migration 0015), so that every writer keeps it complete. Retention drops
-- the rows of the days it drops (DeleteReportsBefore); the rows of reports
-- deleted one by one stay until their day goes, pointing at no report.
CREATE TABLE report_keys (
  key bigint NOT NULL,
  id bigint NOT NULL -- reports.id
);

CREATE FUNCTION report_keys_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO report_keys (key, id)
  SELECT k.key, n.id FROM new_reports n,
    LATERAL (VALUES (hashtextextended('h' || n.hash, 0)),
      (hashtextextended('c' || n.certname || chr(1) || n.configuration_version, 0))) k(key)
  WHERE k.key IS NOT NULL;
  RETURN NULL;
END $$;

CREATE TRIGGER reports_keys AFTER INSERT ON reports
  REFERENCING NEW TABLE AS new_reports FOR EACH STATEMENT EXECUTE FUNCTION report_keys_add();

-- the reports stored so far (about a minute for the 6.7 million reports of
-- 10,000 nodes x 14 days; the trigger above already holds off concurrent
-- inserts until this transaction commits), then the index, built once
INSERT INTO report_keys (key, id)
SELECT k.key, r.id FROM reports r,
  LATERAL (VALUES (hashtextextended('h' || r.hash, 0)),
    (hashtextextended('c' || r.certname || chr(1) || r.configuration_version, 0))) k(key)
WHERE k.key IS NOT NULL;

CREATE INDEX report_keys_key ON report_keys (key, id);
