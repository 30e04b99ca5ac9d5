package puppetreport

import (
	"strconv"

	"reportdb/jsonv"
)

// WireKeys are the 21 keys of the wire v8 document, in the order the
// terminus sends them.
var WireKeys = []string{"certname", "job_id", "puppet_version", "report_format",
	"configuration_version", "producer_timestamp", "start_time", "end_time", "environment",
	"transaction_uuid", "status", "noop", "noop_pending", "corrective_change", "logs",
	"metrics", "resources", "catalog_uuid", "code_id", "cached_catalog_status", "producer"}

func obj(kv ...any) *jsonv.Object {
	o := &jsonv.Object{Keys: make([]string, 0, len(kv)/2), Values: make([]any, 0, len(kv)/2)}
	for i := 0; i < len(kv); i += 2 {
		o.Keys = append(o.Keys, kv[i].(string))
		o.Values = append(o.Values, kv[i+1])
	}
	return o
}

// wire renders a validated report as the terminus's v8 command body.
func (r *report) wire(producerTimestamp wireTime, producer *string) *jsonv.Object {
	logs := make([]any, len(r.logs))
	for i, l := range r.logs {
		logs[i] = obj("file", l.file, "line", l.line, "level", l.level, "message", l.message,
			"source", l.source, "tags", l.tags, "time", l.time.String())
	}
	metrics := make([]any, len(r.metrics))
	for i, m := range r.metrics {
		metrics[i] = obj("category", m.category, "name", m.name, "value", m.value)
	}
	resources := make([]any, len(r.resources))
	for i, res := range r.resources {
		events := make([]any, len(res.events))
		for j, e := range res.events {
			events[j] = obj("status", e.status, "timestamp", e.timestamp.String(), "name", e.name,
				"property", e.property, "new_value", e.newValue, "old_value", e.oldValue,
				"corrective_change", e.correctiveChange, "message", e.message)
		}
		resources[i] = obj("skipped", res.skipped, "timestamp", res.timestamp.String(),
			"resource_type", res.resourceType, "resource_title", res.title, "file", res.file,
			"line", res.line, "containment_path", res.containmentPath,
			"corrective_change", res.correctiveChange, "events", events)
	}
	var prod any
	if producer != nil {
		prod = *producer
	}
	return obj(
		"certname", r.host,
		"job_id", r.jobID,
		"puppet_version", r.puppetVersion,
		"report_format", jsonv.Number(strconv.Itoa(r.reportFormat)),
		"configuration_version", r.configVersion,
		"producer_timestamp", producerTimestamp.String(),
		"start_time", r.start.String(),
		"end_time", r.end.String(),
		"environment", r.environment,
		"transaction_uuid", r.transactionUUID,
		"status", r.status,
		"noop", r.noop,
		"noop_pending", r.noopPending,
		"corrective_change", r.correctiveChange,
		"logs", logs,
		"metrics", metrics,
		"resources", resources,
		"catalog_uuid", r.catalogUUID,
		"code_id", r.codeID,
		"cached_catalog_status", r.cachedCatalogStatus,
		"producer", prod,
	)
}
