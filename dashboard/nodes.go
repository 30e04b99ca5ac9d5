package dashboard

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"time"

	"reportdb/service"
)

// nodesPageSize is the default of the nodes page's n (rows per page);
// maxNodesPageSize its largest value.
const (
	nodesPageSize    = 50
	maxNodesPageSize = 500
)

type nodeRow struct {
	Certname    string  `json:"certname"`
	Environment *string `json:"report_environment"`
	Status      *string `json:"latest_report_status"`
	NoopPending *bool   `json:"latest_report_noop_pending"`
	ReportTime  *string `json:"report_timestamp"`
	Hash        *string `json:"latest_report_hash"`
	Deactivated *string `json:"deactivated"`
	Expired     *string `json:"expired"`
	Shown       string  `json:"-"`
	// InactiveHow is "deactivated" or "expired" ("" for an active node),
	// since InactiveSince.
	InactiveHow, InactiveSince string `json:"-"`
	// Counts and run time of the latest report, from its metrics.
	Latest *latestCounts `json:"-"`
}

// latestCounts are the figures of a node's latest report that the nodes
// list shows, as Puppetboard's does.
type latestCounts struct {
	Failed, Changed, Noop int
	RunTime               float64
	HasRunTime            bool
}

type nodesData struct {
	Status, Environment, Q, N string
	Regex                     bool
	Sort, Order               string
	// State is the node_state shown: active (PuppetDB's default),
	// inactive (deactivated or expired) or any.
	State                  string
	Statuses, Envs, States []string
	Rows                   []nodeRow
	Pager                  pager
	Sorts                  []sortLink
}

type sortLink struct {
	Field, Label, Link, Current string
}

// nodeStates are the values of the nodes page's state (PuppetDB's
// node_state), the default first.
var nodeStates = []string{"active", "inactive", "any"}

// nodeFields are what the nodes page and the node page read of a node.
var nodeFields = []any{"certname", "report_environment", "latest_report_status", "latest_report_noop_pending",
	"report_timestamp", "latest_report_hash", "deactivated", "expired"}

// inactivity tells whether a node is deactivated or expired, and since
// when: deactivated wins when it is both (the fleet metrics count it so),
// "" when it is active.
func (n *nodeRow) inactivity() (how, since string) {
	switch {
	case n.Deactivated != nil:
		return "deactivated", *n.Deactivated
	case n.Expired != nil:
		return "expired", *n.Expired
	}
	return "", ""
}

// shownStatus is the status a row shows: "inactive" for a deactivated or
// expired node, whose latest report no longer tells its health (an
// expired node would otherwise read unresponsive, as if it were expected
// to report).
func (n *nodeRow) shownStatus(cutoff time.Time) string {
	if how, _ := n.inactivity(); how != "" {
		return "inactive"
	}
	return nodeStatus(n.Status, n.NoopPending, n.ReportTime, cutoff)
}

// nodeSorts are the sortable columns: dashboard name -> API field.
var nodeSorts = map[string]string{
	"certname": "certname", "environment": "report_environment",
	"status": "latest_report_status", "time": "report_timestamp",
}

