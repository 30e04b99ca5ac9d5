// Package fleet keeps the health of the fleet (each node's latest report:
// status, environment, time, failed and changed resources) in memory and
// exports it as Prometheus series. The state is loaded through the query
// service at start-up and every refresh interval (reports stored by other
// instances, retention), and updated by every report this instance stores
// (ingest.Committer.OnStored), so that a scrape never reads the database:
// it walks one map. Like PuppetDB's queries, it holds active nodes only:
// deactivated and expired ones are counted apart (Forget, and each load).
package fleet

import (
	"context"
	"encoding/json"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"reportdb"
	"reportdb/jsonv"
	"reportdb/service"
)

// node is one node's latest report.
type node struct {
	producerTS  int64 // ms; orders reports as the store's latest_report does
	endTime     int64 // ms; 0: no report
	env         string
	status      string
	noopPending bool
	failed      int   // resources with a failure event
	changed     int   // resources with a success event
	observed    int64 // ns of the local Observe (0: loaded)
}

// inactiveNode is a deactivated or expired node.
type inactiveNode struct {
	deactivated bool // else expired; deactivated wins when it is both
	// until: a report with a later producer_timestamp makes the node
	// active again (the store clears both marks when a report is newer
	// than either: the earlier of the two). For a node Forget removed, the
	// producer_timestamp of its latest report as tracked: the deactivation
	// is at least as new (the store refuses an older one), so no report
	// up to it reactivates the node.
	until int64 // ms
}

// Tracker is the fleet state and its collector.
type Tracker struct {
	unresponsive time.Duration
	now          func() time.Time

	mu       sync.Mutex
	nodes    map[string]*node
	inactive map[string]inactiveNode
	hours    *hours
	recent   []recent // observed since the current load began
	// forgotten: the nodes Forget removed while a load ran, which the
	// load's queries may still have seen active
	forgotten []string
	loading   bool
	loadedAt  time.Time
	hoursAt   time.Time // when the hourly counts were last loaded

	runDuration prometheus.Histogram
	nodesDesc   *prometheus.Desc
	unrespDesc  *prometheus.Desc
	ageDesc     *prometheus.Desc
	failedDesc  *prometheus.Desc
	changedDesc *prometheus.Desc
	loadedDesc  *prometheus.Desc
	inactDesc   *prometheus.Desc
}

// RunDurationBuckets are the buckets of reportdb_fleet_run_duration_seconds.
var RunDurationBuckets = []float64{1, 5, 10, 20, 30, 60, 120, 300, 600, 1800, 3600}

// New makes an empty tracker; unresponsive is how long without a report
// makes a node unresponsive; now may be nil (time.Now).
func New(unresponsive time.Duration, now func() time.Time) *Tracker {
	if now == nil {
		now = time.Now
	}
	if unresponsive <= 0 {
		unresponsive = 2 * time.Hour
	}
	return &Tracker{
		unresponsive: unresponsive, now: now, nodes: map[string]*node{}, inactive: map[string]inactiveNode{}, hours: newHours(),
		runDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "reportdb_fleet_run_duration_seconds",
			Help:    "Puppet run duration (the report's time/total metric) of the reports stored by this instance since it started.",
			Buckets: RunDurationBuckets,
		}),
		nodesDesc: prometheus.NewDesc("reportdb_fleet_nodes",
			"Nodes by the status of their latest report (failed, changed, unchanged, noop_pending; unresponsive when it is older than the unresponsive setting) and its environment.",
			[]string{"status", "environment"}, nil),
		unrespDesc: prometheus.NewDesc("reportdb_fleet_unresponsive_nodes",
			"Nodes whose latest report is older than the unresponsive setting.", nil, nil),
		ageDesc: prometheus.NewDesc("reportdb_fleet_newest_report_age_seconds",
			"Seconds since the end of the newest run of any node (absent without reports).", nil, nil),
		failedDesc: prometheus.NewDesc("reportdb_fleet_latest_failed_resources",
			"Resources with a failure event in the nodes' latest reports, by environment.", []string{"environment"}, nil),
		changedDesc: prometheus.NewDesc("reportdb_fleet_latest_changed_resources",
			"Resources with a success (change) event in the nodes' latest reports, by environment.", []string{"environment"}, nil),
		loadedDesc: prometheus.NewDesc("reportdb_fleet_state_loaded_timestamp_seconds",
			"When the fleet state was last loaded from the database (0: not yet).", nil, nil),
		inactDesc: prometheus.NewDesc("reportdb_fleet_inactive_nodes",
			"Nodes left out of the other fleet series, as out of PuppetDB's queries: deactivated (the deactivate node command) or expired (no report for node-ttl); a node that is both counts as deactivated.",
			[]string{"state"}, nil),
	}
}

