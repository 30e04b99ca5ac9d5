-- latest_rollup: the nodes' latest reports' event counts kept at write
-- time (query/sqlgen/latestrollup.go): per report type, environment and
-- status, the sums of ev_success, ev_failure, ev_noop, ev_skipped and
-- ev_total, and the numbers of reports with events of another status, with
-- failures, skips, successes, noops, and with any event, as deltas
-- compaction merges like the other rollups' (width and bucket are always
-- 0: one bucket). Dashboards' counts of the latest reports' events by
-- status, and how many nodes have each, read a few rows instead of every
-- node's latest report.
--
-- Triggers on certnames keep it: whatever moves, sets or clears a node's
-- latest_report_id (ingest, retention) subtracts the old report's counts
-- and adds the new one's, read from reports while both are stored
-- (retention clears the pointers before it deletes the reports).
CREATE TABLE latest_rollup (
  width INTEGER NOT NULL DEFAULT 0,
  bucket INTEGER NOT NULL DEFAULT 0,
  type TEXT NOT NULL,
  environment TEXT NOT NULL,
  status TEXT,
  ev_success INTEGER NOT NULL,
  ev_failure INTEGER NOT NULL,
  ev_noop INTEGER NOT NULL,
  ev_skipped INTEGER NOT NULL,
  ev_total INTEGER NOT NULL,
  other INTEGER NOT NULL,
  failures INTEGER NOT NULL,
  skips INTEGER NOT NULL,
  successes INTEGER NOT NULL,
  noops INTEGER NOT NULL,
  nodes INTEGER NOT NULL,
  merged INTEGER NOT NULL DEFAULT 0
);

CREATE TRIGGER latest_rollup_insert AFTER INSERT ON certnames WHEN NEW.latest_report_id IS NOT NULL
BEGIN
  INSERT INTO latest_rollup (type, environment, status, ev_success, ev_failure, ev_noop, ev_skipped, ev_total, other, failures, skips, successes, noops, nodes)
  SELECT d.* FROM (
    SELECT x.type, x.environment, x.status,
    sum(x.sign * x.ev_success) AS ev_success,
    sum(x.sign * x.ev_failure) AS ev_failure,
    sum(x.sign * x.ev_noop) AS ev_noop,
    sum(x.sign * x.ev_skipped) AS ev_skipped,
    sum(x.sign * x.ev_total) AS ev_total,
    sum(x.sign * CASE WHEN x.ev_total > x.ev_success + x.ev_failure + x.ev_noop + x.ev_skipped THEN 1 ELSE 0 END) AS other,
    sum(x.sign * CASE WHEN x.ev_failure > 0 THEN 1 ELSE 0 END) AS failures,
    sum(x.sign * CASE WHEN x.ev_skipped > 0 THEN 1 ELSE 0 END) AS skips,
    sum(x.sign * CASE WHEN x.ev_success > 0 THEN 1 ELSE 0 END) AS successes,
    sum(x.sign * CASE WHEN x.ev_noop > 0 THEN 1 ELSE 0 END) AS noops,
    sum(x.sign * CASE WHEN x.ev_total > 0 THEN 1 ELSE 0 END) AS nodes
    FROM (SELECT 1 AS sign, r.type, r.environment, r.status, r.ev_success, r.ev_failure, r.ev_noop, r.ev_skipped, r.ev_total FROM reports r WHERE r.id = NEW.latest_report_id) x
    GROUP BY 1, 2, 3) d
  WHERE d.ev_success <> 0 OR d.ev_failure <> 0 OR d.ev_noop <> 0 OR d.ev_skipped <> 0 OR d.ev_total <> 0 OR d.other <> 0 OR d.failures <> 0 OR d.skips <> 0 OR d.successes <> 0 OR d.noops <> 0 OR d.nodes <> 0;
END;

CREATE TRIGGER latest_rollup_update AFTER UPDATE OF latest_report_id ON certnames
WHEN OLD.latest_report_id IS NOT NEW.latest_report_id
BEGIN
  INSERT INTO latest_rollup (type, environment, status, ev_success, ev_failure, ev_noop, ev_skipped, ev_total, other, failures, skips, successes, noops, nodes)
  SELECT d.* FROM (
    SELECT x.type, x.environment, x.status,
    sum(x.sign * x.ev_success) AS ev_success,
    sum(x.sign * x.ev_failure) AS ev_failure,
    sum(x.sign * x.ev_noop) AS ev_noop,
    sum(x.sign * x.ev_skipped) AS ev_skipped,
    sum(x.sign * x.ev_total) AS ev_total,
    sum(x.sign * CASE WHEN x.ev_total > x.ev_success + x.ev_failure + x.ev_noop + x.ev_skipped THEN 1 ELSE 0 END) AS other,
    sum(x.sign * CASE WHEN x.ev_failure > 0 THEN 1 ELSE 0 END) AS failures,
    sum(x.sign * CASE WHEN x.ev_skipped > 0 THEN 1 ELSE 0 END) AS skips,
    sum(x.sign * CASE WHEN x.ev_success > 0 THEN 1 ELSE 0 END) AS successes,
    sum(x.sign * CASE WHEN x.ev_noop > 0 THEN 1 ELSE 0 END) AS noops,
    sum(x.sign * CASE WHEN x.ev_total > 0 THEN 1 ELSE 0 END) AS nodes
    FROM (SELECT 1 AS sign, r.type, r.environment, r.status, r.ev_success, r.ev_failure, r.ev_noop, r.ev_skipped, r.ev_total FROM reports r WHERE r.id = NEW.latest_report_id UNION ALL SELECT -1 AS sign, r.type, r.environment, r.status, r.ev_success, r.ev_failure, r.ev_noop, r.ev_skipped, r.ev_total FROM reports r WHERE r.id = OLD.latest_report_id) x
    GROUP BY 1, 2, 3) d
  WHERE d.ev_success <> 0 OR d.ev_failure <> 0 OR d.ev_noop <> 0 OR d.ev_skipped <> 0 OR d.ev_total <> 0 OR d.other <> 0 OR d.failures <> 0 OR d.skips <> 0 OR d.successes <> 0 OR d.noops <> 0 OR d.nodes <> 0;
