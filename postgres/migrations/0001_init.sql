-- reportdb schema (PostgreSQL). Timestamps are Unix milliseconds (UTC);
-- text compares bytewise (COLLATE "C"), as on PuppetDB's reference database.
CREATE TABLE certnames (
  id bigserial PRIMARY KEY,
  certname text COLLATE "C" NOT NULL UNIQUE,
  latest_report_id bigint,
  latest_report_timestamp bigint,
  deactivated bigint,
  expired bigint
);

CREATE TABLE environments (
  id bigserial PRIMARY KEY,
  name text COLLATE "C" NOT NULL UNIQUE
);

-- A report's id carries the day (UTC) of its producer_timestamp in its
-- upper bits: id = (day + 100000) * 2^32 + n (see postgres/ids.go), so the
-- events of a report live in that day's partition and a join on
-- report_id alone reaches exactly one partition.
CREATE SEQUENCE reports_seq;

CREATE TABLE reports (
  id bigint PRIMARY KEY,
  hash text COLLATE "C" NOT NULL UNIQUE,
  certname text COLLATE "C" NOT NULL,
  puppet_version text COLLATE "C" NOT NULL,
  report_format smallint NOT NULL,
  configuration_version text COLLATE "C" NOT NULL,
  start_time bigint NOT NULL,
  end_time bigint NOT NULL,
  producer_timestamp bigint NOT NULL,
  receive_time bigint NOT NULL,
  producer text COLLATE "C",
  environment text COLLATE "C" NOT NULL,
  status text COLLATE "C",
  noop boolean,
  noop_pending boolean,
  corrective_change boolean,
  transaction_uuid text COLLATE "C",
  catalog_uuid text COLLATE "C",
  code_id text COLLATE "C",
  job_id text COLLATE "C",
  cached_catalog_status text COLLATE "C",
  type text COLLATE "C" NOT NULL,
  -- the report's events by status (event-counts by certname read these)
  ev_success integer NOT NULL DEFAULT 0,
  ev_failure integer NOT NULL DEFAULT 0,
  ev_noop integer NOT NULL DEFAULT 0,
  ev_skipped integer NOT NULL DEFAULT 0,
  ev_total integer NOT NULL DEFAULT 0
);
CREATE INDEX reports_certname_start ON reports (certname, start_time);
CREATE INDEX reports_end_time ON reports (end_time, id) WHERE type = 'agent';
CREATE INDEX reports_producer_timestamp ON reports (producer_timestamp);

-- The submitted metrics and logs (rendered as PostgreSQL renders jsonb) are
-- kept apart from reports so that scans of reports stay narrow; partitioned
-- by day like the events, so retention drops them whole too.
CREATE TABLE report_data (
  id bigint NOT NULL,
  metrics text COMPRESSION lz4,
  logs text COMPRESSION lz4
) PARTITION BY RANGE (id);
CREATE UNIQUE INDEX report_data_id ON report_data (id);

-- Events are partitioned by day of their report's producer_timestamp,
-- i.e. by ranges of report_id: retention drops whole partitions.
CREATE TABLE resource_events (
  report_id bigint NOT NULL,
  status text COLLATE "C" NOT NULL,
  timestamp bigint NOT NULL,
  resource_type text COLLATE "C" NOT NULL,
  resource_title text COLLATE "C" NOT NULL,
  property text COLLATE "C",
  new_value text COLLATE "C" NOT NULL,
  old_value text COLLATE "C" NOT NULL,
  message text COLLATE "C",
  file text COLLATE "C",
  line integer,
  containment_path text[] COLLATE "C",
  containing_class text COLLATE "C",
  name text COLLATE "C",
  corrective_change boolean
) PARTITION BY RANGE (report_id);
CREATE INDEX resource_events_report ON resource_events (report_id);
CREATE INDEX resource_events_timestamp ON resource_events (timestamp);
CREATE INDEX resource_events_title ON resource_events (resource_title);
