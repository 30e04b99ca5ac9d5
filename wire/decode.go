package wire

import (
	"strconv"
	"strings"

	"reportdb"
	"reportdb/jsonv"
)

var reportFields = []field{
	{name: "certname", required: true, kind: kString, maxBytes: MaxNameBytes},
	{name: "puppet_version", required: true, kind: kString},
	{name: "report_format", required: true, kind: kInt},
	{name: "configuration_version", required: true, kind: kString, maxBytes: MaxConfigurationVersionBytes},
	{name: "start_time", required: true, kind: kDatetime},
	{name: "end_time", required: true, kind: kDatetime},
	{name: "producer_timestamp", required: true, kind: kDatetime},
	{name: "producer", required: true, nullable: true, kind: kString},
	{name: "corrective_change", required: true, nullable: true, kind: kBool},
	{name: "noop", required: true, nullable: true, kind: kBool},
	{name: "noop_pending", required: true, nullable: true, kind: kBool},
	{name: "transaction_uuid", required: true, nullable: true, kind: kString},
	{name: "catalog_uuid", required: true, nullable: true, kind: kString},
	{name: "code_id", required: true, nullable: true, kind: kString},
	{name: "job_id", nullable: true, kind: kString},
	{name: "cached_catalog_status", required: true, nullable: true, kind: kString},
	{name: "environment", required: true, kind: kString, maxBytes: MaxNameBytes},
	{name: "status", required: true, nullable: true, kind: kString},
	{name: "type", kind: kString},
	{name: "metrics", required: true, nullable: true, kind: kArray},
	{name: "logs", required: true, nullable: true, kind: kArray},
	{name: "resources", required: true, nullable: true, kind: kArray},
}

var resourceFields = []field{
	{name: "skipped", required: true, kind: kBool},
	{name: "timestamp", required: true, kind: kDatetime},
	{name: "resource_type", required: true, kind: kString, maxBytes: MaxNameBytes},
	{name: "resource_title", required: true, kind: kString},
	{name: "file", required: true, nullable: true, kind: kString},
	{name: "line", required: true, nullable: true, kind: kInt},
	{name: "containment_path", required: true, nullable: true, kind: kStringArray},
	{name: "corrective_change", required: true, nullable: true, kind: kBool},
	{name: "events", required: true, nullable: true, kind: kArray},
}

var eventFields = []field{
	{name: "status", required: true, kind: kString},
	{name: "timestamp", required: true, kind: kDatetime},
	{name: "property", required: true, nullable: true, kind: kString, maxBytes: MaxNameBytes},
	{name: "new_value", required: true, nullable: true, kind: kAny},
	{name: "old_value", required: true, nullable: true, kind: kAny},
	{name: "message", required: true, nullable: true, kind: kString},
	{name: "corrective_change", required: true, nullable: true, kind: kBool},
	{name: "name", nullable: true, kind: kString, maxBytes: MaxNameBytes},
}

var metricFields = []field{
	{name: "category", required: true, kind: kString},
	{name: "name", required: true, kind: kString},
	{name: "value", required: true, kind: kNumber},
}

var logFields = []field{
	{name: "file", required: true, nullable: true, kind: kString},
	{name: "line", required: true, nullable: true, kind: kInt},
	{name: "level", required: true, kind: kString},
	{name: "message", required: true, kind: kString},
	{name: "source", required: true, kind: kString},
	{name: "tags", required: true, kind: kStringArray},
	{name: "time", required: true, kind: kDatetime},
}

