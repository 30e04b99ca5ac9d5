package dashboard

import (
	"encoding/json"
	"net/http"
	"regexp"
	"sort"
	"strings"
)

var hashPattern = regexp.MustCompile(`^[0-9a-f]{40}$`)

// maxReportRows bounds the events and the logs a report page shows (the
// events explorer pages through the rest), so that a huge report stays
// a page of reasonable size.
const maxReportRows = 1000

type logEntry struct {
	Level   string   `json:"level"`
	Message string   `json:"message"`
	Source  string   `json:"source"`
	Time    string   `json:"time"`
	File    *string  `json:"file"`
	Line    *int64   `json:"line"`
	Tags    []string `json:"tags"`
}

type eventRow struct {
	Status          string          `json:"status"`
	Timestamp       string          `json:"timestamp"`
	Type            string          `json:"resource_type"`
	Title           string          `json:"resource_title"`
	Property        *string         `json:"property"`
	OldValue        json.RawMessage `json:"old_value"`
	NewValue        json.RawMessage `json:"new_value"`
	Message         *string         `json:"message"`
	File            *string         `json:"file"`
	Line            *int64          `json:"line"`
	ContainmentPath []string        `json:"containment_path"`
	Class           *string         `json:"containing_class"`
	Certname        string          `json:"certname"`
	Report          string          `json:"report"`
	Environment     string          `json:"environment"`
	Old, New        string          `json:"-"`
	Path            string          `json:"-"`
	Where           string          `json:"-"`
}

// prepare renders the values and location as text.
func (e *eventRow) prepare() {
	e.Old, e.New = jsonText(e.OldValue), jsonText(e.NewValue)
	e.Path = strings.Join(e.ContainmentPath, " / ")
	if e.File != nil {
		e.Where = *e.File
		if e.Line != nil {
			e.Where += ":" + itoa(*e.Line)
		}
	}
}

// jsonText shows a JSON value: strings without their quotes.
func jsonText(v json.RawMessage) string {
	if len(v) == 0 || string(v) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(v)
}

type metricRow struct {
	Category, Name string
	Value          float64
}

type timeBar struct {
	Name, W, Y, LabelY string
	Value              float64
}

type reportData struct {
	Hash, Certname, Status, Environment, ConfigVersion, PuppetVersion string
	Start, End, Producer, Receive, TransactionUUID, CatalogUUID       string
	CachedCatalog, CodeID, JobID, Type, Producer2                     string
	Noop, NoopPending                                                 *bool
	ReportFormat                                                      int
	Events                                                            []eventRow
	Logs                                                              []logEntry
	Metrics                                                           map[string][]metricRow
	Categories                                                        []string
	Times                                                             []timeBar
	TimesHeight                                                       int
	TotalTime                                                         float64
	EventsTotal, LogsTotal                                            int
	AllEvents                                                         string
}

func itoa(n int64) string { return sprintf("%d", n) }

