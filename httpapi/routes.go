package httpapi

import (
	"net/http"
	"slices"
	"strings"

	"reportdb"
	"reportdb/metrics"
	"reportdb/query"
)

// route is one served pattern. The table below is the only list of
// routes: the mux, the metrics and log labels and the contract suite's
// endpoint groups (Endpoints) all come from it.
type route struct {
	pattern string // http.ServeMux pattern
	// label names a query route in metrics, logs and the conformance
	// cases' "endpoint" groups ("" for submissions)
	label string
	// channel is the ingest channel of a submission route
	channel string
	handler func(s *Server) http.HandlerFunc
	// upstream, when set, serves the route in front of an upstream
	// PuppetDB (Config.Upstream, upstream.go) instead of handler, which it
	// is given for what reportdb answers itself
	upstream upstreamHandler
	ep       int // index of label in Endpoints
}

// method adapts a handler method to the table.
func method(f func(*Server, http.ResponseWriter, *http.Request)) func(*Server) http.HandlerFunc {
	return func(s *Server) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { f(s, w, r) }
	}
}

func entity(e *query.Entity, kind Kind) func(*Server) http.HandlerFunc {
	return func(s *Server) http.HandlerFunc { return s.entityHandler(e, kind) }
}

func scoped(p parent, e *query.Entity, kind Kind, field string) func(*Server) http.HandlerFunc {
	return func(s *Server) http.HandlerFunc { return s.scopedHandler(p, e, kind, field) }
}

func blobRoute(column string) func(*Server) http.HandlerFunc {
	return func(s *Server) http.HandlerFunc { return s.reportBlobHandler(column) }
}

// routeTable is every route of the API.
var routeTable = append(append(baseRoutes, emptyRoutes()...), withUpstream(upstreamBeans, jolokiaRoutes())...)

// withUpstream sets the upstream-mode handler of routes.
func withUpstream(h upstreamHandler, routes []route) []route {
	for i := range routes {
		routes[i].upstream = h
	}
	return routes
}

var baseRoutes = []route{
	{pattern: "/pdb/cmd/v1", channel: metrics.ChannelCommand, handler: method((*Server).handleCommand), upstream: upstreamCommand},
	{pattern: "PUT /puppet/v3/report/{certname}", channel: metrics.ChannelPuppetReport, handler: method((*Server).handlePuppetReport)},
	{pattern: "POST /puppet/v3/report/{certname}", channel: metrics.ChannelPuppetReport, handler: method((*Server).handlePuppetReport)},
	{pattern: "POST /reports/upload", channel: metrics.ChannelHTTPProcessor, handler: method((*Server).handleHTTPReport)}, // Puppet's http report processor
	{pattern: "POST /upload", channel: metrics.ChannelHTTPProcessor, handler: method((*Server).handleHTTPReport)},

	{pattern: "/pdb/query/v4/events", label: "events", handler: entity(query.Events, KindEvents)},
	{pattern: "/pdb/query/v4/event-counts", label: "event-counts", handler: method((*Server).handleEventCounts)},
	{pattern: "/pdb/query/v4/aggregate-event-counts", label: "aggregate-event-counts", handler: method((*Server).handleAggregate)},
	{pattern: "/pdb/query/v4/reports", label: "reports", handler: entity(query.Reports, KindEntity)},
	{pattern: "/pdb/query/v4/reports/{hash}/events", label: "reports/<hash>/events", handler: scoped(reportParent, query.Events, KindEvents, "report")},
	{pattern: "/pdb/query/v4/reports/{hash}/metrics", label: "reports/<hash>/metrics", handler: blobRoute("metrics")},
	{pattern: "/pdb/query/v4/reports/{hash}/logs", label: "reports/<hash>/logs", handler: blobRoute("logs")},
	{pattern: "/pdb/query/v4/environments", label: "environments", handler: entity(query.Environments, KindEntity)},
	{pattern: "/pdb/query/v4/environments/{name}", label: "environments/<name>", handler: method((*Server).handleEnvironment)},
	{pattern: "/pdb/query/v4/environments/{name}/events", label: "environments/<name>/events", handler: scoped(environmentParent, query.Events, KindEvents, "environment")},
	{pattern: "/pdb/query/v4/environments/{name}/reports", label: "environments/<name>/reports", handler: scoped(environmentParent, query.Reports, KindEntity, "environment")},
	{pattern: "/pdb/query/v4/nodes", label: "nodes", handler: entity(query.Nodes, KindEntity), upstream: mergedNodes},
	{pattern: "/pdb/query/v4/nodes/{certname}", label: "nodes/<certname>", handler: method((*Server).handleNode), upstream: mergedNode},
	{pattern: "/pdb/query/v4", label: "root", handler: method((*Server).handleRoot), upstream: upstreamRoot},
	{pattern: "/pdb/meta/v1/version", label: "meta/version", handler: method((*Server).handleVersion)},
	{pattern: "/pdb/meta/v1/server-time", label: "meta/server-time", handler: method((*Server).handleServerTime)},
	{pattern: "GET /status/v1/services", label: "status", handler: method((*Server).handleStatusServices)},
	{pattern: "GET /status/v1/services/{name}", label: "status", handler: method((*Server).handleStatusService)},

	{pattern: "/v3/events", label: "v3/events", handler: entity(query.Events, KindEvents)},
	{pattern: "/v3/reports", label: "v3/reports", handler: entity(query.Reports, KindEntity)},
	{pattern: "/v3/event-counts", label: "v3/event-counts", handler: method((*Server).handleEventCounts)},
	{pattern: "/v3/aggregate-event-counts", label: "v3/aggregate-event-counts", handler: method((*Server).handleAggregate)},

	// PuppetDB's retired query API versions, and its answer to any other
	// path under /pdb/query/
	{pattern: "/pdb/query/v1", label: "retired", handler: method((*Server).handleRetired)},
	{pattern: "/pdb/query/v1/", label: "retired", handler: method((*Server).handleRetired)},
	{pattern: "/pdb/query/v2", label: "retired", handler: method((*Server).handleRetired)},
	{pattern: "/pdb/query/v2/", label: "retired", handler: method((*Server).handleRetired)},
	{pattern: "/pdb/query/v3", label: "retired", handler: method((*Server).handleRetired)},
	{pattern: "/pdb/query/v3/", label: "retired", handler: method((*Server).handleRetired)},
	{pattern: "/pdb/query/", label: metrics.OtherEndpoint, handler: method((*Server).handleUnrouted), upstream: upstreamUnrouted},
}

