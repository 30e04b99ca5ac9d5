package dashboard

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"reportdb/service"
)

const eventsPageSize = 50

// eventFields are the columns of the events explorer.
var eventFields = []string{"certname", "report", "timestamp", "status", "resource_type", "resource_title",
	"property", "old_value", "new_value", "message", "containing_class", "file", "line"}

// EventFilter is the events explorer's filter.
type EventFilter struct {
	Status, Type, Title, Class, Node string
	Report                           string    // a report hash
	Since, Until                     time.Time // zero: open
}

// eventStatuses are the event statuses PuppetDB knows.
var eventStatuses = []string{"success", "failure", "noop", "skipped"}

// pqlString renders s as a PQL double-quoted string (PQL decodes it as a
// JSON string).
func pqlString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// conditions are the filter's (field, value) equalities and ranges.
func (f EventFilter) conditions() [][3]string {
	var c [][3]string
	for _, x := range []struct{ field, v string }{{"status", f.Status}, {"resource_type", f.Type},
		{"resource_title", f.Title}, {"containing_class", f.Class}, {"certname", f.Node}, {"report", f.Report}} {
		if x.v != "" {
			c = append(c, [3]string{"=", x.field, x.v})
		}
	}
	if !f.Since.IsZero() {
		c = append(c, [3]string{">=", "timestamp", isoTime(f.Since)})
	}
	if !f.Until.IsZero() {
		c = append(c, [3]string{"<", "timestamp", isoTime(f.Until)})
	}
	// the events of one node or report whatever the node's state, as its
	// pages link here; the others follow PuppetDB: active nodes only
	if f.Node != "" || f.Report != "" {
		c = append(c, [3]string{"=", "node_state", "any"})
	}
	return c
}

// AST is the filter as a query AST (nil: everything).
func (f EventFilter) AST() any {
	var fs []any
	for _, c := range f.conditions() {
		fs = append(fs, []any{c[0], c[1], c[2]})
	}
	return and(fs...)
}

// PQL is the events query in PuppetDB's query language, with paging.
func (f EventFilter) PQL(fields []string, limit, offset int) string {
	var conds []string
	for _, c := range f.conditions() {
		conds = append(conds, c[1]+" "+c[0]+" "+pqlString(c[2]))
	}
	var b strings.Builder
	b.WriteString("events[" + strings.Join(fields, ", ") + "] { ")
	if len(conds) > 0 {
		b.WriteString(strings.Join(conds, " and ") + " ")
	}
	// (a longer order, down to the property, makes SQLite sort every event:
	// 1 s at the medium fleet against 20 ms)
	b.WriteString("order by timestamp desc, certname")
	if limit > 0 {
		b.WriteString(" limit " + strconv.Itoa(limit))
	}
	if offset > 0 {
		b.WriteString(" offset " + strconv.Itoa(offset))
	}
	b.WriteString(" }")
	return b.String()
}

// parseWhen reads a time bound: an RFC 3339 time, or a duration back from
// now ("90m", "24h", "7d").
func parseWhen(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse("2006-01-02T15:04", s); err == nil {
		return t, nil
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, nil
	}
	d, err := parseDuration(s)
	if err != nil || d <= 0 {
		return time.Time{}, badRequest("%q is neither a time (2025-01-31T12:00:00Z) nor a duration back from now (90m, 24h, 7d)", s)
	}
	return now.Add(-d), nil
}

func parseDuration(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.ParseFloat(n, 64)
		if err != nil || days > 36500 {
			return 0, badRequest("bad duration %q", s)
		}
		return time.Duration(days * 24 * float64(time.Hour)), nil
	}
	return time.ParseDuration(s)
}

type eventsData struct {
	Status, Type, Title, Class, Node, Since, Until string
	Report                                         string
	Statuses                                       []string
	PQL, AST                                       string
	APILink                                        string
	Rows                                           []eventRow
	Pager                                          pager
}