// Observe records a report this instance stored. A report newer than a
// node's deactivation or expiry makes it active again, as in the store;
// an older one is counted in the hours but leaves the node out.
func (t *Tracker) Observe(r *reportdb.Report) {
	n := summarize(r)
	if d, ok := runTime(r.Metrics); ok {
		t.runDuration.Observe(d)
	}
	n.observed = time.Now().UnixNano()
	t.mu.Lock()
	active := true
	if in, ok := t.inactive[r.Certname]; ok {
		if active = n.producerTS > in.until; active {
			delete(t.inactive, r.Certname)
		}
	}
	if old := t.nodes[r.Certname]; active && (old == nil || old.producerTS < n.producerTS) {
		t.nodes[r.Certname] = n
	}
	t.observeHoursLocked(r)
	t.mu.Unlock()
}

// Forget removes a node deactivated on this instance at once (httpapi's
// Config.OnDeactivated), rather than at the next load: it leaves the node
// counts and counts as deactivated until a newer report. The hourly
// counts keep its reports, which stay stored.
func (t *Tracker) Forget(certname string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	in := inactiveNode{deactivated: true}
	if n := t.nodes[certname]; n != nil {
		in.until = n.producerTS
	}
	if old, ok := t.inactive[certname]; ok {
		in.until = max(in.until, old.until)
	}
	delete(t.nodes, certname)
	t.inactive[certname] = in
	if t.loading {
		t.forgotten = append(t.forgotten, certname)
	}
}

func summarize(r *reportdb.Report) *node {
	n := &node{producerTS: r.ProducerTimestamp, endTime: r.EndTime, env: r.Environment,
		noopPending: r.NoopPending != nil && *r.NoopPending}
	if r.Status != nil {
		n.status = *r.Status
	}
	type key struct{ t, title string }
	failed, changed := map[key]bool{}, map[key]bool{}
	for i := range r.Events {
		e := &r.Events[i]
		switch e.Status {
		case "failure":
			failed[key{e.ResourceType, e.ResourceTitle}] = true
		case "success":
			changed[key{e.ResourceType, e.ResourceTitle}] = true
		}
	}
	n.failed, n.changed = len(failed), len(changed)
	return n
}

// runTime reads time/total from a report's metrics (wire format: an array
// of {category, name, value}). It is read of every report stored, so it
// scans the bytes without building anything (scanRunTime), and parses
// them only where the scan cannot tell (escapes in the keys or names,
// anything unexpected). BenchmarkRunTime: a report's 2 KB of metrics.
func runTime(metrics []byte) (float64, bool) {
	if len(metrics) == 0 {
		return 0, false
	}
	if v, found, ok := scanRunTime(metrics); ok {
		return v, found
	}
	return parseRunTime(metrics)
}

// parseRunTime is runTime through a parsed tree.
func parseRunTime(metrics []byte) (float64, bool) {
	v, err := jsonv.Parse(metrics)
	if err != nil {
		return 0, false
	}
	ms, _ := v.([]any)
	for _, m := range ms {
		o, _ := m.(*jsonv.Object)
		if c, _ := o.Get("category"); c != "time" {
			continue
		}
		if n, _ := o.Get("name"); n != "total" {
			continue
		}
		num, _ := o.Get("value")
		lit, ok := num.(jsonv.Number)
		if !ok {
			return 0, false
		}
		f, err := strconv.ParseFloat(string(lit), 64)
		return f, err == nil
	}
	return 0, false
}

