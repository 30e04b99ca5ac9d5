package dashboard

import (
	"net/http"
	"net/url"
	"sort"

	"reportdb/service"
)

const reportsPageSize = 50

// metricsBlob is the "metrics" field of a report as the API extracts it.
type metricsBlob struct {
	Data []struct {
		Category string  `json:"category"`
		Name     string  `json:"name"`
		Value    float64 `json:"value"`
	} `json:"data"`
}

func (m metricsBlob) get(category, name string) (float64, bool) {
	for _, x := range m.Data {
		if x.Category == category && x.Name == name {
			return x.Value, true
		}
	}
	return 0, false
}

type reportRow struct {
	Hash          string      `json:"hash"`
	Status        *string     `json:"status"`
	EndTime       string      `json:"end_time"`
	Producer      string      `json:"producer_timestamp"`
	Environment   string      `json:"environment"`
	Noop          *bool       `json:"noop"`
	NoopPending   *bool       `json:"noop_pending"`
	ConfigVersion string      `json:"configuration_version"`
	Metrics       metricsBlob `json:"metrics"`
	Changed       int         `json:"-"`
	Failed        int         `json:"-"`
	RunTime       float64     `json:"-"`
	HasRunTime    bool        `json:"-"`
}

type timelineCell struct {
	Hash, Status, Class, Time, X string
}

type resourceCount struct {
	Type, Title, Link string
	Changed, Failed   int
}

type nodeData struct {
	Certname, Environment, LatestStatus string
	// Inactive is "deactivated" or "expired" ("" for an active node),
	// since InactiveSince.
	Inactive, InactiveSince string
	Reports                 []reportRow
	Pager                   pager
	Timeline                []timelineCell
	Resources               []resourceCount
	Chart                   *chart
	Runs                    int
}

func (d *Dashboard) node(w http.ResponseWriter, r *http.Request) {
	certname := r.PathValue("certname")
	page, err := pageParam(r.URL.Query())
	if err != nil {
		d.fail(w, r, 400, err)
		return
	}
	ctx := r.Context()
	// node_state any here and in every query of the page: the root
	// endpoint leaves a deactivated or expired node out otherwise, and its
	// page would be "no node"
	nodes, _, err := queryAll[nodeRow](ctx, d.o.Queries, service.Request{Query: from("nodes", nodeFields,
		[]any{"and", []any{"=", "certname", certname}, anyNode})})
	if err != nil {
		d.fail(w, r, 500, err)
		return
	}
	if len(nodes) == 0 {
		d.fail(w, r, http.StatusNotFound, notFound("no node %q", certname))
		return
	}
	n := nodes[0]
	data := &nodeData{Certname: certname, Environment: str(n.Environment),
		LatestStatus: n.shownStatus(d.o.Now().Add(-d.o.Unresponsive))}
	data.Inactive, data.InactiveSince = n.inactivity()
	byNode := []any{"and", []any{"=", "certname", certname}, anyNode}
	rows, total, err := queryAll[reportRow](ctx, d.o.Queries, service.Request{Query: from("reports",
		[]any{"hash", "status", "end_time", "producer_timestamp", "environment", "noop", "noop_pending", "configuration_version", "metrics"},
		byNode), OrderBy: []service.Order{{Field: "producer_timestamp", Order: "desc"}}, Limit: reportsPageSize, Offset: (page - 1) * reportsPageSize, Total: true})
	if err != nil {
		d.fail(w, r, 500, err)
		return
	}
	for i := range rows {
		c, _ := rows[i].Metrics.get("resources", "changed")
		f, _ := rows[i].Metrics.get("resources", "failed")
		rows[i].Changed, rows[i].Failed = int(c), int(f)
		rows[i].RunTime, rows[i].HasRunTime = rows[i].Metrics.get("time", "total")
		rows[i].Metrics = metricsBlob{}
	}
	data.Reports = rows
	data.Pager = newPager(url.Values{}, Prefix+"node/"+url.PathEscape(certname), page, reportsPageSize, total)

	// the status timeline: the latest 100 runs, oldest first
	type tl struct {
		Hash   string  `json:"hash"`
		Status *string `json:"status"`
		T      string  `json:"producer_timestamp"`
	}
	tls, _, err := queryAll[tl](ctx, d.o.Queries, service.Request{Query: from("reports", []any{"hash", "status", "producer_timestamp"}, byNode),
		OrderBy: []service.Order{{Field: "producer_timestamp", Order: "desc"}}, Limit: 100})
	if err != nil {
		d.fail(w, r, 500, err)
		return
	}
	for i := len(tls) - 1; i >= 0; i-- {
		s := str(tls[i].Status)
		data.Timeline = append(data.Timeline, timelineCell{Hash: tls[i].Hash, Status: s,
			Class: funcs["statusClass"].(func(string) string)(s), Time: tls[i].T, X: fmtF(float64(len(data.Timeline)) * 10)})
	}

	// the resources that changed or failed most on this node
	type grp struct {
		Count  int    `json:"count"`
		Type   string `json:"resource_type"`
		Title  string `json:"resource_title"`
		Status string `json:"status"`
	}
	// over the latest 50 runs: events by report are one index
	// range each (all of a node's events cost 0.2-0.3 s on SQLite)
	hashes := make([]any, min(len(tls), 50))
	for i := range hashes {
		hashes[i] = tls[i].Hash
	}
	data.Runs = len(hashes)
	var gs []grp
	if len(hashes) > 0 {
		// the rows, counted here: the same query grouped by the API took
		// 0.7-1.4 s on SQLite against 20 ms
		var evs []grp
		// (and filtered here: a status filter made SQLite prefer its
		// status index, 0.7 s against 60 ms)
		evs, _, err = queryAll[grp](ctx, d.o.Queries, service.Request{Query: from("events",
			[]any{"resource_type", "resource_title", "status"}, []any{"and", []any{"in", "report", []any{"array", hashes}}, anyNode})})
		for _, e := range evs {
			if e.Status == "success" || e.Status == "failure" {
				e.Count = 1
				gs = append(gs, e)
			}
		}
	}
	if err != nil {
		d.fail(w, r, 500, err)
		return
	}
	m := map[[2]string]*resourceCount{}
	for _, g := range gs {
		k := [2]string{g.Type, g.Title}
		rc := m[k]
		if rc == nil {
			rc = &resourceCount{Type: g.Type, Title: g.Title, Link: link(Prefix+"events", "type", g.Type, "title", g.Title, "node", certname)}
			m[k] = rc
		}
		if g.Status == "failure" {
			rc.Failed += g.Count
		} else {
			rc.Changed += g.Count
		}
	}
	all := make([]*resourceCount, 0, len(m))
	for _, rc := range m {
		all = append(all, rc)
	}
	sort.Slice(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if a.Failed+a.Changed != b.Failed+b.Changed {
			return a.Failed+a.Changed > b.Failed+b.Changed
		}
		if a.Type != b.Type {
			return a.Type < b.Type
		}
		return a.Title < b.Title
	})
	for _, rc := range all[:min(15, len(all))] {
		data.Resources = append(data.Resources, *rc)
	}
	d.render(w, r, "node", certname, data)
}
