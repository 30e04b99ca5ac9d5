// Package httpapi serves PuppetDB's HTTP API: the command endpoint, Puppet's
// report endpoints and the v4 query endpoints. It reads HTTP parameters
// with PuppetDB's rules, compiles queries with package query, runs them
// with package engine and streams the rows; it writes no SQL and never
// imports a concrete backend.
package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"reportdb"
	"reportdb/engine"
	"reportdb/ingest"
	"reportdb/service"
	"reportdb/store"
	"reportdb/upstream"
)

// Config tunes the server.
type Config struct {
	// MaxBodyBytes bounds request bodies (after decompression); larger
	// submissions get 413.
	MaxBodyBytes int64
	// MaxQueryBodyBytes bounds POST query bodies.
	MaxQueryBodyBytes int64
	// QueryTimeout bounds each query's execution.
	QueryTimeout time.Duration
	// Now returns the current time (injected for tests).
	Now func() time.Time
	// CorrectiveCounts makes event counts split successes and noops into
	// intentional and corrective ones (the PuppetDB Enterprise shape).
	CorrectiveCounts bool
	// Producer is used as the producer of reports received in Puppet's own
	// format when the request does not name one.
	Producer string
	// Upstream, when set, is the PuppetDB reportdb stands in front of:
	// commands reportdb does not keep (upstream.Kept) and queries on
	// entities reportdb does not hold go there; nodes are merged
	// (upstream.go).
	Upstream *upstream.Client
	// PuppetDBVersion is the version reported at /pdb/meta/v1/version and
	// as the puppetdb-status service_version ("": PuppetDBVersion). The API
	// served is the same whatever it says: it is for clients that wait for
	// an 8.x before using PuppetDB 8 behaviour reportdb has anyway.
	PuppetDBVersion string
	// OnDeactivated, when set, is called with the certname of each node a
	// "deactivate node" command deactivated (not for a stale command), so
	// that state kept beside the database (the fleet metrics) drops the
	// node at once instead of at its next reload.
	OnDeactivated func(certname string)
}

// Server is the HTTP API.
type Server struct {
	cfg        Config
	backend    engine.Backend
	engine     *engine.Engine
	svc        *service.Service      // the root and entity queries (root.go, query.go)
	committer  instrumentedCommitter // *ingest.Committer telling Instrument the outcome
	log        *slog.Logger
	mux        *http.ServeMux
	population population // /metrics/v2 population gauges (jolokia.go)
	ceHint     catalogEnvironmentHint
}

// New builds the API over backend, submitting reports through committer.
func New(cfg Config, backend engine.Backend, committer *ingest.Committer, log *slog.Logger) *Server {
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 64 << 20
	}
	if cfg.MaxQueryBodyBytes <= 0 {
		cfg.MaxQueryBodyBytes = 16 << 20
	}
	if cfg.QueryTimeout <= 0 {
		cfg.QueryTimeout = 2 * time.Minute
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.PuppetDBVersion == "" {
		cfg.PuppetDBVersion = PuppetDBVersion
	}
	if log == nil {
		log = slog.Default()
	}
	s := &Server{cfg: cfg, backend: backend, engine: engine.New(backend), committer: instrumentedCommitter{committer}, log: log, mux: http.NewServeMux()}
	s.svc = service.New(s.engine, cfg.QueryTimeout)
	s.routes()
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Vary", "Accept-Encoding, User-Agent")
	if !acceptsJSON(r.Header.Values("Accept")) {
		s.writeError(w, r, &reportdb.Error{Code: reportdb.ENOTACCEPT, Message: "must accept application/json"})
		return
	}
	if v := r.Header.Get(store.ConsistencyHeader); v != "" {
		c, err := store.ParseConsistency(v)
		if err != nil {
			s.writeError(w, r, &reportdb.Error{Code: reportdb.EINVALID, Message: err.Error()})
			return
		}
		r = r.WithContext(store.WithConsistency(r.Context(), c))
	}
	s.mux.ServeHTTP(w, r)
}

// acceptsJSON applies PuppetDB's Accept check: absent, or one of the
// comma-separated items is exactly */*, application/* or application/json.
func acceptsJSON(values []string) bool {
	if len(values) == 0 {
		return true
	}
	for _, v := range values {
		for _, item := range strings.Split(v, ",") {
			switch strings.TrimSpace(item) {
			case "*/*", "application/*", "application/json":
				return true
			}
		}
	}
	return false
}

// checkContentType applies PuppetDB's POST Content-Type rule: absent or
// application/json (any parameters).
func checkContentType(r *http.Request) (string, bool) {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return "", true
	}
	mt := strings.TrimSpace(strings.SplitN(ct, ";", 2)[0])
	return mt, strings.EqualFold(mt, "application/json")
}

func (s *Server) queryContext(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), s.cfg.QueryTimeout)
}
