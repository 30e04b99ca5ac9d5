-- latest_reports: a copy of each node's latest report row, the one
-- certnames.latest_report_id points at (a node without one has no row).
-- The batch statement keeps it in the same statement that moves the
-- pointer, and retention deletes it with the report. It holds one row per
-- node, so the queries of the latest reports (Puppetboard's index and
-- nodes pages, the PE console's summary, `latest_report? = true` in PQL)
-- read the fleet's rows instead of probing or scanning every day
-- partition of reports: their cost no longer depends on the days kept.
CREATE TABLE latest_reports (LIKE reports INCLUDING DEFAULTS);
ALTER TABLE latest_reports ADD PRIMARY KEY (certname);
CREATE UNIQUE INDEX latest_reports_id ON latest_reports (id);

INSERT INTO latest_reports
SELECT r.* FROM certnames c JOIN reports r ON r.id = c.latest_report_id;
ANALYZE latest_reports;
