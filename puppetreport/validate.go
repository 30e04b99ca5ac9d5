package puppetreport

import (
	"strconv"

	"reportdb/jsonv"
)

// report is a validated native report, reduced to what the wire needs.
type report struct {
	host, puppetVersion, configVersion string
	status, environment                string
	reportFormat                       int
	start, end                         wireTime
	noop, noopPending                  bool

	// string or nil
	transactionUUID, catalogUUID, codeID, jobID, cachedCatalogStatus any
	// bool or nil
	correctiveChange any

	logs      []logEntry
	metrics   []metricRow
	resources []resource // kept ones only
}

type logEntry struct {
	file, line             any // string/nil, Number/nil
	level, message, source string
	tags                   []any
	time                   wireTime
}

type metricRow struct {
	category, name string
	value          jsonv.Number // Ruby rendering
}

type resource struct {
	skipped             bool
	timestamp           wireTime
	resourceType, title string
	file, line          any
	containmentPath     []any
	correctiveChange    any
	events              []event
}

type event struct {
	status                  string
	timestamp               wireTime
	name, property, message any // string or nil
	newValue, oldValue      string
	correctiveChange        any
}

var (
	reportKeys = keySet("host", "time", "configuration_version", "transaction_uuid",
		"report_format", "puppet_version", "agent_version", "status", "transaction_completed",
		"noop", "noop_pending", "environment", "logs", "metrics", "resource_statuses",
		"corrective_change", "master_used", "server_used", "catalog_uuid", "code_id",
		"job_id", "cached_catalog_status")
	logKeys    = keySet("level", "message", "source", "tags", "time", "file", "line")
	metricKeys = keySet("name", "label", "values")
	categories = keySet("time", "resources", "events", "changes")
	statusKeys = keySet("resource_type", "title", "change_count", "out_of_sync_count",
		"tags", "events", "skipped", "containment_path", "corrective_change", "resource",
		"provider_used", "file", "line", "evaluation_time", "time", "out_of_sync",
		"changed", "failed", "failed_to_restart")
	eventKeys = keySet("audited", "property", "message", "name", "status", "time",
		"corrective_change", "previous_value", "desired_value", "historical_value", "redacted")
)

// validate checks the whole document and returns its validated form; it
// never returns a partial result.
func validate(doc any) (*report, error) {
	f, err := object("", doc, reportKeys)
	if err != nil {
		return nil, err
	}
	r := &report{}
	if r.host, err = f.reqString("host"); err != nil {
		return nil, err
	}
	start, err := f.reqTime("time")
	if err != nil {
		return nil, err
	}
	r.start = start.trunc()
	if r.reportFormat, err = reportFormat(f); err != nil {
		return nil, err
	}
	if r.puppetVersion, err = puppetVersion(f); err != nil {
		return nil, err
	}
	if r.configVersion, err = configVersion(f); err != nil {
		return nil, err
	}
	st, err := f.enum("status", true, "failed", "changed", "unchanged")
	if err != nil {
		return nil, err
	}
	r.status = st.(string)
	if _, err = f.reqBool("transaction_completed"); err != nil {
		return nil, err
	}
	if r.noop, err = f.reqBool("noop"); err != nil {
		return nil, err
	}
	if r.noopPending, err = f.reqBool("noop_pending"); err != nil {
		return nil, err
	}
	env, err := f.required("environment")
	if err != nil {
		return nil, err
	}
	if env == nil {
		return nil, errf("environment", "must be a string; got null (the terminus refuses to submit a report without environment)")
	}
	if r.environment, err = f.reqString("environment"); err != nil {
		return nil, err
	}
	for _, k := range []struct {
		name string
		dst  *any
	}{{"transaction_uuid", &r.transactionUUID}, {"code_id", &r.codeID},
		{"job_id", &r.jobID}, {"catalog_uuid", &r.catalogUUID}} {
		if *k.dst, err = f.nullableString(k.name, false); err != nil {
			return nil, err
		}
	}
	if r.cachedCatalogStatus, err = f.enum("cached_catalog_status", false,
		"not_used", "explicitly_requested", "on_failure"); err != nil {
		return nil, err
	}
	if _, err = f.nullableString("master_used", false); err != nil {
		return nil, err
	}
	if _, err = f.nullableString("server_used", false); err != nil {
		return nil, err
	}
	if r.correctiveChange, err = f.optBool("corrective_change"); err != nil {
		return nil, err
	}
	if r.logs, err = logs(f); err != nil {
		return nil, err
	}
	var total *jsonv.Number
	var totalPath string
	if r.metrics, total, totalPath, err = metrics(f); err != nil {
		return nil, err
	}
	r.end = r.start
	if total != nil {
		if r.end, err = start.add(*total); err != nil {
			return nil, errf(totalPath, "%s", err)
		}
	}
	if r.resources, err = resourceStatuses(f); err != nil {
		return nil, err
	}
	return r, nil
}

