-- resource_latest loses its index on ts, so that an update moving a key's
-- newest timestamp changes no indexed column: it is then a HOT update (a
-- new version on the same page, no index entry), where every update used
-- to add an entry to the wide primary key and to the ts index and place
-- the new version on another page. At 10,000 nodes and 14 days (3.3M
-- keys) those index writes, spread over a primary key far larger than
-- the shared buffers, were most of what made ingest slower than into an
-- empty database (full-page images in the WAL after every checkpoint).
-- The rows whose timestamp is in a range are found from the events in
-- that range instead (query/sqlgen/distinct.go, latestOfEventKeys).
-- Pages are filled to 80 %, leaving room for the new versions; pages
-- written before this migration get that room as their old versions are
-- pruned.
DROP INDEX resource_latest_ts;
ALTER TABLE resource_latest SET (fillfactor = 80);
