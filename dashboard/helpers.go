package dashboard

import (
	"fmt"
	"html/template"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"
)

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// apiTime is PuppetDB's timestamp format (UTC, milliseconds).
const apiTime = "2006-01-02T15:04:05.000Z"

func isoTime(t time.Time) string { return t.UTC().Format(apiTime) }

// parseTime reads an API timestamp.
func parseTime(s string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}

var funcs = template.FuncMap{
	// fmtTime renders an API timestamp as UTC text; app.js rewrites it in
	// the browser's time zone from the datetime attribute.
	"fmtTime": func(s string) string {
		if t, ok := parseTime(s); ok {
			return t.UTC().Format("2006-01-02 15:04:05") + " UTC"
		}
		return s
	},
	"statusClass": func(s string) string {
		switch s {
		case "failed", "failure":
			return "st-failed"
		case "changed", "success":
			return "st-changed"
		case "unchanged":
			return "st-unchanged"
		case "noop", "noop pending":
			return "st-noop"
		case "skipped":
			return "st-skipped"
		case "unresponsive":
			return "st-unresponsive"
		case "inactive":
			return "st-inactive"
		}
		return "st-other"
	},
	"add":         func(a, b int) int { return a + b },
	"pathEscape":  url.PathEscape,
	"duration":    duration,
	"metricValue": metricValue,
	"json":        func(v string) string { return v },
	"join":        strings.Join,
	"isTrue":      func(p *bool) bool { return p != nil && *p },
	"deref": func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	},
}

// duration shows seconds with three significant digits in a unit that
// keeps them short: Puppet times resources in microseconds and whole runs
// in minutes.
func duration(s float64) string {
	switch {
	case s <= 0 || math.IsNaN(s):
		return "0 s"
	case s < 0.001:
		return strconv.FormatFloat(s*1000, 'g', 2, 64) + " ms"
	case s < 1:
		return fixed3(s*1000) + " ms"
	case s < 60:
		return fixed3(s) + " s"
	case s < 3600:
		m := int(s / 60)
		return sprintf("%d min %d s", m, int(math.Round(s-float64(m)*60)))
	}
	h := int(s / 3600)
	return sprintf("%d h %02d min", h, int(math.Round((s-float64(h)*3600)/60)))
}

// fixed3 shows a number from 1 to 1000 with three significant digits.
func fixed3(f float64) string {
	switch {
	case f < 10:
		return strconv.FormatFloat(f, 'f', 2, 64)
	case f < 100:
		return strconv.FormatFloat(f, 'f', 1, 64)
	}
	return strconv.FormatFloat(f, 'f', 0, 64)
}

// metricValue shows a report metric: a duration in the time category,
// counts as integers, anything else with at most six significant digits
// (metrics are floats, and sums of floats carry binary noise).
func metricValue(category string, v float64) string {
	if category == "time" {
		return duration(v)
	}
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// link builds a dashboard URL with non-empty parameters.
func link(path string, kv ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			v.Set(kv[i], kv[i+1])
		}
	}
	if len(v) == 0 {
		return path
	}
	return path + "?" + v.Encode()
}

// str dereferences an optional string.
func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// pageParam reads a 1-based page number.
func pageParam(v url.Values) (int, error) {
	s := v.Get("page")
	if s == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 1_000_000 {
		return 0, badRequest("page must be a number from 1: %q", s)
	}
	return n, nil
}

// pager is the paging bar of a table.
type pager struct {
	Page, Pages, Total, From, To int
	Prev, Next                   string
	Open                         bool // the total is unknown
}

func newPager(base url.Values, path string, page, size, total int) pager {
	p := pager{Page: page, Total: total}
	p.Pages = (total + size - 1) / size
	if p.Pages == 0 {
		p.Pages = 1
	}
	if total > 0 {
		p.From = (page-1)*size + 1
		p.To = min(page*size, total)
	}
	mk := func(n int) string {
		v := url.Values{}
		for k, vs := range base {
			v[k] = vs
		}
		v.Set("page", strconv.Itoa(n))
		return path + "?" + v.Encode()
	}
	if page > 1 {
		p.Prev = mk(page - 1)
	}
	if page < p.Pages {
		p.Next = mk(page + 1)
	}
	return p
}

// openPager is a pager without a total: rows on this page, and whether
// another follows.
func openPager(base url.Values, path string, page, size, rows int, more bool) pager {
	total := (page-1)*size + rows
	if more {
		total = page*size + 1
	}
	p := newPager(base, path, page, size, total)
	p.Total, p.Open = -1, true
	if rows > 0 {
		p.From, p.To = (page-1)*size+1, (page-1)*size+rows
	}
	if !more {
		p.Pages = page
	}
	return p
}

// nodeStatus is the dashboard's status of a node: unresponsive when its
// latest report is older than the cutoff (or it has none), else failed,
// "noop pending" (the latest report has pending noop events), changed or
// unchanged.
func nodeStatus(status *string, noopPending *bool, reportTime *string, cutoff time.Time) string {
	if reportTime == nil {
		return "unresponsive"
	}
	t, ok := parseTime(*reportTime)
	if !ok || t.Before(cutoff) {
		return "unresponsive"
	}
	s := str(status)
	if s != "failed" && noopPending != nil && *noopPending {
		return "noop pending"
	}
	if s == "" {
		return "unknown"
	}
	return s
}

// Statuses are the node statuses in display order.
var Statuses = []string{"failed", "changed", "unchanged", "noop pending", "unresponsive"}

// statusFilter is the nodes-query filter selecting a dashboard status.
func statusFilter(status string, cutoff time.Time) (any, error) {
	c := isoTime(cutoff)
	responsive := []any{">=", "report_timestamp", c}
	switch status {
	case "":
		return nil, nil
	case "unresponsive":
		return []any{"or", []any{"<", "report_timestamp", c}, []any{"null?", "report_timestamp", true}}, nil
	case "failed":
		return []any{"and", responsive, []any{"=", "latest_report_status", "failed"}}, nil
	case "noop pending":
		return []any{"and", responsive, []any{"=", "latest_report_noop_pending", true},
			[]any{"or", []any{"null?", "latest_report_status", true}, []any{"not", []any{"=", "latest_report_status", "failed"}}}}, nil
	case "changed", "unchanged":
		return []any{"and", responsive, []any{"=", "latest_report_status", status},
			[]any{"or", []any{"null?", "latest_report_noop_pending", true}, []any{"=", "latest_report_noop_pending", false}}}, nil
	}
	return nil, badRequest("unknown status %q: one of failed, changed, unchanged, noop pending, unresponsive", status)
}

// and combines filters, skipping nil ones.
func and(filters ...any) any {
	var out []any
	for _, f := range filters {
		if f != nil {
			out = append(out, f)
		}
	}
	switch len(out) {
	case 0:
		return nil
	case 1:
		return out[0]
	}
	return append([]any{"and"}, out...)
}

// from builds ["from", entity, extract-with-filter...].
func from(entity string, fields []any, filter any, groupBy ...any) []any {
	ex := []any{"extract", fields}
	if filter != nil {
		ex = append(ex, filter)
	}
	if len(groupBy) > 0 {
		ex = append(ex, append([]any{"group_by"}, groupBy...))
	}
	return []any{"from", entity, ex}
}

func count() []any { return []any{"function", "count"} }

// anyNode is node_state "any": the root endpoint leaves deactivated and
// expired nodes out of every query that does not name node_state (as
// PuppetDB does), so the queries about one node or report, which must
// show it whatever its state, and the history of the reports stored add
// this.
var anyNode = []any{"=", "node_state", "any"}
