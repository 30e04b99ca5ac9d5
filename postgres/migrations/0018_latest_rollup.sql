-- latest_rollup: the nodes' latest reports' event counts kept at write
-- time (query/sqlgen/latestrollup.go): per report type, environment and
-- status, the sums of ev_success, ev_failure, ev_noop, ev_skipped and
-- ev_total, and the numbers of reports with events of another status, with
-- failures, skips, successes, noops, and with any event, as deltas
-- compaction merges like the other rollups' (width and bucket are always
-- 0: one bucket; no index, the table is a few rows once merged).
-- Dashboards' counts of the latest reports' events by status, and how many
-- nodes have each, read a few rows instead of every node's copy.
--
-- Statement-level triggers with transition tables keep it: whatever
-- inserts, updates or deletes rows of latest_reports (the batch statement,
-- retention) adds the new rows' values and subtracts the old rows' in the
-- same statement, with the row versions it actually changed, so the sums
-- stay those of latest_reports whatever order concurrent writers commit
-- in. Combinations whose delta is zero (a node's new latest report counts
-- as its old one did) write nothing.
CREATE TABLE latest_rollup (
  width integer NOT NULL DEFAULT 0,
  bucket bigint NOT NULL DEFAULT 0,
  type text COLLATE "C" NOT NULL,
  environment text COLLATE "C" NOT NULL,
  status text COLLATE "C",
  ev_success bigint NOT NULL,
  ev_failure bigint NOT NULL,
  ev_noop bigint NOT NULL,
  ev_skipped bigint NOT NULL,
  ev_total bigint NOT NULL,
  other bigint NOT NULL,
  failures bigint NOT NULL,
  skips bigint NOT NULL,
  successes bigint NOT NULL,
  noops bigint NOT NULL,
  nodes bigint NOT NULL,
  merged boolean NOT NULL DEFAULT false
) WITH (fillfactor = 80);

-- the deltas of a statement's rows: new rows added, old rows subtracted
CREATE FUNCTION latest_rollup_delta() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
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
      FROM (SELECT 1 AS sign, type, environment, status, ev_success, ev_failure, ev_noop, ev_skipped, ev_total FROM new_rows) x
      GROUP BY 1, 2, 3) d
    WHERE d.ev_success <> 0 OR d.ev_failure <> 0 OR d.ev_noop <> 0 OR d.ev_skipped <> 0 OR d.ev_total <> 0 OR d.other <> 0 OR d.failures <> 0 OR d.skips <> 0 OR d.successes <> 0 OR d.noops <> 0 OR d.nodes <> 0;
  ELSIF TG_OP = 'UPDATE' THEN
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
      FROM (SELECT 1 AS sign, type, environment, status, ev_success, ev_failure, ev_noop, ev_skipped, ev_total FROM new_rows UNION ALL SELECT -1, type, environment, status, ev_success, ev_failure, ev_noop, ev_skipped, ev_total FROM old_rows) x
      GROUP BY 1, 2, 3) d
    WHERE d.ev_success <> 0 OR d.ev_failure <> 0 OR d.ev_noop <> 0 OR d.ev_skipped <> 0 OR d.ev_total <> 0 OR d.other <> 0 OR d.failures <> 0 OR d.skips <> 0 OR d.successes <> 0 OR d.noops <> 0 OR d.nodes <> 0;
  ELSE
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
      FROM (SELECT -1 AS sign, type, environment, status, ev_success, ev_failure, ev_noop, ev_skipped, ev_total FROM old_rows) x
      GROUP BY 1, 2, 3) d
    WHERE d.ev_success <> 0 OR d.ev_failure <> 0 OR d.ev_noop <> 0 OR d.ev_skipped <> 0 OR d.ev_total <> 0 OR d.other <> 0 OR d.failures <> 0 OR d.skips <> 0 OR d.successes <> 0 OR d.noops <> 0 OR d.nodes <> 0;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER latest_rollup_insert AFTER INSERT ON latest_reports
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION latest_rollup_delta();
CREATE TRIGGER latest_rollup_update AFTER UPDATE ON latest_reports
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION latest_rollup_delta();
CREATE TRIGGER latest_rollup_delete AFTER DELETE ON latest_reports
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION latest_rollup_delta();

-- what is already stored
INSERT INTO latest_rollup (type, environment, status, ev_success, ev_failure, ev_noop, ev_skipped, ev_total, other, failures, skips, successes, noops, nodes, merged)
SELECT d.*, true FROM (
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
  FROM (SELECT type, environment, status, ev_success, ev_failure, ev_noop, ev_skipped, ev_total FROM latest_reports) x
  GROUP BY 1, 2, 3) d
WHERE d.ev_success <> 0 OR d.ev_failure <> 0 OR d.ev_noop <> 0 OR d.ev_skipped <> 0 OR d.ev_total <> 0 OR d.other <> 0 OR d.failures <> 0 OR d.skips <> 0 OR d.successes <> 0 OR d.noops <> 0 OR d.nodes <> 0;
ANALYZE latest_rollup;
