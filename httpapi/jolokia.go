package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"reportdb/jolokia"
	"reportdb/service"
)

// populationDomain is the domain of the beans served here; in front of
// an upstream PuppetDB, reads of the others are its.
const populationDomain = jolokia.PopulationDomain

// jolokiaRoutes serve PuppetDB's /metrics/v2 (Jolokia).
func jolokiaRoutes() []route {
	h := func(s *Server) http.HandlerFunc { return s.population.handler(s).ServeHTTP }
	return []route{
		{pattern: "/metrics/v2", label: "metrics/v2", handler: h},
		{pattern: "/metrics/v2/", label: "metrics/v2", handler: h},
	}
}

// population is the server's Jolokia handler, one for both routes: it
// keeps the population gauges a few seconds.
type population struct {
	once sync.Once
	h    *jolokia.Handler
}

// handler is the population beans counted through the query service, the
// node counts with an upstream's nodes merged in, as /nodes lists them.
func (p *population) handler(s *Server) *jolokia.Handler {
	p.once.Do(func() {
		p.h = jolokia.New(jolokia.Options{Nodes: s.Queries(), Reports: s.svc, Version: s.cfg.PuppetDBVersion,
			Now: s.cfg.Now, WriteError: s.writeError})
	})
	return p.h
}

// internalCount runs q, an extract of count(), on the entity served at
// path (/pdb/query/v4/<entity>) and returns the count. Whatever fails is
// the caller's internal error (500), the query being the server's own.
func (s *Server) internalCount(r *http.Request, path, q string) (int64, error) {
	filter, _, err := service.ParseQueryText(q)
	if err != nil {
		return 0, fmt.Errorf("%s: %v", path, err)
	}
	var rows []struct{ Count int64 }
	_, err = s.Queries().Query(r.Context(), service.Request{Query: []any{"from", strings.TrimPrefix(path, "/pdb/query/v4/"), filter}},
		func(row json.RawMessage) error {
			var c struct{ Count int64 }
			err := json.Unmarshal(row, &c)
			rows = append(rows, c)
			return err
		})
	if e := service.ErrorOf(err); e != nil {
		return 0, fmt.Errorf("%s: %d %s", path, e.Status, e.Message)
	} else if err != nil {
		return 0, err // cancelled
	}
	if len(rows) != 1 {
		return 0, fmt.Errorf("%s: %d rows answer a count", path, len(rows))
	}
	return rows[0].Count, nil
}
