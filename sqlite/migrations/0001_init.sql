-- reportdb embedded schema (SQLite). Timestamps are Unix milliseconds (UTC).
CREATE TABLE IF NOT EXISTS certnames (
  id INTEGER PRIMARY KEY,
  certname TEXT NOT NULL UNIQUE,
  latest_report_id INTEGER,
  latest_report_timestamp INTEGER,
  deactivated INTEGER,
  expired INTEGER
);

CREATE TABLE IF NOT EXISTS environments (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE
);

CREATE TABLE IF NOT EXISTS reports (
  id INTEGER PRIMARY KEY,
  hash TEXT NOT NULL UNIQUE,
  certname TEXT NOT NULL,
  puppet_version TEXT NOT NULL,
  report_format INTEGER NOT NULL,
  configuration_version TEXT NOT NULL,
  start_time INTEGER NOT NULL,
  end_time INTEGER NOT NULL,
  producer_timestamp INTEGER NOT NULL,
  receive_time INTEGER NOT NULL,
  producer TEXT,
  environment TEXT NOT NULL,
  status TEXT,
  noop INTEGER,
  noop_pending INTEGER,
  corrective_change INTEGER,
  transaction_uuid TEXT,
  catalog_uuid TEXT,
  code_id TEXT,
  job_id TEXT,
  cached_catalog_status TEXT,
  type TEXT NOT NULL,
  ev_success INTEGER NOT NULL DEFAULT 0,
  ev_failure INTEGER NOT NULL DEFAULT 0,
  ev_noop INTEGER NOT NULL DEFAULT 0,
  ev_skipped INTEGER NOT NULL DEFAULT 0,
  ev_total INTEGER NOT NULL DEFAULT 0,
  metrics TEXT,
  logs TEXT,
  resource_events TEXT
);
CREATE INDEX IF NOT EXISTS reports_certname_start ON reports (certname, start_time);
-- covering the implicit type = 'agent' filter (and the status of daily
-- charts), so paging, counting and per-day counts read only the index,
-- not the wide rows that hold metrics and logs
CREATE INDEX IF NOT EXISTS reports_end_time ON reports (end_time, type);
CREATE INDEX IF NOT EXISTS reports_producer_timestamp ON reports (producer_timestamp, type, status);

CREATE TABLE IF NOT EXISTS resource_events (
  report_id INTEGER NOT NULL REFERENCES reports (id) ON DELETE CASCADE,
  status TEXT NOT NULL,
  timestamp INTEGER NOT NULL,
  resource_type TEXT NOT NULL,
  resource_title TEXT NOT NULL,
  property TEXT,
  new_value TEXT NOT NULL,
  old_value TEXT NOT NULL,
  message TEXT,
  file TEXT,
  line INTEGER,
  containment_path TEXT,
  containing_class TEXT,
  name TEXT,
  corrective_change INTEGER
);
CREATE INDEX IF NOT EXISTS resource_events_report ON resource_events (report_id);
CREATE INDEX IF NOT EXISTS resource_events_timestamp ON resource_events (timestamp);
CREATE INDEX IF NOT EXISTS resource_events_title ON resource_events (resource_title);