// scanRunTime is runTime over the bytes of valid JSON (the metrics are
// rendered by the decoders): ok is false where it cannot decide (a string
// with an escape, a duplicate key, a value of time/total that is not a
// number, input that is not an array of objects), and the caller parses.
func scanRunTime(b []byte) (v float64, found, ok bool) {
	s := jsonScan{b: b}
	if !s.byte('[') {
		return 0, false, false
	}
	if s.byte(']') {
		return 0, false, s.end()
	}
	for {
		if !s.byte('{') {
			return 0, false, false
		}
		var category, name, value []byte
		if !s.byte('}') {
			for {
				key, simple := s.str()
				if !simple || !s.byte(':') {
					return 0, false, false
				}
				var dst *[]byte
				switch string(key) {
				case "category":
					dst = &category
				case "name":
					dst = &name
				case "value":
					dst = &value
				}
				if dst != nil && *dst != nil {
					return 0, false, false // a duplicate key
				}
				start := s.skipWS()
				switch {
				case dst == nil || string(key) == "value":
					if !s.value(0) {
						return 0, false, false
					}
					if dst != nil {
						*dst = b[start:s.i]
					}
				case start < len(b) && b[start] == '"': // category or name
					str, simple := s.str()
					if !simple {
						return 0, false, false
					}
					*dst = str
				default: // a category or name that is not a string: not time/total
					if !s.value(0) {
						return 0, false, false
					}
					*dst = []byte{}
				}
				if s.byte('}') {
					break
				}
				if !s.byte(',') {
					return 0, false, false
				}
			}
		}
		if !found && string(category) == "time" && string(name) == "total" {
			f, err := strconv.ParseFloat(string(value), 64)
			if err != nil {
				return 0, false, false
			}
			v, found = f, true
		}
		if s.byte(']') {
			return v, found, s.end()
		}
		if !s.byte(',') {
			return 0, false, false
		}
	}
}

// jsonScan walks JSON text without building values.
type jsonScan struct {
	b []byte
	i int
}

func (s *jsonScan) skipWS() int {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
	return s.i
}

// byte consumes c (after white space) if it is next.
func (s *jsonScan) byte(c byte) bool {
	if s.skipWS() < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *jsonScan) end() bool { return s.skipWS() == len(s.b) }

// str consumes a string without escapes or control characters and
// returns its bytes; simple is false, and nothing of the string is
// consumed, when the next value is not such a string.
func (s *jsonScan) str() (str []byte, simple bool) {
	if s.skipWS() >= len(s.b) || s.b[s.i] != '"' {
		return nil, false
	}
	for j := s.i + 1; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			str = s.b[s.i+1 : j]
			s.i = j + 1
			return str, true
		case c == '\\' || c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

// value skips one JSON value (strings with escapes included); false on
// anything that is not one.
func (s *jsonScan) value(depth int) bool {
	if depth > 64 || s.skipWS() >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		for j := s.i + 1; j < len(s.b); j++ {
			switch s.b[j] {
			case '\\':
				j++
			case '"':
				s.i = j + 1
				return true
			}
		}
		return false
	case c == '[' || c == '{':
		closer := byte(']')
		if c == '{' {
			closer = '}'
		}
		s.i++
		if s.byte(closer) {
			return true
		}
		for {
			if c == '{' {
				if _, simple := s.str(); !simple {
					if !s.value(depth + 1) { // a key with escapes
						return false
					}
				}
				if !s.byte(':') {
					return false
				}
			}
			if !s.value(depth + 1) {
				return false
			}
			if s.byte(closer) {
				return true
			}
			if !s.byte(',') {
				return false
			}
		}
	case c == '-' || c >= '0' && c <= '9': // a number
		j := s.i + 1
		for j < len(s.b) && (s.b[j] == '-' || s.b[j] == '+' || s.b[j] == '.' || s.b[j] == 'e' || s.b[j] == 'E' ||
			s.b[j] >= '0' && s.b[j] <= '9') {
			j++
		}
		s.i = j
		return true
	default: // a literal
		for _, lit := range []string{"true", "false", "null"} {
			if len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
				s.i += len(lit)
				return true
			}
		}
		return false
	}
}

// Load replaces the state with the database's, through the query service:
// the nodes' latest reports and the resources with failure and success
// events in them. Reports observed while it ran are kept when newer.
func (t *Tracker) Load(ctx context.Context, q service.Querier) error {
	return t.load(ctx, q, true)
}

