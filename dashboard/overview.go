package dashboard

import (
	"context"
	"net/http"
	"sort"
	"time"

	"reportdb/fleet"
	"reportdb/service"
)

// envRow is one environment's nodes by status on the overview.
type envRow struct {
	Environment string
	Cells       []cell
	Total       int
}

type cell struct {
	Status string
	Count  int
	Link   string
}

type failingResource struct {
	Type, Title string
	Count       int
	Link        string
}

type failureRow struct {
	Certname, Report, Timestamp, Type, Title, Message string
}

type overviewData struct {
	Statuses     []string
	Envs         []envRow
	Totals       envRow
	Unresponsive time.Duration
	Cutoff       string
	Chart        *chart
	ChartFrom    string
	ChartTo      string
	Failing      []failingResource
	FailingSince string
	Failures     []failureRow
	Newest       string
	// Inactive: the deactivated and expired nodes, which the counts above
	// leave out; InactiveLink lists them.
	Inactive     int
	InactiveLink string
}

func (d *Dashboard) overview(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	data, err := d.overviewData(ctx)
	if err != nil {
		d.fail(w, r, http.StatusInternalServerError, err)
		return
	}
	d.render(w, r, "overview", "Overview", data)
}

// nodeCounts answers the nodes by dashboard status and environment:
// status -> environment -> count.
func (d *Dashboard) nodeCounts(ctx context.Context, cutoff time.Time) (map[string]map[string]int, error) {
	if d.o.Fleet != nil && d.o.Fleet.Ready() {
		return d.o.Fleet.NodeCounts(cutoff), nil
	}
	out := map[string]map[string]int{}
	add := func(status, env string, n int) {
		if out[status] == nil {
			out[status] = map[string]int{}
		}
		out[status][env] += n
	}
	type grp struct {
		Count       int     `json:"count"`
		Environment *string `json:"report_environment"`
		Status      *string `json:"latest_report_status"`
		NoopPending *bool   `json:"latest_report_noop_pending"`
	}
	c := isoTime(cutoff)
	rows, _, err := queryAll[grp](ctx, d.o.Queries, service.Request{Query: from("nodes",
		[]any{count(), "report_environment", "latest_report_status", "latest_report_noop_pending"},
		[]any{">=", "report_timestamp", c},
		"report_environment", "latest_report_status", "latest_report_noop_pending")})
	if err != nil {
		return nil, err
	}
	for _, g := range rows {
		ts := c
		add(nodeStatus(g.Status, g.NoopPending, &ts, cutoff), str(g.Environment), g.Count)
	}
	unresp, _ := statusFilter("unresponsive", cutoff)
	rows, _, err = queryAll[grp](ctx, d.o.Queries, service.Request{Query: from("nodes",
		[]any{count(), "report_environment"}, unresp, "report_environment")})
	if err != nil {
		return nil, err
	}
	for _, g := range rows {
		add("unresponsive", str(g.Environment), g.Count)
	}
	return out, nil
}

// newestReport is the producer_timestamp of the newest report (or the
// oldest one with order "asc"); "" when there is none.
func (d *Dashboard) newestReport(ctx context.Context, order string) (string, error) {
	type row struct {
		T string `json:"producer_timestamp"`
	}
	rows, _, err := queryAll[row](ctx, d.o.Queries, service.Request{Query: from("reports", []any{"producer_timestamp"}, nil),
		OrderBy: []service.Order{{Field: "producer_timestamp", Order: order}}, Limit: 1})
	if err != nil || len(rows) == 0 {
		return "", err
	}
	return rows[0].T, nil
}

