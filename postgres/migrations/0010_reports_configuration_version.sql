-- An index on configuration_version, for Puppetboard's report page, which
-- finds a report by ["or", ["=", "hash", H], ["=", "configuration_version", H]]
-- (with its certname). Without it the OR could not use the hash index: each
-- day's partition read every report of the node through
-- (certname, start_time) and filtered, so the lookup read all the node's
-- reports kept (48 a day at 30-minute runs) and grew with the days kept.
-- With it, each partition answers from two index probes (a BitmapOr of
-- hash and configuration_version). It is created on every partition, and
-- on the partitions created later.
CREATE INDEX reports_configuration_version ON reports (configuration_version);