func (d *Dashboard) report(w http.ResponseWriter, r *http.Request) {
	hash := r.PathValue("hash")
	if !hashPattern.MatchString(hash) {
		d.fail(w, r, 400, badRequest("a report hash is 40 lower-case hexadecimal digits, not %q", hash))
		return
	}
	ctx := r.Context()
	type rep struct {
		Certname        string      `json:"certname"`
		Status          *string     `json:"status"`
		Environment     string      `json:"environment"`
		ConfigVersion   string      `json:"configuration_version"`
		PuppetVersion   string      `json:"puppet_version"`
		Start           string      `json:"start_time"`
		End             string      `json:"end_time"`
		Producer        string      `json:"producer_timestamp"`
		Receive         string      `json:"receive_time"`
		TransactionUUID *string     `json:"transaction_uuid"`
		CatalogUUID     *string     `json:"catalog_uuid"`
		CachedCatalog   *string     `json:"cached_catalog_status"`
		CodeID          *string     `json:"code_id"`
		JobID           *string     `json:"job_id"`
		Type            string      `json:"type"`
		ProducerName    *string     `json:"producer"`
		Noop            *bool       `json:"noop"`
		NoopPending     *bool       `json:"noop_pending"`
		ReportFormat    int         `json:"report_format"`
		Metrics         metricsBlob `json:"metrics"`
		Logs            struct {
			Data []logEntry `json:"data"`
		} `json:"logs"`
	}
	reps, _, err := queryAll[rep](ctx, d.o.API, Request{Query: from("reports",
		[]any{"certname", "status", "environment", "configuration_version", "puppet_version", "start_time", "end_time",
			"producer_timestamp", "receive_time", "transaction_uuid", "catalog_uuid", "cached_catalog_status", "code_id",
			"job_id", "type", "producer", "noop", "noop_pending", "report_format", "metrics", "logs"},
		[]any{"=", "hash", hash})})
	if err != nil {
		d.fail(w, r, 500, err)
		return
	}
	if len(reps) == 0 {
		d.fail(w, r, http.StatusNotFound, notFound("no report %s", hash))
		return
	}
	x := reps[0]
	data := &reportData{Hash: hash, Certname: x.Certname, Status: str(x.Status), Environment: x.Environment,
		ConfigVersion: x.ConfigVersion, PuppetVersion: x.PuppetVersion, Start: x.Start, End: x.End, Producer: x.Producer,
		Receive: x.Receive, TransactionUUID: str(x.TransactionUUID), CatalogUUID: str(x.CatalogUUID),
		CachedCatalog: str(x.CachedCatalog), CodeID: str(x.CodeID), JobID: str(x.JobID), Type: x.Type,
		Producer2: str(x.ProducerName), Noop: x.Noop, NoopPending: x.NoopPending, ReportFormat: x.ReportFormat,
		Logs: x.Logs.Data, Metrics: map[string][]metricRow{}}
	for _, m := range x.Metrics.Data {
		if _, ok := data.Metrics[m.Category]; !ok {
			data.Categories = append(data.Categories, m.Category)
		}
		data.Metrics[m.Category] = append(data.Metrics[m.Category], metricRow{m.Category, m.Name, m.Value})
	}
	sort.Strings(data.Categories)
	for _, c := range data.Categories {
		ms := data.Metrics[c]
		sort.Slice(ms, func(i, j int) bool { return ms[i].Name < ms[j].Name })
	}
	// the time breakdown: one bar per resource type / phase, largest first
	var times []metricRow
	for _, m := range data.Metrics["time"] {
		if m.Name == "total" {
			data.TotalTime = m.Value
			continue
		}
		times = append(times, m)
	}
	sort.Slice(times, func(i, j int) bool { return times[i].Value > times[j].Value })
	maxT := 0.0
	for _, m := range times {
		maxT = max(maxT, m.Value)
	}
	for i, m := range times {
		wd := 0.0
		if maxT > 0 {
			wd = 600 * m.Value / maxT
		}
		data.Times = append(data.Times, timeBar{Name: m.Name, Value: m.Value, W: fmtF(max(wd, 1)),
			Y: fmtF(float64(i) * 20), LabelY: fmtF(float64(i)*20 + 13)})
	}
	data.TimesHeight = len(times) * 20

	evs, evTotal, err := queryAll[eventRow](ctx, d.o.API, Request{Query: from("events",
		[]any{"status", "timestamp", "resource_type", "resource_title", "property", "old_value", "new_value", "message",
			"file", "line", "containment_path", "containing_class"},
		[]any{"=", "report", hash}), OrderBy: []Order{{"timestamp", "asc"}, {"resource_type", "asc"}, {"resource_title", "asc"}, {"property", "asc"}},
		Limit: maxReportRows, Total: true})
	if err != nil {
		d.fail(w, r, 500, err)
		return
	}
	for i := range evs {
		evs[i].prepare()
	}
	data.Events, data.EventsTotal = evs, evTotal
	data.AllEvents = link(Prefix+"events", "report", hash)
	if len(data.Logs) > maxReportRows {
		data.LogsTotal = len(data.Logs)
		data.Logs = data.Logs[:maxReportRows]
	}
	d.render(w, r, "report", "Report of "+x.Certname, data)
}
