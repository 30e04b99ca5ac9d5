-- The keys of the reports of closed days, in one index by key, so that a
-- lookup by hash or configuration version reads one index for them
-- however many days are kept, and report_keys' index by day (migration
-- 0017) only for the days not yet archived (today, yesterday).
--
-- report_keys' index leads with the day so that ingest writes each day's
-- keys into that day's part of it (a key is a hash: in one index by key
-- ingest wrote to pages all over an index that outgrew PostgreSQL's
-- buffers). But a lookup then read it once per day kept: at 10,000 nodes
-- Puppetboard's report page took 1.3 ms with 1 day kept and 2.4 ms with
-- 14 (stop 35: 1.80x and 2.58x in two sets), a descent into an uncached
-- part of the index per day.
--
-- report_keys_archive holds the same rows as report_keys for the days up
-- to report_keys_merge.merged (days of report ids, id >> 32), copied once
-- a day by maintenance (postgres.DB.ArchiveKeys) in key order, so that
-- the copy writes the index's pages in order, once each, off the ingest
-- path. A lookup (postgres.Dialect.ReportKeysSQL) reads the archive and
-- report_keys' days after merged, in one snapshot.
--
-- Reports of days already being archived (up to archiving) still arrive
-- late: the trigger writes their keys to the archive too. The trigger
-- reads archiving under a shared advisory lock (0x72646205), and the
-- archiving step raises archiving, then takes that lock exclusively (so
-- every transaction that may have read the old value has ended), and
-- only then copies those days' keys and raises merged: a key is never in
-- neither. A key written both ways is one row (ON CONFLICT DO NOTHING).
--
-- report_keys stays as it was (every key of every day kept): retention
-- deletes its days by the index's leading column, and the archive's rows
-- of the days dropped by a scan (DeleteReportsBefore).
CREATE TABLE report_keys_archive (
  key bigint NOT NULL,
  id bigint NOT NULL -- reports.id
);
CREATE UNIQUE INDEX report_keys_archive_key ON report_keys_archive (key, id);

CREATE TABLE report_keys_merge (
  one boolean PRIMARY KEY DEFAULT true CHECK (one),
  archiving bigint NOT NULL, -- days (id >> 32) whose late keys the trigger archives
  merged bigint NOT NULL     -- days (id >> 32) whose keys are all archived
);
INSERT INTO report_keys_merge VALUES (true, -1, -1);

CREATE OR REPLACE FUNCTION report_keys_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock_shared(x'72646205'::bigint);
  INSERT INTO report_keys (key, id)
  SELECT k.key, n.id FROM new_reports n,
    LATERAL (VALUES (hashtextextended('h' || n.hash, 0)),
      (hashtextextended('c' || n.certname || chr(1) || n.configuration_version, 0))) k(key)
  WHERE k.key IS NOT NULL;
  INSERT INTO report_keys_archive (key, id)
  SELECT k.key, n.id FROM report_keys_merge m, new_reports n,
    LATERAL (VALUES (hashtextextended('h' || n.hash, 0)),
      (hashtextextended('c' || n.certname || chr(1) || n.configuration_version, 0))) k(key)
  WHERE (n.id >> 32) <= m.archiving AND k.key IS NOT NULL
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;
