-- Resource titles are free text: an Exec's title is its command, a
-- Notify's its message, and either may be a whole script. PostgreSQL
-- refuses a btree entry over about 2.7 kB (after compression), and three
-- indexes held titles as they are (resource_events_title,
-- resource_events_timestamp and resource_latest's primary key), so a
-- report with such a title failed its transaction and was not stored.
-- PuppetDB 7 fails the same way (PDB-5135: it only logs the index size).
--
-- The indexes now hold title_key(resource_title): a title of up to 1,000
-- bytes is its own key (the index is unchanged for every title seen in
-- practice), a longer one its first 200 characters (at most 800 bytes)
-- and its MD5 (32). Queries compare keys beside titles
-- (postgres.Dialect.TitleKey): equality, IN and a regular expression's
-- literal prefix of up to 200 characters (a title starts with a prefix
-- of up to 200 characters exactly when its key does); answers stay exact,
-- as the titles themselves are still compared. Keys of two different
-- titles are equal only if one title of up to 1,000 bytes spells another
-- title's prefix and MD5: resource_latest's key would then merge them.
--
-- title_key itself and the new indexes are created before this runs,
-- the indexes partition by partition and CONCURRENTLY (titleKeyFunction
-- and titleKeyIndexes in postgres/migrate_concurrent.go: the function is
-- defined there only, so that no second definition can replace it under
-- indexes built with the first): here they take the old ones' places, a
-- moment's exclusive lock.

CREATE INDEX IF NOT EXISTS resource_events_title_key ON resource_events (title_key(resource_title));
DROP INDEX resource_events_title;
ALTER INDEX resource_events_title_key RENAME TO resource_events_title;

CREATE INDEX IF NOT EXISTS resource_events_timestamp_key
  ON resource_events (timestamp, status, resource_type, title_key(resource_title));
DROP INDEX resource_events_timestamp;
ALTER INDEX resource_events_timestamp_key RENAME TO resource_events_timestamp;

CREATE UNIQUE INDEX IF NOT EXISTS resource_latest_key
  ON resource_latest (certname, resource_type, title_key(resource_title), property_key, name_key);
ALTER TABLE resource_latest DROP CONSTRAINT resource_latest_pkey;