func (d *Dashboard) nodes(w http.ResponseWriter, r *http.Request) {
	v := r.URL.Query()
	data := &nodesData{Status: v.Get("status"), Environment: v.Get("environment"), Q: v.Get("q"),
		Regex: v.Get("regex") != "", Sort: v.Get("sort"), Order: v.Get("order"), N: v.Get("n"), Statuses: Statuses,
		State: v.Get("state"), States: nodeStates}
	if data.State == "" {
		data.State = "active"
	}
	if !contains(nodeStates, data.State) {
		d.fail(w, r, 400, badRequest("unknown state %q: one of active, inactive, any", data.State))
		return
	}
	if data.Sort == "" {
		data.Sort = "certname"
	}
	if data.Order == "" {
		data.Order = "asc"
	}
	field, ok := nodeSorts[data.Sort]
	if !ok {
		d.fail(w, r, 400, badRequest("unknown sort %q: one of certname, environment, status, time", data.Sort))
		return
	}
	if data.Order != "asc" && data.Order != "desc" {
		d.fail(w, r, 400, badRequest("order must be asc or desc, not %q", data.Order))
		return
	}
	page, err := pageParam(v)
	if err != nil {
		d.fail(w, r, 400, err)
		return
	}
	size := nodesPageSize
	if s := v.Get("n"); s != "" {
		if size, err = strconv.Atoi(s); err != nil || size < 1 || size > maxNodesPageSize {
			d.fail(w, r, 400, badRequest("n (rows per page) must be a number from 1 to %d, not %q", maxNodesPageSize, s))
			return
		}
	}
	cutoff := d.o.Now().Add(-d.o.Unresponsive)
	sf, err := statusFilter(data.Status, cutoff)
	if err != nil {
		d.fail(w, r, 400, err)
		return
	}
	var nameFilter, envFilter, stateFilter any
	if data.Q != "" {
		pat := regexp.QuoteMeta(data.Q)
		if data.Regex {
			pat = data.Q
		}
		nameFilter = []any{"~", "certname", pat}
	}
	if data.Environment != "" {
		envFilter = []any{"=", "report_environment", data.Environment}
	}
	// active needs no filter: the root endpoint leaves inactive nodes out
	// unless a query names node_state
	if data.State != "active" {
		stateFilter = []any{"=", "node_state", data.State}
	}
	ctx := r.Context()
	orders := []service.Order{{Field: field, Order: data.Order}}
	if field != "certname" {
		orders = append(orders, service.Order{Field: "certname", Order: "asc"})
	}
	// without a certname filter the fleet state knows the total: the API
	// need not count the nodes (half the page's time at 10,000 nodes). It
	// holds active nodes only.
	total, known := 0, false
	if nameFilter == nil && data.State == "active" && d.o.Fleet != nil && d.o.Fleet.Ready() {
		known = true
		for st, envs := range d.o.Fleet.NodeCounts(cutoff) {
			if data.Status != "" && st != data.Status {
				continue
			}
			for env, n := range envs {
				if data.Environment == "" || env == data.Environment {
					total += n
				}
			}
		}
	}
	rows, apiTotal, err := queryAll[nodeRow](ctx, d.o.Queries, service.Request{Query: from("nodes", nodeFields,
		and(sf, envFilter, nameFilter, stateFilter)), OrderBy: orders, Limit: size, Offset: (page - 1) * size, Total: !known})
	if err != nil {
		d.fail(w, r, 500, err)
		return
	}
	if !known {
		total = apiTotal
	}
	for i := range rows {
		rows[i].Shown = rows[i].shownStatus(cutoff)
		rows[i].InactiveHow, rows[i].InactiveSince = rows[i].inactivity()
	}
	if err := d.latestCounts(ctx, rows); err != nil {
		d.fail(w, r, 500, err)
		return
	}
	data.Rows = rows
	type env struct {
		Name string `json:"name"`
	}
	envs, _, err := queryAll[env](ctx, d.o.Queries, service.Request{Query: []any{"from", "environments"}})
	if err != nil {
		d.fail(w, r, 500, err)
		return
	}
	for _, e := range envs {
		data.Envs = append(data.Envs, e.Name)
	}
	sort.Strings(data.Envs)
	base := url.Values{}
	for _, k := range []string{"status", "environment", "state", "q", "regex", "sort", "order", "n"} {
		if s := v.Get(k); s != "" {
			base.Set(k, s)
		}
	}
	data.Pager = newPager(base, Prefix+"nodes", page, size, total)
	for _, s := range []struct{ f, l string }{{"certname", "Certname"}, {"environment", "Environment"}, {"status", "Status"}, {"time", "Latest report"}} {
		o := "asc"
		cur := ""
		if s.f == data.Sort {
			cur = data.Order
			if data.Order == "asc" {
				o = "desc"
			}
		} else if s.f == "time" {
			o = "desc"
		}
		data.Sorts = append(data.Sorts, sortLink{Field: s.f, Label: s.l, Current: cur,
			Link: link(Prefix+"nodes", "status", data.Status, "environment", data.Environment, "state", v.Get("state"), "q", data.Q,
				"regex", v.Get("regex"), "sort", s.f, "order", o, "n", v.Get("n"))})
	}
	d.render(w, r, "nodes", "Nodes", data)
}

// latestCounts fills in the rows' latest report figures with one query
// for the page: the metrics of the listed reports, by hash.
func (d *Dashboard) latestCounts(ctx context.Context, rows []nodeRow) error {
	at := map[string]int{}
	var hashes []any
	for i, n := range rows {
		if h := str(n.Hash); h != "" {
			at[h] = i
			hashes = append(hashes, h)
		}
	}
	if len(hashes) == 0 {
		return nil
	}
	type rep struct {
		Hash    string      `json:"hash"`
		Metrics metricsBlob `json:"metrics"`
	}
	// node_state any: the rows may be inactive nodes (state=inactive or
	// any), whose reports the root endpoint leaves out otherwise
	reps, _, err := queryAll[rep](ctx, d.o.Queries, service.Request{Query: from("reports", []any{"hash", "metrics"},
		[]any{"and", []any{"in", "hash", []any{"array", hashes}}, anyNode})})
	if err != nil {
		return err
	}
	for _, r := range reps {
		i, ok := at[r.Hash]
		if !ok {
			continue
		}
		f, _ := r.Metrics.get("resources", "failed")
		c, _ := r.Metrics.get("resources", "changed")
		n, _ := r.Metrics.get("events", "noop")
		lc := &latestCounts{Failed: int(f), Changed: int(c), Noop: int(n)}
		lc.RunTime, lc.HasRunTime = r.Metrics.get("time", "total")
		rows[i].Latest = lc
	}
	return nil
}
