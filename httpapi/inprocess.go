package httpapi

import "reportdb/service"

// Queries answers root queries as the API's root endpoint does, for the
// readers in the same process (the dashboard, the fleet state, the Jolokia
// beans): the query service, with an upstream PuppetDB's nodes merged in
// front of one.
func (s *Server) Queries() service.Querier {
	if s.cfg.Upstream != nil {
		return service.WithNodes(s.svc, s.upstreamNodes())
	}
	return s.svc
}
