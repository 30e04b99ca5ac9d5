-- latest_reports: a copy of each node's latest report row, the one
-- certnames.latest_report_id points at (a node without one has no row).
-- The batch statement keeps it in the same statement that moves the
-- pointer, and retention deletes it with the report. It holds one row per
-- node, so the queries of the latest reports (Puppetboard's index and
-- nodes pages, the PE console's summary, `latest_report? = true` in PQL)
-- read the fleet's rows instead of probing or scanning every day
-- partition of reports: their cost no longer depends on the days kept.
--
-- Its only index is the primary key (certname), which an update never
-- changes, and its pages are kept half empty: every update of a node's row
-- is then a HOT update (a new version on the same page, no index entry),
-- and pages are pruned as they are read, so the table stays about twice
-- its live size without VACUUM. With an index on id, every update added
-- index entries and a new tuple elsewhere: a 14-day import of 10,000 nodes
-- (6.6M updates of 10,000 rows) left it at 880 MB.
CREATE TABLE latest_reports (LIKE reports INCLUDING DEFAULTS) WITH (fillfactor = 50);
ALTER TABLE latest_reports ADD PRIMARY KEY (certname);

INSERT INTO latest_reports
SELECT r.* FROM certnames c JOIN reports r ON r.id = c.latest_report_id;
ANALYZE latest_reports;