func (d *Dashboard) events(w http.ResponseWriter, r *http.Request) {
	v := r.URL.Query()
	data := &eventsData{Status: v.Get("status"), Type: v.Get("type"), Title: v.Get("title"), Class: v.Get("class"),
		Node: v.Get("node"), Since: v.Get("since"), Until: v.Get("until"), Report: v.Get("report"), Statuses: eventStatuses}
	f := EventFilter{Status: data.Status, Type: data.Type, Title: data.Title, Class: data.Class, Node: data.Node, Report: data.Report}
	if f.Report != "" && !hashPattern.MatchString(f.Report) {
		d.fail(w, r, 400, badRequest("a report hash is 40 lower-case hexadecimal digits, not %q", f.Report))
		return
	}
	if f.Status != "" && !contains(eventStatuses, f.Status) {
		d.fail(w, r, 400, badRequest("unknown event status %q: one of success, failure, noop, skipped", f.Status))
		return
	}
	now := d.o.Now()
	var err error
	if f.Since, err = parseWhen(data.Since, now); err != nil {
		d.fail(w, r, 400, err)
		return
	}
	if f.Until, err = parseWhen(data.Until, now); err != nil {
		d.fail(w, r, 400, err)
		return
	}
	page, err := pageParam(v)
	if err != nil {
		d.fail(w, r, 400, err)
		return
	}
	ctx := r.Context()
	pql := f.PQL(eventFields, eventsPageSize, (page-1)*eventsPageSize)
	data.PQL = pql
	// the AST as PuppetDB's own parser reads the PQL (ast_only)
	if _, err := d.o.Queries.Query(ctx, service.Request{Query: pql, ASTOnly: true}, func(row json.RawMessage) error {
		var b bytes.Buffer
		if err := json.Compact(&b, row); err != nil {
			return err
		}
		data.AST = b.String()
		return nil
	}); err != nil {
		d.fail(w, r, 500, err)
		return
	}
	data.APILink = "/pdb/query/v4?" + url.Values{"query": {pql}}.Encode()
	// (the probe is the next page's query: with fewer fields or limit 1,
	// SQLite chose plans 50 times slower)
	// no include_total: counting every matching event (1.5 million at
	// 10,000 nodes) costs a second; one probe row past the page tells
	// whether there is a next page
	rows, _, err := queryAll[eventRow](ctx, d.o.Queries, service.Request{Query: pql})
	if err != nil {
		d.fail(w, r, 500, err)
		return
	}
	more := false
	if len(rows) == eventsPageSize {
		probe, _, err := queryAll[eventRow](ctx, d.o.Queries, service.Request{Query: f.PQL(eventFields, eventsPageSize, page*eventsPageSize)})
		if err != nil {
			d.fail(w, r, 500, err)
			return
		}
		more = len(probe) > 0
	}
	for i := range rows {
		rows[i].prepare()
	}
	data.Rows = rows
	base := url.Values{}
	for _, k := range []string{"status", "type", "title", "class", "node", "since", "until", "report"} {
		if s := v.Get(k); s != "" {
			base.Set(k, s)
		}
	}
	data.Pager = openPager(base, Prefix+"events", page, eventsPageSize, len(rows), more)
	d.render(w, r, "events", "Events", data)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

type resourceNode struct {
	Certname               string
	Changed, Failed, Other int
	Last                   string
}

type resourceData struct {
	Type, Title                 string
	Nodes                       []resourceNode
	Events                      []eventRow
	Pager                       pager
	EventsLink, Since           string
	Failed, Changed, NodesTotal int
}

// resource shows one resource (type and title) across the fleet.
func (d *Dashboard) resource(w http.ResponseWriter, r *http.Request) {
	v := r.URL.Query()
	typ, title := v.Get("type"), v.Get("title")
	if typ == "" || title == "" {
		d.fail(w, r, 400, badRequest("a resource is named by type and title: /ui/resource?type=File&title=/etc/motd"))
		return
	}
	page, err := pageParam(v)
	if err != nil {
		d.fail(w, r, 400, err)
		return
	}
	ctx := r.Context()
	filter := []any{"and", []any{"=", "resource_type", typ}, []any{"=", "resource_title", title}}
	type grp struct {
		Count    int    `json:"count"`
		Certname string `json:"certname"`
		Status   string `json:"status"`
		Max      string `json:"max"`
	}
	gs, _, err := queryAll[grp](ctx, d.o.Queries, service.Request{Query: from("events",
		[]any{count(), []any{"function", "max", "timestamp"}, "certname", "status"}, filter, "certname", "status")})
	if err != nil {
		d.fail(w, r, 500, err)
		return
	}
	data := &resourceData{Type: typ, Title: title, EventsLink: link(Prefix+"events", "type", typ, "title", title)}
	idx := map[string]int{}
	for _, g := range gs {
		i, ok := idx[g.Certname]
		if !ok {
			i = len(data.Nodes)
			idx[g.Certname] = i
			data.Nodes = append(data.Nodes, resourceNode{Certname: g.Certname})
		}
		n := &data.Nodes[i]
		switch g.Status {
		case "failure":
			n.Failed += g.Count
			data.Failed += g.Count
		case "success":
			n.Changed += g.Count
			data.Changed += g.Count
		default:
			n.Other += g.Count
		}
		if g.Max > n.Last {
			n.Last = g.Max
		}
	}
	data.NodesTotal = len(data.Nodes)
	sortNodes(data.Nodes)
	if len(data.Nodes) > 200 {
		data.Nodes = data.Nodes[:200]
	}
	// the events of the 24 hours up to the latest one: a time range lets
	// PostgreSQL read only those days' partitions (listing all of a common
	// resource's events by time took 0.1-0.2 s at 10,000 nodes); the events
	// explorer has the rest
	latest := ""
	for _, n := range data.Nodes {
		latest = max(latest, n.Last)
	}
	var evs []eventRow
	windowTotal := 0
	if lt, ok := parseTime(latest); ok {
		since := isoTime(lt.Add(-24 * time.Hour))
		data.Since = since
		data.EventsLink = link(Prefix+"events", "type", typ, "title", title, "since", since)
		windowed := and(filter, []any{">=", "timestamp", since})
		fields := []any{"certname", "report", "timestamp", "status", "property", "old_value", "new_value", "message", "file", "line", "containment_path"}
		order := []service.Order{{Field: "timestamp", Order: "desc"}, {Field: "certname", Order: "asc"}, {Field: "property", Order: "asc"}}
		evs, _, err = queryAll[eventRow](ctx, d.o.Queries, service.Request{Query: from("events", fields, windowed),
			OrderBy: order, Limit: eventsPageSize, Offset: (page - 1) * eventsPageSize})
		if err != nil {
			d.fail(w, r, 500, err)
			return
		}
		// the window's total by a count of its own (10 ms; include_total
		// or a probe page cost as much as the listing, 0.1 s)
		type cnt struct {
			Count int `json:"count"`
		}
		cs, _, err := queryAll[cnt](ctx, d.o.Queries, service.Request{Query: from("events", []any{count()}, windowed)})
		if err != nil {
			d.fail(w, r, 500, err)
			return
		}
		if len(cs) > 0 {
			windowTotal = cs[0].Count
		}
	}
	for i := range evs {
		evs[i].prepare()
	}
	data.Events = evs
	data.Pager = newPager(url.Values{"type": {typ}, "title": {title}}, Prefix+"resource", page, eventsPageSize, windowTotal)
	d.render(w, r, "resource", typ+"["+title+"]", data)
}

// sortNodes orders by the latest event, newest first.
func sortNodes(ns []resourceNode) {
	sort.Slice(ns, func(i, j int) bool {
		if ns[i].Last != ns[j].Last {
			return ns[i].Last > ns[j].Last
		}
		return ns[i].Certname < ns[j].Certname
	})
}
