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
-- 14 (1.80x and 2.58x in two sets), a descent into an uncached
-- part of the index per day.
--
-- report_keys_archive holds the same rows as report_keys for the days up
-- to report_keys_merge.merged (days of report ids, id >> 32), copied once
-- a day by maintenance (postgres.DB.ArchiveKeys) in key order, so that
-- the copy writes the index's pages in order, once each, off the ingest
-- path. A lookup (postgres.Dialect.ReportKeysSQL) reads the archive and
-- report_keys' days after merged (and those marked late, below), in one
-- snapshot.
--
-- Reports of days already archived still arrive: late ones, and a backfill
-- (an import of history into a running server) that stores whole past
-- days. Their keys go only to report_keys, as every key, and the trigger
-- marks their day in report_keys_late (with a new generation number each
-- time); a lookup also reads report_keys for the marked days. Writing them
-- to the archive instead would put each key at a random place of an index
-- that holds every day kept: the cost the index by day removed from ingest.
-- Maintenance copies a marked day's keys again and removes the mark in
-- one transaction, only if its generation is still the one it read (a
-- batch that marked it meanwhile keeps it marked, so its keys are read
-- from report_keys until the next run copies them).
--
-- Which days count as archived: the trigger reads report_keys_merge.archiving
-- under a shared advisory lock (0x72646205). The archiver raises archiving,
-- then takes that lock exclusively (so that every transaction that may have
-- read the old value has ended), and only then copies those days' keys and
-- raises merged: a key is in the archive, or in a day a lookup reads from
-- report_keys (after merged, or marked).
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
  archiving bigint NOT NULL, -- days (id >> 32) whose new reports the trigger marks late
  merged bigint NOT NULL     -- days (id >> 32) whose keys are all archived
);
INSERT INTO report_keys_merge VALUES (true, -1, -1);

CREATE TABLE report_keys_late (
  day bigint PRIMARY KEY, -- days (id >> 32) archived, with keys stored since
  gen bigint NOT NULL
);
CREATE SEQUENCE report_keys_late_gen;

-- the days a batch marks are locked in order, so that two batches never
-- wait for each other's marks in a cycle
CREATE OR REPLACE FUNCTION report_keys_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock_shared(x'72646205'::bigint);
  INSERT INTO report_keys (key, id)
  SELECT k.key, n.id FROM new_reports n,
    LATERAL (VALUES (hashtextextended('h' || n.hash, 0)),
      (hashtextextended('c' || n.certname || chr(1) || n.configuration_version, 0))) k(key)
  WHERE k.key IS NOT NULL;
  INSERT INTO report_keys_late (day, gen)
  SELECT d.day, nextval('report_keys_late_gen') FROM (SELECT DISTINCT n.id >> 32 AS day
    FROM new_reports n, report_keys_merge m WHERE (n.id >> 32) <= m.archiving) d
  ORDER BY d.day
  ON CONFLICT (day) DO UPDATE SET gen = EXCLUDED.gen;
  RETURN NULL;
END $$;
