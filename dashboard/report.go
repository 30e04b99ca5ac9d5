package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"reportdb/service"
)

var hashPattern = regexp.MustCompile(`^[0-9a-f]{40}$`)

// maxReportRows bounds the events, the logs and the metrics a report page
// shows (the events explorer pages through the rest, the JSON endpoints
// have them all), and maxShownText the text of one message or value, so
// that a huge report stays a page of a few megabytes.
const (
	maxReportRows = 1000
	maxShownText  = 4096
)

// cutText shortens s to about maxShownText bytes (at a character
// boundary), saying how long it was; the copy lets a long original go.
func cutText(s string) (string, bool) {
	if len(s) <= maxShownText {
		return s, false
	}
	i := maxShownText
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return strings.Clone(s[:i]) + sprintf(" … (%d bytes in all)", len(s)), true
}

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

// timeBar is a row of a report's time breakdown: a bar, or the heading
// of a group of bars.
type timeBar struct {
	Name, W, Y, LabelY string
	Value              float64
	Class              string
	Heading            bool
	// Outside: the time is longer than Puppet's total, so not part of it.
	Outside bool
}

// puppetPhases are the times Puppet records for the phases of a run, in
// the order they happen (Puppet::Configurer and Puppet::Application::Apply
// add them to the report); every other time metric is the evaluation time
// of one resource type, all inside transaction_evaluation.
var puppetPhases = []string{"startup_time", "fact_generation", "plugin_sync", "node_retrieval", "config_retrieval",
	"convert_catalog", "transaction_evaluation", "catalog_application"}

// agentPhases are recorded by puppet agent only: puppet apply computes its
// facts and compiles its catalog before the part of the run it times, and
// syncs no plugins.
var agentPhases = []string{"startup_time", "fact_generation", "plugin_sync", "node_retrieval"}

// runCommand names the Puppet command that made a report. PuppetDB's type
// is "agent" for both puppet agent and puppet apply, and its wire format
// has no server_used: the time metrics tell them apart (see agentPhases).
// Without time metrics, or with some of them not read, it says nothing.
func runCommand(typ string, times []metricRow, allRead bool) string {
	if typ != "" && typ != "agent" {
		return typ
	}
	if len(times) == 0 || !allRead {
		return ""
	}
	for _, m := range times {
		for _, p := range agentPhases {
			if m.Name == p {
				return "puppet agent"
			}
		}
	}
	return "puppet apply"
}

