package httpapi

import (
	"net/http"

	"reportdb/engine"
	"reportdb/query"
	"reportdb/service"
)

func (s *Server) handleEventCounts(w http.ResponseWriter, r *http.Request) {
	opts, p, ok := compileCounts(s, w, r, KindEventCounts, query.CompileEventCounts)
	if !ok {
		return
	}
	s.checkCatalogEnvironment(r, p.Events)
	ctx, cancel := s.queryContextFor(r, opts.Timeout)
	defer cancel()
	s.respond(w, r, func(send sender) error {
		return timedOut(ctx, s.engine.EventCounts(ctx, p, opts.IncludeTotal, func(rows *engine.Rows, total int64) error {
			return send(rows, total, opts.Pretty)
		}))
	})
}

// compileCounts reads the options of an event-counts endpoint and compiles
// them (answering the error and returning false when they are invalid).
func compileCounts[P any](s *Server, w http.ResponseWriter, r *http.Request, kind Kind,
	compile func(*query.Options, bool) (P, error)) (*query.Options, P, bool) {
	var p P
	opts, ok := s.queryOptions(w, r, kind)
	if !ok {
		return nil, p, false
	}
	p, err := compile(opts, s.cfg.CorrectiveCounts)
	if err != nil {
		s.writeError(w, r, err)
		return nil, p, false
	}
	return opts, p, true
}

// queryOptions reads and validates the parameters of a query endpoint.
func (s *Server) queryOptions(w http.ResponseWriter, r *http.Request, kind Kind) (*query.Options, bool) {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		s.writeError(w, r, errMethod)
		return nil, false
	}
	params, err := s.readParams(r)
	if err == nil && s.v3(r) {
		params, err = v3Params(params)
	}
	if err != nil {
		s.writeError(w, r, err)
		return nil, false
	}
	opts, err := parseOptions(kind, params)
	if err != nil {
		s.writeError(w, r, err)
		return nil, false
	}
	return opts, true
}

func (s *Server) handleAggregate(w http.ResponseWriter, r *http.Request) {
	opts, ap, ok := compileCounts(s, w, r, KindAggregate, query.CompileAggregate)
	if !ok {
		return
	}
	for _, p := range ap.Pieces {
		s.checkCatalogEnvironment(r, p.Events)
	}
	ctx, cancel := s.queryContextFor(r, opts.Timeout)
	defer cancel()
	s.respond(w, r, func(send sender) error {
		result, err := s.engine.AggregateEventCounts(ctx, ap)
		if err != nil {
			return timedOut(ctx, err)
		}
		return send(&service.List{Values: result}, -1, false)
	})
}
