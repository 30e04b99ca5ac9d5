SELECT r.catalog_uuid, r.receive_time, r.producer, r.hash, r.transaction_uuid, r.puppet_version, r.noop, CAST(NULL AS TEXT), (SELECT d.logs FROM report_data d WHERE d.id = r.id), r.hash, r.report_format, r.start_time, r.producer_timestamp, r.type, r.cached_catalog_status, r.end_time, (SELECT json_agg(ev)::text FROM (SELECT e.status,
	 (timestamptz 'epoch' + e.timestamp * interval '1 millisecond') AS timestamp,
	 e.resource_type, e.resource_title, e.property, NULL::boolean AS corrective_change,
	 e.new_value::jsonb AS new_value, e.old_value::jsonb AS old_value, e.message, e.file, e.line,
	 e.containment_path, e.containing_class, e.name
	 FROM resource_events e WHERE e.report_id = r.id) ev), r.hash, r.status, r.configuration_version, r.environment, r.code_id, r.noop_pending, r.certname, (SELECT d.metrics FROM report_data d WHERE d.id = r.id), r.hash, r.job_id FROM reports r WHERE ((r.certname = $1 AND (r.hash = $2 OR r.configuration_version = $3)) AND r.type = 'agent')