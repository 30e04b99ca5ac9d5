package fleet

import (
	"context"
	"encoding/json"
	"sort"
	"time"

	"reportdb"
	"reportdb/service"
)

// The dashboard's overview reads these from the tracker instead of
// aggregating every report and failure event of the retained days at each
// page load (2 s and 0.6 s on PostgreSQL at 10,000 nodes). The tracker
// loads them with two queries the rollups answer (report_rollup by hour
// and status, failure_rollup by hour and resource), so that a load costs
// the number of hours and failing resources kept, not the number of
// reports and events: reading the tables themselves took 22 s at 10,000
// nodes and 14 days, on every instance every HoursRefresh.
//
// They count the reports of every node, inactive ones too (node_state
// "any"): the rollups do not know which node a count is of, so the
// root endpoint's implicit "active nodes only" would make both queries
// read the tables whenever some node is deactivated or expired, which
// with node-ttl is nearly always. It is the history of the reports
// stored, which a deactivation does not change, and what Observe counts.

// bucket is one hour: reports by status (by producer_timestamp) and
// failure events by resource (by event timestamp), the resource by its
// index in its hours' resources.
type bucket struct {
	status  map[string]int
	failing map[int32]int
}

// hours are the hourly counts, by hour (Unix ms / 3,600,000). The
// failing resources are numbered once for all hours: the hours' maps
// then hold no pointers, which the garbage collector does not have to
// follow (the counts of 14 days hold hundreds of thousands of entries
// at 10,000 nodes, marked at every collection otherwise), and a
// resource's type and title are stored once, not once per hour.
type hours struct {
	byHour    map[int64]*bucket
	resources [][2]string         // type and title, by index
	index     map[[2]string]int32 // the index of a type and title
}

func newHours() *hours {
	return &hours{byHour: map[int64]*bucket{}, index: map[[2]string]int32{}}
}

// bucket returns hour h's bucket, made when missing.
func (m *hours) bucket(h int64) *bucket {
	b := m.byHour[h]
	if b == nil {
		b = &bucket{status: map[string]int{}, failing: map[int32]int{}}
		m.byHour[h] = b
	}
	return b
}

// resource returns the index of a type and title, numbering it when new.
func (m *hours) resource(typ, title string) int32 {
	k := [2]string{typ, title}
	i, ok := m.index[k]
	if !ok {
		i = int32(len(m.resources))
		m.resources = append(m.resources, k)
		m.index[k] = i
	}
	return i
}

// recent is what Observe added since a load began, to be re-applied over
// the loaded counts: those of a report observed after a query began, which
// that query's snapshot may not have seen. (Observe runs after the
// report's commit, so a report observed before the query began is in its
// snapshot; one committed just before the query and observed just after
// it began is counted twice until the next load: the microseconds between
// a commit and its Observe.)
type recent struct {
	observed int64 // ns, the local clock
	report   int64 // hour of producer_timestamp
	status   string
	fails    []failKey
}

type failKey struct {
	hour       int64
	typ, title string
}

func hourOf(ms int64) int64 { return ms / 3_600_000 }

func statusOrUnknown(p *string) string {
	if p == nil || *p == "" {
		return "unknown"
	}
	return *p
}

// observeHours adds a stored report to the hourly counts (t.mu held).
func (t *Tracker) observeHoursLocked(r *reportdb.Report) {
	rc := recent{observed: time.Now().UnixNano(), report: hourOf(r.ProducerTimestamp), status: statusOrUnknown(r.Status)}
	for i := range r.Events {
		if e := &r.Events[i]; e.Status == "failure" {
			rc.fails = append(rc.fails, failKey{hourOf(e.Timestamp), e.ResourceType, e.ResourceTitle})
		}
	}
	t.applyLocked(t.hours, rc, true, true)
	if t.loading {
		t.recent = append(t.recent, rc)
	}
}

// applyLocked adds rc to m: its report to the hourly statuses and its
// failure events to the failing resources, each when asked.
func (t *Tracker) applyLocked(m *hours, rc recent, status, fails bool) {
	if status {
		m.bucket(rc.report).status[rc.status]++
	}
	if fails {
		for _, f := range rc.fails {
			m.bucket(f.hour).failing[m.resource(f.typ, f.title)]++
		}
	}
}

// hoursLoad is the result of loadHours: the counts, and when (local ns)
// each of its two queries began.
type hoursLoad struct {
	hours                       *hours
	reportsBegan, failuresBegan int64
}

// applyRecentLocked adds to l's counts what Observe recorded after each
// query began (t.mu held).
func (t *Tracker) applyRecentLocked(l *hoursLoad) {
	for _, rc := range t.recent {
		t.applyLocked(l.hours, rc, rc.observed >= l.reportsBegan, rc.observed >= l.failuresBegan)
	}
}

// anyNode is node_state "any": every node's rows (see above).
var anyNode = []any{"=", "node_state", "any"}