func reportFormat(f fields) (int, error) {
	v, err := f.required("report_format")
	if err != nil {
		return 0, err
	}
	switch x := v.(type) {
	case jsonv.Number:
		switch x {
		case "10", "11", "12":
			n, _ := strconv.Atoi(string(x))
			return n, nil
		}
	case string:
		switch x {
		case "10", "11", "12":
			n, _ := strconv.Atoi(x)
			return n, nil
		}
	}
	return 0, errf("report_format", "must be 10, 11 or 12; got %s", describe(v))
}

// puppetVersion reads puppet_version or its seed name agent_version.
func puppetVersion(f fields) (string, error) {
	_, hasPV := f.value("puppet_version")
	av, hasAV := f.value("agent_version")
	switch {
	case hasPV:
		pv, err := f.reqString("puppet_version")
		if err != nil {
			return "", err
		}
		if hasAV && av != any(pv) {
			return "", errf("agent_version", "must equal puppet_version %s when both are present; got %s",
				describe(pv), describe(av))
		}
		return pv, nil
	case hasAV:
		return f.reqString("agent_version")
	}
	return "", errf("puppet_version", "missing required property (agent_version is accepted as its alias)")
}

// configVersion renders configuration_version as Ruby's to_s.
func configVersion(f fields) (string, error) {
	v, err := f.required("configuration_version")
	if err != nil {
		return "", err
	}
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	case jsonv.Number:
		if x.IsInteger() {
			return canonicalInt(string(x)), nil
		}
	}
	return "", errf("configuration_version", "must be an integer, a string or null; got %s", describe(v))
}

func logs(f fields) ([]logEntry, error) {
	v := f.opt("logs")
	if v == nil {
		return nil, nil
	}
	a, ok := v.([]any)
	if !ok {
		return nil, errf("logs", "must be an array; got %s", describe(v))
	}
	out := make([]logEntry, len(a))
	for i, e := range a {
		lf, err := object(index("logs", i), e, logKeys)
		if err != nil {
			return nil, err
		}
		l := &out[i]
		lv, err := lf.enum("level", true, "debug", "info", "notice", "warning", "err", "alert", "emerg", "crit")
		if err != nil {
			return nil, err
		}
		l.level = lv.(string)
		if l.message, err = lf.reqString("message"); err != nil {
			return nil, err
		}
		if l.source, err = lf.reqString("source"); err != nil {
			return nil, err
		}
		if l.tags, err = lf.stringArray("tags"); err != nil {
			return nil, err
		}
		t, err := lf.reqTime("time")
		if err != nil {
			return nil, err
		}
		l.time = t.trunc()
		if l.file, err = lf.nullableString("file", false); err != nil {
			return nil, err
		}
		if l.line, err = lf.line("line"); err != nil {
			return nil, err
		}
	}
	return out, nil
}
