-- Events by status within a time window (failures of the last hour, changes
-- of the day per resource type): equality on status, range on timestamp,
-- and resource_type carried in the index so that per-type counts read only
-- the index, not the wide event rows.
CREATE INDEX IF NOT EXISTS resource_events_status ON resource_events (status, timestamp, resource_type);