// loadHours reads the hourly counts through the query service: reports by status
// and hour of producer_timestamp, failure events by resource and hour of
// their timestamp (the rollups answer both).
func loadHours(ctx context.Context, q service.Querier) (*hoursLoad, error) {
	out := newHours()
	l := &hoursLoad{hours: out}
	hourFn := func(field string) []any { return []any{"function", "to_string", field, "YYYY-MM-DD HH24"} }
	parseHour := func(s string) (int64, bool) {
		tm, err := time.Parse("2006-01-02 15", s)
		if err != nil {
			return 0, false
		}
		return hourOf(tm.UnixMilli()), true
	}
	l.reportsBegan = time.Now().UnixNano()
	_, err := q.Query(ctx, service.Request{Query: []any{"from", "reports", []any{"extract",
		[]any{[]any{"function", "count"}, "status", hourFn("producer_timestamp")},
		anyNode, []any{"group_by", "status", hourFn("producer_timestamp")}}}}, func(row json.RawMessage) error {
		var g struct {
			Count  int     `json:"count"`
			Status *string `json:"status"`
			Hour   string  `json:"to_string"`
		}
		if err := json.Unmarshal(row, &g); err != nil {
			return err
		}
		if h, ok := parseHour(g.Hour); ok {
			out.bucket(h).status[statusOrUnknown(g.Status)] += g.Count
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	l.failuresBegan = time.Now().UnixNano()
	_, err = q.Query(ctx, service.Request{Query: []any{"from", "events", []any{"extract",
		[]any{[]any{"function", "count"}, "resource_type", "resource_title", hourFn("timestamp")},
		[]any{"and", []any{"=", "status", "failure"}, anyNode},
		[]any{"group_by", "resource_type", "resource_title", hourFn("timestamp")}}}}, func(row json.RawMessage) error {
		var g struct {
			Count int    `json:"count"`
			Type  string `json:"resource_type"`
			Title string `json:"resource_title"`
			Hour  string `json:"to_string"`
		}
		if err := json.Unmarshal(row, &g); err != nil {
			return err
		}
		if h, ok := parseHour(g.Hour); ok {
			out.bucket(h).failing[out.resource(g.Type, g.Title)] += g.Count
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return l, nil
}

// Ready tells whether the state was loaded once (before, the dashboard
// asks the API).
func (t *Tracker) Ready() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return !t.loadedAt.IsZero()
}

// HourCounts returns the reports by status of each hour in [start, end)
// (by producer_timestamp).
func (t *Tracker) HourCounts(start, end time.Time) []map[string]int {
	h0, h1 := hourOf(start.UnixMilli()), hourOf(end.UnixMilli())
	out := make([]map[string]int, max(h1-h0, 0))
	t.mu.Lock()
	defer t.mu.Unlock()
	for h, b := range t.hours.byHour {
		if h < h0 || h >= h1 || len(b.status) == 0 {
			continue
		}
		m := make(map[string]int, len(b.status))
		for s, n := range b.status {
			m[s] = n
		}
		out[h-h0] = m
	}
	return out
}

// FailingResource is a resource and its count of failure events.
type FailingResource struct {
	Type, Title string
	Count       int
}

// SortFailing orders by count (most first), then type and title.
func SortFailing(f []FailingResource) {
	sort.Slice(f, func(i, j int) bool {
		if f[i].Count != f[j].Count {
			return f[i].Count > f[j].Count
		}
		if f[i].Type != f[j].Type {
			return f[i].Type < f[j].Type
		}
		return f[i].Title < f[j].Title
	})
}

// Failing returns the limit resources with the most failure events whose
// timestamp is in [start, end), most first.
func (t *Tracker) Failing(start, end time.Time, limit int) []FailingResource {
	h0, h1 := hourOf(start.UnixMilli()), hourOf(end.UnixMilli())
	sum := map[int32]int{}
	t.mu.Lock()
	for h, b := range t.hours.byHour {
		if h < h0 || h >= h1 {
			continue
		}
		for k, n := range b.failing {
			sum[k] += n
		}
	}
	out := make([]FailingResource, 0, len(sum))
	for k, n := range sum {
		r := t.hours.resources[k]
		out = append(out, FailingResource{Type: r[0], Title: r[1], Count: n})
	}
	t.mu.Unlock()
	SortFailing(out)
	return out[:min(limit, len(out))]
}

// NodeCounts returns the nodes by dashboard status ("noop pending" with a
// space) and environment, unresponsive before cutoff.
func (t *Tracker) NodeCounts(cutoff time.Time) map[string]map[string]int {
	c := cutoff.UnixMilli()
	out := map[string]map[string]int{}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, n := range t.nodes {
		st := t.status(n, c)
		if st == "noop_pending" {
			st = "noop pending"
		}
		if out[st] == nil {
			out[st] = map[string]int{}
		}
		out[st][n.env]++
	}
	return out
}