func (d *Dashboard) overviewData(ctx context.Context) (*overviewData, error) {
	now := d.o.Now()
	cutoff := now.Add(-d.o.Unresponsive)
	data := &overviewData{Statuses: Statuses, Unresponsive: d.o.Unresponsive, Cutoff: isoTime(cutoff)}
	counts, err := d.nodeCounts(ctx, cutoff)
	if err != nil {
		return nil, err
	}
	envSet := map[string]bool{}
	for _, m := range counts {
		for e := range m {
			envSet[e] = true
		}
	}
	envs := make([]string, 0, len(envSet))
	for e := range envSet {
		envs = append(envs, e)
	}
	sort.Strings(envs)
	data.Totals = envRow{Environment: "all environments"}
	for _, e := range envs {
		row := envRow{Environment: e}
		for _, s := range Statuses {
			n := counts[s][e]
			row.Cells = append(row.Cells, cell{Status: s, Count: n, Link: link(Prefix+"nodes", "status", s, "environment", e)})
			row.Total += n
		}
		data.Envs = append(data.Envs, row)
	}
	for i, s := range Statuses {
		n := 0
		for _, row := range data.Envs {
			n += row.Cells[i].Count
		}
		data.Totals.Cells = append(data.Totals.Cells, cell{Status: s, Count: n, Link: link(Prefix+"nodes", "status", s)})
		data.Totals.Total += n
	}
	// one count over the inactive nodes' index (few rows), so that nodes
	// leaving the counts above do not go unnoticed
	type cnt struct {
		Count int `json:"count"`
	}
	inactive, _, err := queryAll[cnt](ctx, d.o.Queries, service.Request{Query: from("nodes", []any{count()},
		[]any{"=", "node_state", "inactive"})})
	if err != nil {
		return nil, err
	}
	if len(inactive) > 0 {
		data.Inactive = inactive[0].Count
	}
	data.InactiveLink = link(Prefix+"nodes", "state", "inactive")

	newest, err := d.newestReport(ctx, "desc")
	if err != nil {
		return nil, err
	}
	data.Newest = newest
	if newest == "" {
		return data, nil
	}
	end, _ := parseTime(newest)
	end = end.UTC().Truncate(time.Hour).Add(time.Hour)
	span := 14 * 24 * time.Hour
	if d.o.ReportTTL > 0 && d.o.ReportTTL < span {
		span = d.o.ReportTTL.Truncate(time.Hour)
		if span < time.Hour {
			span = time.Hour
		}
	}
	start := end.Add(-span)
	buckets, err := d.hourBuckets(ctx, nil, start, end)
	if err != nil {
		return nil, err
	}
	// the chart spans the hours that have reports (a new install's first
	// hour, reports imported from before the window) when they are fewer
	// than the window, and at least minChartHours so that one hour still
	// reads as a bar of an hourly chart
	first := 0
	for first < len(buckets) && len(buckets[first]) == 0 {
		first++
	}
	first = max(min(first, len(buckets)-minChartHours), 0)
	chartStart := start.Add(time.Duration(first) * time.Hour)
	data.Chart = newChart(chartStart, time.Hour, buckets[first:], chartStatuses, hourLabel)
	data.ChartFrom, data.ChartTo = isoTime(chartStart), isoTime(end)

	// the most frequently failing resources over the chart's window
	data.FailingSince = isoTime(start)
	frs, err := d.failing(ctx, start, end, 10)
	if err != nil {
		return nil, err
	}
	for _, f := range frs {
		data.Failing = append(data.Failing, failingResource{Type: f.Type, Title: f.Title, Count: f.Count,
			Link: link(Prefix+"resource", "type", f.Type, "title", f.Title)})
	}

	// the latest failures
	type ev struct {
		Certname  string  `json:"certname"`
		Report    string  `json:"report"`
		Timestamp string  `json:"timestamp"`
		Type      string  `json:"resource_type"`
		Title     string  `json:"resource_title"`
		Message   *string `json:"message"`
	}
	evs, _, err := queryAll[ev](ctx, d.o.Queries, service.Request{Query: from("events",
		[]any{"certname", "report", "timestamp", "resource_type", "resource_title", "message"},
		[]any{"and", []any{"=", "status", "failure"}, []any{">=", "timestamp", data.FailingSince}}),
		OrderBy: []service.Order{{Field: "timestamp", Order: "desc"}}, Limit: 10})
	if err != nil {
		return nil, err
	}
	for _, e := range evs {
		data.Failures = append(data.Failures, failureRow{Certname: e.Certname, Report: e.Report, Timestamp: e.Timestamp,
			Type: e.Type, Title: e.Title, Message: str(e.Message)})
	}
	return data, nil
}

// failing returns the resources with the most failure events in
// [start, end).
func (d *Dashboard) failing(ctx context.Context, start, end time.Time, limit int) ([]fleet.FailingResource, error) {
	if d.o.Fleet != nil && d.o.Fleet.Ready() {
		return d.o.Fleet.Failing(start, end, limit), nil
	}
	type fr struct {
		Count int    `json:"count"`
		Type  string `json:"resource_type"`
		Title string `json:"resource_title"`
	}
	// every node's, as the fleet state counts them (see hourBuckets)
	frs, _, err := queryAll[fr](ctx, d.o.Queries, service.Request{Query: from("events",
		[]any{count(), "resource_type", "resource_title"},
		[]any{"and", []any{"=", "status", "failure"}, []any{">=", "timestamp", isoTime(start)}, []any{"<", "timestamp", isoTime(end)}, anyNode},
		"resource_type", "resource_title")})
	if err != nil {
		return nil, err
	}
	out := make([]fleet.FailingResource, len(frs))
	for i, f := range frs {
		out[i] = fleet.FailingResource{Type: f.Type, Title: f.Title, Count: f.Count}
	}
	fleet.SortFailing(out)
	return out[:min(limit, len(out))], nil
}

// hourBuckets counts reports by hour of producer_timestamp and status in
// [start, end), optionally filtered (e.g. one node).
func (d *Dashboard) hourBuckets(ctx context.Context, filter any, start, end time.Time) ([]map[string]int, error) {
	if filter == nil && d.o.Fleet != nil && d.o.Fleet.Ready() {
		return d.o.Fleet.HourCounts(start, end), nil
	}
	hour := []any{"function", "to_string", "producer_timestamp", "YYYY-MM-DD HH24"}
	type grp struct {
		Count  int     `json:"count"`
		Status *string `json:"status"`
		Hour   string  `json:"to_string"`
	}
	// the reports of every node, inactive ones too, as the fleet state
	// counts them: the history of the reports stored, which the rollups
	// answer (the implicit "active nodes only" would make this read every
	// report of the window as soon as one node is inactive)
	rows, _, err := queryAll[grp](ctx, d.o.Queries, service.Request{Query: from("reports",
		[]any{count(), "status", hour},
		and([]any{">=", "producer_timestamp", isoTime(start)}, []any{"<", "producer_timestamp", isoTime(end)}, filter, anyNode),
		"status", hour)})
	if err != nil {
		return nil, err
	}
	n := int(end.Sub(start) / time.Hour)
	buckets := make([]map[string]int, n)
	for _, g := range rows {
		t, err := time.Parse("2006-01-02 15", g.Hour)
		if err != nil {
			continue
		}
		i := int(t.Sub(start) / time.Hour)
		if i < 0 || i >= n {
			continue
		}
		if buckets[i] == nil {
			buckets[i] = map[string]int{}
		}
		s := str(g.Status)
		if s == "" {
			s = "unknown"
		}
		buckets[i][s] += g.Count
	}
	return buckets, nil
}

// minChartHours is the overview chart's shortest span.
const minChartHours = 6

var chartStatuses = []string{"failed", "changed", "unchanged", "unknown"}

func hourLabel(t time.Time) string { return t.UTC().Format("2006-01-02 15:00") + " UTC" }
