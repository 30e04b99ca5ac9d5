-- Nodes become inactive (the "deactivate node" command, node-ttl) and
-- active again with a newer report. Few are inactive at any time, and a
-- query with PuppetDB's implicit "active nodes only" first asks whether
-- any is (engine.resolveNodeState): this index holds the inactive ones
-- alone.
CREATE INDEX certnames_inactive ON certnames (certname)
  WHERE deactivated IS NOT NULL OR expired IS NOT NULL;