// Decode validates a "store report" payload of the given command version
// (5 to 8) and normalises it into a Report received at receiveTime (Unix
// ms). Every failure is a *reportdb.Error with code EINVALID whose message
// names the offending key.
func Decode(version int, payload any, receiveTime int64) (*reportdb.Report, error) {
	if version < MinVersion || version > MaxVersion {
		return nil, errVersion(version)
	}
	in, ok := payload.(*jsonv.Object)
	if !ok {
		return nil, invalid("", "the payload must be a JSON object, got %s", jsonv.TypeName(payload))
	}
	o, err := upgrade(version, in)
	if err != nil {
		return nil, err
	}
	if _, err := checkObject("", o, reportFields); err != nil {
		return nil, err
	}
	get := func(k string) any { v, _ := o.Get(k); return v }
	r := &reportdb.Report{
		Certname:             get("certname").(string),
		PuppetVersion:        get("puppet_version").(string),
		ConfigurationVersion: get("configuration_version").(string),
		Environment:          get("environment").(string),
		ReceiveTime:          receiveTime,
		Type:                 "agent",
	}
	if strings.TrimSpace(r.Certname) == "" {
		return nil, invalid("certname", "must be a non-empty string")
	}
	if r.Environment == "" {
		return nil, invalid("environment", "must be a non-empty string")
	}
	r.ReportFormat, _ = strconv.ParseInt(string(get("report_format").(jsonv.Number)), 10, 64)
	if r.ReportFormat < -32768 || r.ReportFormat > 32767 {
		return nil, invalid("report_format", "integer out of range: %d", r.ReportFormat)
	}
	r.StartTime = mustMillis(get("start_time"))
	r.EndTime = mustMillis(get("end_time"))
	r.ProducerTimestamp = mustMillis(get("producer_timestamp"))
	r.Producer = optString(get("producer"))
	r.Status = optString(get("status"))
	r.Noop = optBool(get("noop"))
	r.CorrectiveChange = optBool(get("corrective_change"))
	r.NoopPending = optBool(get("noop_pending"))
	r.CodeID = optString(get("code_id"))
	r.JobID = optString(get("job_id"))
	r.CachedCatalogStatus = optString(get("cached_catalog_status"))
	rawTxn := optString(get("transaction_uuid"))
	if r.TransactionUUID, err = uuidField("transaction_uuid", rawTxn); err != nil {
		return nil, err
	}
	if r.CatalogUUID, err = uuidField("catalog_uuid", optString(get("catalog_uuid"))); err != nil {
		return nil, err
	}
	if t, ok := o.Get("type"); ok {
		s := t.(string)
		if s != "agent" && s != "plan" {
			return nil, invalid("type", "must be \"agent\" or \"plan\", got %s", jsonv.Compact(s))
		}
		r.Type = s
	}
	if r.Metrics, err = renderArray("metrics", get("metrics"), metricFields); err != nil {
		return nil, err
	}
	if r.Logs, err = renderArray("logs", get("logs"), logFields); err != nil {
		return nil, err
	}
	if r.Events, err = deriveEvents(get("resources")); err != nil {
		return nil, err
	}
	r.Hash = Hash(r, rawTxn)
	return r, nil
}

func mustMillis(v any) int64 {
	t, _ := ParseDatetime(v.(string))
	return t.UnixMilli()
}

func optString(v any) *string {
	if s, ok := v.(string); ok {
		return &s
	}
	return nil
}

func optBool(v any) *bool {
	if b, ok := v.(bool); ok {
		return &b
	}
	return nil
}

// renderArray validates an array of objects against fields and renders it
// as PostgreSQL renders the jsonb PuppetDB stores (nil for JSON null).
func renderArray(path string, v any, fields []field) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	arr := v.([]any)
	for i, e := range arr {
		if _, err := checkObject("", e, fields); err != nil {
			_, err = checkObject(index(path, i), e, fields)
			return nil, err
		}
	}
	return jsonv.AppendJSONB(nil, arr), nil
}

// uuidField validates a UUID the way PostgreSQL's uuid type accepts it and
// returns its canonical lower-case text.
func uuidField(path string, s *string) (*string, error) {
	if s == nil {
		return nil, nil
	}
	c, ok := CanonicalUUID(*s)
	if !ok {
		return nil, invalid(path, "not a valid UUID: %s", jsonv.Compact(*s))
	}
	return &c, nil
}

// CanonicalUUID parses a UUID in any form PostgreSQL accepts (optional
// braces, hyphens after any group of four hex digits, any case) and returns
// the canonical 8-4-4-4-12 lower-case form.
func CanonicalUUID(s string) (string, bool) {
	if strings.HasPrefix(s, "{") {
		if !strings.HasSuffix(s, "}") {
			return "", false
		}
		s = s[1 : len(s)-1]
	}
	var hex []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f':
			hex = append(hex, c)
		case c >= 'A' && c <= 'F':
			hex = append(hex, c+('a'-'A'))
		case c == '-':
			if len(hex) == 0 || len(hex)%4 != 0 || i+1 == len(s) || s[i+1] == '-' {
				return "", false
			}
		default:
			return "", false
		}
	}
	if len(hex) != 32 {
		return "", false
	}
	h := string(hex)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32], true
}