// timeBreakdown lays out the time metrics on one scale: Puppet's total,
// the phases of the run in order, then the resource types, largest first.
// A phase longer than the total is marked: puppet apply's catalog
// compilation (config_retrieval) happens before the run its total times.
func (d *reportData) timeBreakdown(times []metricRow) {
	var phases, types []metricRow
	total, hasTotal := 0.0, false
	scale := 0.0
	for _, m := range times {
		scale = max(scale, m.Value)
		switch {
		case m.Name == "total":
			total, hasTotal = m.Value, true
		case slices.Contains(puppetPhases, m.Name):
			phases = append(phases, m)
		default:
			types = append(types, m)
		}
	}
	if len(times) == 0 {
		return
	}
	d.TotalTime, d.HasTotal = total, hasTotal
	sort.SliceStable(phases, func(i, j int) bool {
		return slices.Index(puppetPhases, phases[i].Name) < slices.Index(puppetPhases, phases[j].Name)
	})
	sort.SliceStable(types, func(i, j int) bool { return types[i].Value > types[j].Value })
	y := 0
	add := func(b timeBar) {
		b.Y, b.LabelY = fmtF(float64(y)), fmtF(float64(y)+13)
		if !b.Heading {
			wd := 0.0
			if scale > 0 {
				wd = 600 * b.Value / scale
			}
			b.W = fmtF(max(wd, 1))
		}
		d.Times = append(d.Times, b)
		y += 20
	}
	if hasTotal {
		add(timeBar{Name: "total", Value: total, Class: "total"})
	}
	if len(phases) > 0 {
		add(timeBar{Name: "phases of the run", Heading: true})
	}
	for _, m := range phases {
		out := hasTotal && m.Value > total
		d.TimesOutside = d.TimesOutside || out
		add(timeBar{Name: m.Name, Value: m.Value, Class: "phase", Outside: out})
	}
	if len(types) > 0 {
		add(timeBar{Name: "resources by type", Heading: true})
	}
	for _, m := range types {
		add(timeBar{Name: m.Name, Value: m.Value, Class: "rtype"})
	}
	d.TimesHeight = y
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
	HasTotal, TimesOutside                                            bool
	// Command is "puppet agent", "puppet apply", PuppetDB's type when it
	// is another (a Bolt "plan"), or "" when the report does not tell.
	Command                                            string
	EventsTotal, LogsTotal, MetricsTotal, MetricsShown int
	MaxRows, MaxText                                   int
	AllEvents                                          string
	// TextCut: some message or value is shown cut to maxShownText bytes.
	TextCut bool
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
		Certname        string  `json:"certname"`
		Status          *string `json:"status"`
		Environment     string  `json:"environment"`
		ConfigVersion   string  `json:"configuration_version"`
		PuppetVersion   string  `json:"puppet_version"`
		Start           string  `json:"start_time"`
		End             string  `json:"end_time"`
		Producer        string  `json:"producer_timestamp"`
		Receive         string  `json:"receive_time"`
		TransactionUUID *string `json:"transaction_uuid"`
		CatalogUUID     *string `json:"catalog_uuid"`
		CachedCatalog   *string `json:"cached_catalog_status"`
		CodeID          *string `json:"code_id"`
		JobID           *string `json:"job_id"`
		Type            string  `json:"type"`
		ProducerName    *string `json:"producer"`
		Noop            *bool   `json:"noop"`
		NoopPending     *bool   `json:"noop_pending"`
		ReportFormat    int     `json:"report_format"`
	}
	var x rep
	docs, found, err := readReport(ctx, d.o.Queries, hash, &x)
	if err != nil {
		d.fail(w, r, 500, err)
		return
	}
	if !found {
		d.fail(w, r, http.StatusNotFound, notFound("no report %s", hash))
		return
	}
	data := &reportData{Hash: hash, Certname: x.Certname, Status: str(x.Status), Environment: x.Environment,
		ConfigVersion: x.ConfigVersion, PuppetVersion: x.PuppetVersion, Start: x.Start, End: x.End, Producer: x.Producer,
		Receive: x.Receive, TransactionUUID: str(x.TransactionUUID), CatalogUUID: str(x.CatalogUUID),
		CachedCatalog: str(x.CachedCatalog), CodeID: str(x.CodeID), JobID: str(x.JobID), Type: x.Type,
		Producer2: str(x.ProducerName), Noop: x.Noop, NoopPending: x.NoopPending, ReportFormat: x.ReportFormat,
		Logs: docs.logs, Metrics: map[string][]metricRow{}, TextCut: docs.cut,
		MetricsShown: len(docs.metrics), MaxRows: maxReportRows, MaxText: maxShownText}
	if docs.logsTotal > len(docs.logs) {
		data.LogsTotal = docs.logsTotal
	}
	if docs.metricsTotal > len(docs.metrics) {
		data.MetricsTotal = docs.metricsTotal
	}
	for _, m := range docs.metrics {
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
	data.Command = runCommand(x.Type, data.Metrics["time"], docs.metricsTotal <= len(docs.metrics))
	data.timeBreakdown(data.Metrics["time"])

	evs, evTotal, err := queryAll[eventRow](ctx, d.o.Queries, service.Request{Query: from("events",
		[]any{"status", "timestamp", "resource_type", "resource_title", "property", "old_value", "new_value", "message",
			"file", "line", "containment_path", "containing_class"},
		[]any{"and", []any{"=", "report", hash}, anyNode}), OrderBy: []service.Order{{Field: "timestamp", Order: "asc"}, {Field: "resource_type", Order: "asc"}, {Field: "resource_title", Order: "asc"}, {Field: "property", Order: "asc"}},
		Limit: maxReportRows, Total: true})
	if err != nil {
		d.fail(w, r, 500, err)
		return
	}
	for i := range evs {
		evs[i].prepare()
		var c1, c2, c3 bool
		evs[i].Old, c1 = cutText(evs[i].Old)
		evs[i].New, c2 = cutText(evs[i].New)
		if evs[i].Message != nil {
			var m string
			m, c3 = cutText(*evs[i].Message)
			evs[i].Message = &m
		}
		evs[i].OldValue, evs[i].NewValue = nil, nil
		data.TextCut = data.TextCut || c1 || c2 || c3
	}
	data.Events, data.EventsTotal = evs, evTotal
	data.AllEvents = link(Prefix+"events", "report", hash)
	d.render(w, r, "report", "Report of "+x.Certname, data)
}

