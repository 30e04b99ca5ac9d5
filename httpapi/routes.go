package httpapi

import (
	"net/http"
	"regexp"

	"reportdb/query"
)

var retiredAPI = regexp.MustCompile(`^/pdb/query/v([123])(/|$)`)

func (s *Server) routes() {
	m := s.mux
	m.HandleFunc("/pdb/cmd/v1", s.handleCommand)
	m.HandleFunc("PUT /puppet/v3/report/{certname}", s.handlePuppetReport)
	m.HandleFunc("POST /puppet/v3/report/{certname}", s.handlePuppetReport)
	m.HandleFunc("POST /reports/upload", s.handleHTTPReport) // Puppet's http report processor
	m.HandleFunc("POST /upload", s.handleHTTPReport)

	m.HandleFunc("/pdb/query/v4/events", s.entityHandler(query.Events, query.KindEvents))
	m.HandleFunc("/pdb/query/v4/reports", s.entityHandler(query.Reports, query.KindEntity))
	m.HandleFunc("/pdb/query/v4/environments", s.entityHandler(query.Environments, query.KindEntity))
	m.HandleFunc("/pdb/query/v4/reports/{hash}/events", s.scopedHandler(reportParent, query.Events, query.KindEvents, "report"))
	m.HandleFunc("/pdb/query/v4/reports/{hash}/metrics", s.reportBlobHandler("metrics"))
	m.HandleFunc("/pdb/query/v4/reports/{hash}/logs", s.reportBlobHandler("logs"))
	m.HandleFunc("/pdb/query/v4/environments/{name}", s.handleEnvironment)
	m.HandleFunc("/pdb/query/v4/environments/{name}/events", s.scopedHandler(environmentParent, query.Events, query.KindEvents, "environment"))
	m.HandleFunc("/pdb/query/v4/environments/{name}/reports", s.scopedHandler(environmentParent, query.Reports, query.KindEntity, "environment"))
	m.HandleFunc("/pdb/query/v4", s.handleRoot)
	m.HandleFunc("/pdb/query/v4/event-counts", s.handleEventCounts)
	m.HandleFunc("/pdb/query/v4/aggregate-event-counts", s.handleAggregate)
	m.HandleFunc("/pdb/query/v4/nodes", s.entityHandler(query.Nodes, query.KindEntity))
	m.HandleFunc("/pdb/query/v4/nodes/{certname}", s.handleNode)
	m.HandleFunc("/pdb/meta/v1/version", s.handleVersion)
	m.HandleFunc("GET /status/v1/services", s.handleStatusServices)
	m.HandleFunc("GET /status/v1/services/{name}", s.handleStatusService)

	m.HandleFunc("/v3/events", s.entityHandler(query.Events, query.KindEvents))
	m.HandleFunc("/v3/reports", s.entityHandler(query.Reports, query.KindEntity))
	m.HandleFunc("/v3/event-counts", s.handleEventCounts)
	m.HandleFunc("/v3/aggregate-event-counts", s.handleAggregate)

	m.HandleFunc("/pdb/query/", s.handleUnrouted)
}

// handleUnrouted reproduces PuppetDB's answers for paths under /pdb/query/
// that match no route: the retired v1-v3 APIs get 404, everything else the
// catch-all redirect to the (absent) dashboard.
func (s *Server) handleUnrouted(w http.ResponseWriter, r *http.Request) {
	if m := retiredAPI.FindStringSubmatch(r.URL.Path); m != nil {
		w.Header().Set("Content-Type", ctText)
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte("The v" + m[1] + " API has been retired; please use v4"))
		return
	}
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

func (s *Server) handleVersion(w http.ResponseWriter, r *http.Request) {
	writeJSONObject(w, http.StatusOK, "version", PuppetDBVersion)
}

// PuppetDBVersion is the PuppetDB version whose API reportdb reproduces.
const PuppetDBVersion = "7.12.1"