// load reloads the nodes' latest reports, and the hourly counts when
// withHours (Run does that hourly: they follow this instance's reports in
// between, and the reload brings those of other instances and retention).
func (t *Tracker) load(ctx context.Context, q service.Querier, withHours bool) error {
	started := time.Now().UnixNano()
	// hourly counts: the rollups' as each query saw them, plus what this
	// instance stored after it began (kept in t.recent meanwhile)
	t.mu.Lock()
	t.loading = true
	t.recent = t.recent[:0]
	t.forgotten = t.forgotten[:0]
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		t.loading = false
		t.mu.Unlock()
	}()
	var hours *hoursLoad
	var err error
	if withHours {
		if hours, err = loadHours(ctx, q); err != nil {
			return err
		}
	}
	loaded := map[string]*node{}
	type rep struct {
		Certname    string  `json:"certname"`
		Environment string  `json:"environment"`
		Status      *string `json:"status"`
		NoopPending *bool   `json:"noop_pending"`
		End         string  `json:"end_time"`
		Producer    string  `json:"producer_timestamp"`
	}
	ms := func(s string) int64 {
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return 0
		}
		return tm.UnixMilli()
	}
	_, err = q.Query(ctx, service.Request{Query: []any{"from", "reports", []any{"extract",
		[]any{"certname", "environment", "status", "noop_pending", "end_time", "producer_timestamp"},
		[]any{"=", "latest_report?", true}}}}, func(row json.RawMessage) error {
		var r rep
		if err := json.Unmarshal(row, &r); err != nil {
			return err
		}
		n := &node{producerTS: ms(r.Producer), endTime: ms(r.End), env: r.Environment,
			noopPending: r.NoopPending != nil && *r.NoopPending}
		if r.Status != nil {
			n.status = *r.Status
		}
		if old := loaded[r.Certname]; old == nil || old.producerTS < n.producerTS {
			loaded[r.Certname] = n
		}
		return nil
	})
	if err != nil {
		return err
	}
	// nodes without a report (retention deleted it): unresponsive
	_, err = q.Query(ctx, service.Request{Query: []any{"from", "nodes", []any{"extract", []any{"certname"},
		[]any{"null?", "latest_report_hash", true}}}}, func(row json.RawMessage) error {
		var r struct {
			Certname string `json:"certname"`
		}
		if err := json.Unmarshal(row, &r); err != nil {
			return err
		}
		if loaded[r.Certname] == nil {
			loaded[r.Certname] = &node{}
		}
		return nil
	})
	if err != nil {
		return err
	}
	// distinct resources with failure/success events in the latest reports
	_, err = q.Query(ctx, service.Request{Query: []any{"from", "events", []any{"extract",
		[]any{[]any{"function", "count"}, "certname", "status", "resource_type", "resource_title"},
		[]any{"and", []any{"=", "latest_report?", true}, []any{"in", "status", []any{"array", []any{"success", "failure"}}}},
		[]any{"group_by", "certname", "status", "resource_type", "resource_title"}}}}, func(row json.RawMessage) error {
		var g struct {
			Certname string `json:"certname"`
			Status   string `json:"status"`
		}
		if err := json.Unmarshal(row, &g); err != nil {
			return err
		}
		if n := loaded[g.Certname]; n != nil {
			if g.Status == "failure" {
				n.failed++
			} else {
				n.changed++
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	// the inactive nodes (the queries above leave them out, as PuppetDB's
	// root endpoint does)
	inactive := map[string]inactiveNode{}
	_, err = q.Query(ctx, service.Request{Query: []any{"from", "nodes", []any{"extract",
		[]any{"certname", "deactivated", "expired"}, []any{"=", "node_state", "inactive"}}}}, func(row json.RawMessage) error {
		var r struct {
			Certname    string  `json:"certname"`
			Deactivated *string `json:"deactivated"`
			Expired     *string `json:"expired"`
		}
		if err := json.Unmarshal(row, &r); err != nil {
			return err
		}
		in := inactiveNode{deactivated: r.Deactivated != nil}
		switch {
		case r.Deactivated != nil && r.Expired != nil:
			in.until = min(ms(*r.Deactivated), ms(*r.Expired))
		case r.Deactivated != nil:
			in.until = ms(*r.Deactivated)
		case r.Expired != nil:
			in.until = ms(*r.Expired)
		}
		inactive[r.Certname] = in
		return nil
	})
	if err != nil {
		return err
	}
	t.mu.Lock()
	// what changed while the queries ran: nodes forgotten (unless a newer
	// report brought them back since), reports observed
	for _, c := range t.forgotten {
		if t.nodes[c] == nil {
			delete(loaded, c)
			if _, ok := inactive[c]; !ok {
				inactive[c] = t.inactive[c]
			}
		}
	}
	for c, n := range t.nodes {
		if n.observed >= started {
			if in, ok := inactive[c]; ok {
				if n.producerTS <= in.until {
					continue
				}
				delete(inactive, c)
			}
			if l := loaded[c]; l == nil || l.producerTS < n.producerTS {
				loaded[c] = n
			}
		}
	}
	t.nodes = loaded
	t.inactive = inactive
	t.forgotten = t.forgotten[:0]
	if withHours {
		t.applyRecentLocked(hours)
		t.hours = hours.hours
		t.hoursAt = time.Now()
	}
	t.recent = t.recent[:0]
	t.loadedAt = time.Now()
	t.mu.Unlock()
	return nil
}

// HoursRefresh is how often Run reloads the hourly counts (reports per
// hour, failing resources) from the database; in between they follow the
// reports this instance stores. The nodes reload every interval.
const HoursRefresh = time.Hour

// Run loads the state now and then every interval until ctx ends; errors
// are passed to onErr (the state stays as it was).
func (t *Tracker) Run(ctx context.Context, q service.Querier, interval time.Duration, onErr func(error)) {
	for {
		t.mu.Lock()
		withHours := t.hoursAt.IsZero() || time.Since(t.hoursAt) >= HoursRefresh
		t.mu.Unlock()
		if err := t.load(ctx, q, withHours); err != nil && ctx.Err() == nil && onErr != nil {
			onErr(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}

// Describe implements prometheus.Collector.
func (t *Tracker) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{t.nodesDesc, t.unrespDesc, t.ageDesc, t.failedDesc, t.changedDesc, t.loadedDesc, t.inactDesc} {
		ch <- d
	}
	t.runDuration.Describe(ch)
}

// Status is a node's status as the metrics label it.
func (t *Tracker) status(n *node, cutoff int64) string {
	switch {
	case n.endTime == 0 || n.endTime < cutoff:
		return "unresponsive"
	case n.status != "failed" && n.noopPending:
		return "noop_pending"
	case n.status == "":
		return "unknown"
	}
	return n.status
}

// Snapshot is the fleet summary the collector exports.
type Snapshot struct {
	Nodes        map[[2]string]int // (status, environment) -> nodes
	Unresponsive int
	Failed       map[string]int // environment -> resources
	Changed      map[string]int
	NewestEnd    int64 // ms, 0: no report
	Loaded       time.Time
	// Inactive: "deactivated" and "expired" -> nodes (not in Nodes).
	Inactive map[string]int
}

// Snapshot summarises the state.
func (t *Tracker) Snapshot() Snapshot {
	cutoff := t.now().Add(-t.unresponsive).UnixMilli()
	s := Snapshot{Nodes: map[[2]string]int{}, Failed: map[string]int{}, Changed: map[string]int{},
		Inactive: map[string]int{"deactivated": 0, "expired": 0}}
	t.mu.Lock()
	defer t.mu.Unlock()
	s.Loaded = t.loadedAt
	for _, in := range t.inactive {
		if in.deactivated {
			s.Inactive["deactivated"]++
		} else {
			s.Inactive["expired"]++
		}
	}
	for _, n := range t.nodes {
		st := t.status(n, cutoff)
		s.Nodes[[2]string{st, n.env}]++
		if st == "unresponsive" {
			s.Unresponsive++
		}
		if n.endTime > 0 {
			s.Failed[n.env] += n.failed
			s.Changed[n.env] += n.changed
		}
		s.NewestEnd = max(s.NewestEnd, n.endTime)
	}
	return s
}

// Collect implements prometheus.Collector.
func (t *Tracker) Collect(ch chan<- prometheus.Metric) {
	s := t.Snapshot()
	keys := make([][2]string, 0, len(s.Nodes))
	for k := range s.Nodes {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i][0]+"\x00"+keys[i][1] < keys[j][0]+"\x00"+keys[j][1] })
	for _, k := range keys {
		ch <- prometheus.MustNewConstMetric(t.nodesDesc, prometheus.GaugeValue, float64(s.Nodes[k]), k[0], k[1])
	}
	ch <- prometheus.MustNewConstMetric(t.unrespDesc, prometheus.GaugeValue, float64(s.Unresponsive))
	if s.NewestEnd > 0 {
		age := float64(t.now().UnixMilli()-s.NewestEnd) / 1000
		ch <- prometheus.MustNewConstMetric(t.ageDesc, prometheus.GaugeValue, age)
	}
	for env, n := range s.Failed {
		ch <- prometheus.MustNewConstMetric(t.failedDesc, prometheus.GaugeValue, float64(n), env)
	}
	for env, n := range s.Changed {
		ch <- prometheus.MustNewConstMetric(t.changedDesc, prometheus.GaugeValue, float64(n), env)
	}
	loaded := 0.0
	if !s.Loaded.IsZero() {
		loaded = float64(s.Loaded.UnixNano()) / 1e9
	}
	ch <- prometheus.MustNewConstMetric(t.loadedDesc, prometheus.GaugeValue, loaded)
	// both states always, so that a rule on either has a series to read
	for _, st := range []string{"deactivated", "expired"} {
		ch <- prometheus.MustNewConstMetric(t.inactDesc, prometheus.GaugeValue, float64(s.Inactive[st]), st)
	}
	t.runDuration.Collect(ch)
}