END;

CREATE TRIGGER latest_rollup_delete AFTER DELETE ON certnames WHEN OLD.latest_report_id IS NOT NULL
BEGIN
  INSERT INTO latest_rollup (type, environment, status, ev_success, ev_failure, ev_noop, ev_skipped, ev_total, other, failures, skips, successes, noops, nodes)
  SELECT d.* FROM (
    SELECT x.type, x.environment, x.status,
    sum(x.sign * x.ev_success) AS ev_success,
    sum(x.sign * x.ev_failure) AS ev_failure,
    sum(x.sign * x.ev_noop) AS ev_noop,
    sum(x.sign * x.ev_skipped) AS ev_skipped,
    sum(x.sign * x.ev_total) AS ev_total,
    sum(x.sign * CASE WHEN x.ev_total > x.ev_success + x.ev_failure + x.ev_noop + x.ev_skipped THEN 1 ELSE 0 END) AS other,
    sum(x.sign * CASE WHEN x.ev_failure > 0 THEN 1 ELSE 0 END) AS failures,
    sum(x.sign * CASE WHEN x.ev_skipped > 0 THEN 1 ELSE 0 END) AS skips,
    sum(x.sign * CASE WHEN x.ev_success > 0 THEN 1 ELSE 0 END) AS successes,
    sum(x.sign * CASE WHEN x.ev_noop > 0 THEN 1 ELSE 0 END) AS noops,
    sum(x.sign * CASE WHEN x.ev_total > 0 THEN 1 ELSE 0 END) AS nodes
    FROM (SELECT -1 AS sign, r.type, r.environment, r.status, r.ev_success, r.ev_failure, r.ev_noop, r.ev_skipped, r.ev_total FROM reports r WHERE r.id = OLD.latest_report_id) x
    GROUP BY 1, 2, 3) d
  WHERE d.ev_success <> 0 OR d.ev_failure <> 0 OR d.ev_noop <> 0 OR d.ev_skipped <> 0 OR d.ev_total <> 0 OR d.other <> 0 OR d.failures <> 0 OR d.skips <> 0 OR d.successes <> 0 OR d.noops <> 0 OR d.nodes <> 0;
END;

-- what is already stored
INSERT INTO latest_rollup (type, environment, status, ev_success, ev_failure, ev_noop, ev_skipped, ev_total, other, failures, skips, successes, noops, nodes, merged)
SELECT d.*, 1 FROM (
  SELECT x.type, x.environment, x.status,
  sum(x.ev_success) AS ev_success,
  sum(x.ev_failure) AS ev_failure,
  sum(x.ev_noop) AS ev_noop,
  sum(x.ev_skipped) AS ev_skipped,
  sum(x.ev_total) AS ev_total,
  sum(CASE WHEN x.ev_total > x.ev_success + x.ev_failure + x.ev_noop + x.ev_skipped THEN 1 ELSE 0 END) AS other,
  sum(CASE WHEN x.ev_failure > 0 THEN 1 ELSE 0 END) AS failures,
  sum(CASE WHEN x.ev_skipped > 0 THEN 1 ELSE 0 END) AS skips,
  sum(CASE WHEN x.ev_success > 0 THEN 1 ELSE 0 END) AS successes,
  sum(CASE WHEN x.ev_noop > 0 THEN 1 ELSE 0 END) AS noops,
  sum(CASE WHEN x.ev_total > 0 THEN 1 ELSE 0 END) AS nodes
  FROM (SELECT r.type, r.environment, r.status, r.ev_success, r.ev_failure, r.ev_noop, r.ev_skipped, r.ev_total FROM certnames c JOIN reports r ON r.id = c.latest_report_id) x
  GROUP BY 1, 2, 3) d
WHERE d.ev_success <> 0 OR d.ev_failure <> 0 OR d.ev_noop <> 0 OR d.ev_skipped <> 0 OR d.ev_total <> 0 OR d.other <> 0 OR d.failures <> 0 OR d.skips <> 0 OR d.successes <> 0 OR d.noops <> 0 OR d.nodes <> 0;