// reportDocs is what a report page shows of a report's logs and metrics.
type reportDocs struct {
	logs                    []logEntry
	metrics                 []metricEntry
	logsTotal, metricsTotal int
	cut                     bool // some log message was cut
}

type metricEntry struct {
	Category string  `json:"category"`
	Name     string  `json:"name"`
	Value    float64 `json:"value"`
}

// readReport reads the report hash into x (its fields but logs and
// metrics), keeping of its logs and metrics the first maxReportRows and
// of each log message maxShownText bytes. The answer is read as it is
// encoded, so that a report of hundreds of megabytes of logs costs the
// page about what it shows.
func readReport(ctx context.Context, q service.Querier, hash string, x any) (reportDocs, bool, error) {
	var docs reportDocs
	req := service.Request{Query: from("reports",
		[]any{"certname", "status", "environment", "configuration_version", "puppet_version", "start_time", "end_time",
			"producer_timestamp", "receive_time", "transaction_uuid", "catalog_uuid", "cached_catalog_status", "code_id",
			"job_id", "type", "producer", "noop", "noop_pending", "report_format", "metrics", "logs"},
		// a report of a deactivated or expired node too (see anyNode): the
		// node's page links to them
		[]any{"and", []any{"=", "hash", hash}, anyNode})}
	found := false
	read := func(r io.Reader) error {
		dec := json.NewDecoder(r)
		dec.UseNumber()
		if err := expectDelim(dec, '['); err != nil {
			return err
		}
		if !dec.More() {
			return nil
		}
		found = true
		if err := expectDelim(dec, '{'); err != nil {
			return err
		}
		fields := map[string]json.RawMessage{}
		for dec.More() {
			t, err := dec.Token()
			if err != nil {
				return err
			}
			switch key, _ := t.(string); key {
			case "logs":
				err = eachDocRow(dec, func() error {
					if docs.logsTotal++; len(docs.logs) >= maxReportRows {
						return skipValue(dec)
					}
					var l logEntry
					if err := dec.Decode(&l); err != nil {
						return err
					}
					var cut bool
					l.Message, cut = cutText(l.Message)
					docs.cut = docs.cut || cut
					docs.logs = append(docs.logs, l)
					return nil
				})
			case "metrics":
				err = eachDocRow(dec, func() error {
					if docs.metricsTotal++; len(docs.metrics) >= maxReportRows {
						return skipValue(dec)
					}
					var m metricEntry
					if err := dec.Decode(&m); err != nil {
						return err
					}
					docs.metrics = append(docs.metrics, m)
					return nil
				})
			default:
				var v json.RawMessage
				err = dec.Decode(&v)
				fields[key] = v
			}
			if err != nil {
				return err
			}
		}
		b, err := json.Marshal(fields)
		if err != nil {
			return err
		}
		return json.Unmarshal(b, x)
	}
	_, err := q.QueryStream(ctx, req, read)
	return docs, found, err
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	t, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := t.(json.Delim); !ok || d != want {
		return fmt.Errorf("report answer: expected %v, got %v", want, t)
	}
	return nil
}

// eachDocRow reads a report document ({"href": ..., "data": [rows]}, or
// null) calling row with the decoder before each row of data.
func eachDocRow(dec *json.Decoder, row func() error) error {
	t, err := dec.Token()
	if err != nil || t == nil {
		return err
	}
	if d, ok := t.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("report answer: a document is %v", t)
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return err
		}
		if k != "data" {
			if err := skipValue(dec); err != nil {
				return err
			}
			continue
		}
		t, err := dec.Token()
		if err != nil || t == nil {
			return err
		}
		if d, ok := t.(json.Delim); !ok || d != '[' {
			return fmt.Errorf("report answer: a document's data is %v", t)
		}
		for dec.More() {
			if err := row(); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil { // ]
			return err
		}
	}
	_, err = dec.Token() // }
	return err
}

// skipValue reads past the next value a token at a time, holding no more
// than one token.
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		switch t {
		case json.Delim('['), json.Delim('{'):
			depth++
		case json.Delim(']'), json.Delim('}'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}
