-- resource_latest loses its index on ts (as on PostgreSQL, 0008 there):
-- the rows whose timestamp is in a range are found from the events in
-- that range (query/sqlgen/distinct.go, latestOfEventKeys), and an update
-- of a key's newest timestamp no longer rewrites an index entry.
DROP INDEX resource_latest_ts;