// endpoints are the distinct query labels of routeTable, in table order,
// ending with metrics.OtherEndpoint.
var endpoints = func() []string {
	var out []string
	for i := range routeTable {
		rt := &routeTable[i]
		if rt.label == "" {
			continue
		}
		if rt.ep = slices.Index(out, rt.label); rt.ep < 0 {
			rt.ep = len(out)
			out = append(out, rt.label)
		}
	}
	return out
}()

// epOther is the label index of requests that match no route.
var epOther = slices.Index(endpoints, metrics.OtherEndpoint)

// Endpoints returns the query endpoint labels of the API's routes (for
// metrics.New, and the contract suite's endpoint groups).
func Endpoints() []string { return slices.Clone(endpoints) }

func (s *Server) routes() {
	for i := range routeTable {
		rt := &routeTable[i]
		h := rt.handler(s)
		if rt.channel != "" {
			h = s.refuseCrossOrigin(h)
		}
		serve := func(w http.ResponseWriter, r *http.Request) {
			if st, ok := r.Context().Value(reqStateKey{}).(*reqState); ok {
				st.routed(rt, r)
			}
			h(w, r)
		}
		if s.cfg.Upstream != nil && rt.upstream != nil {
			serve = rt.upstream(s, serve)
		}
		s.mux.HandleFunc(rt.pattern, serve)
	}
}

// crossOrigin tells a browser's cross-site request (Sec-Fetch-Site, or an
// Origin that is not the Host) from the agents', servers' and scripts'
// requests, which send neither header.
var crossOrigin = http.NewCrossOriginProtection()

// refuseCrossOrigin keeps a web page from making a browser on the same
// machine or network submit reports: a submission changes what is stored,
// and none of PuppetDB's clients is a browser.
func (s *Server) refuseCrossOrigin(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := crossOrigin.Check(r); err != nil {
			s.writeError(w, r, &reportdb.Error{Code: reportdb.EFORBIDDEN,
				Message: "Cross-origin browser requests may not submit reports (" + err.Error() + ")"})
			return
		}
		h(w, r)
	}
}

// handleRetired answers the retired v1-v3 query APIs as PuppetDB does.
func (s *Server) handleRetired(w http.ResponseWriter, r *http.Request) {
	v := strings.TrimPrefix(r.URL.Path, "/pdb/query/v")[:1]
	s.writeError(w, r, &reportdb.Error{Code: reportdb.ERETIRED, Message: "The v" + v + " API has been retired; please use v4"})
}

// handleUnrouted reproduces PuppetDB's answer for paths under /pdb/query/
// that match no route: the catch-all redirect to the (absent) dashboard.
func (s *Server) handleUnrouted(w http.ResponseWriter, r *http.Request) {
	u := *r.URL
	if u.Host == "" {
		u.Host = r.Host
	}
	if u.Scheme == "" {
		u.Scheme = "http"
		if r.TLS != nil {
			u.Scheme = "https"
		}
	}
	u.RawQuery = ""
	w.Header().Set("Location", u.String()+"/dashboard/index.html")
	w.WriteHeader(http.StatusFound)
}

// handleVersion answers PuppetDB's /pdb/meta/v1/version: any method, the
// configured version as one pretty-printed object.
func (s *Server) handleVersion(w http.ResponseWriter, r *http.Request) {
	writeJSONObject(w, http.StatusOK, "version", s.cfg.PuppetDBVersion)
}

// handleServerTime answers PuppetDB's /pdb/meta/v1/server-time (7.x and
// 8.x alike, any method): the server's clock in UTC to the millisecond,
// always three digits of them, as PuppetDB's JSON writes a timestamp.
// pypuppetdb exposes it as server_time(), for clients that judge times by
// the server's clock rather than their own.
func (s *Server) handleServerTime(w http.ResponseWriter, r *http.Request) {
	writeJSONObject(w, http.StatusOK, "server_time", s.cfg.Now().UTC().Format(serverTimeLayout))
}

// serverTimeLayout is PuppetDB's timestamp format (yyyy-MM-dd'T'HH:mm:ss.SSS'Z');
// Go's .000 truncates to the millisecond as PuppetDB does.
const serverTimeLayout = "2006-01-02T15:04:05.000Z"

// PuppetDBVersion is the PuppetDB version whose API reportdb reproduces,
// and the version it reports unless Config.PuppetDBVersion says otherwise.
const PuppetDBVersion = "7.12.1"
