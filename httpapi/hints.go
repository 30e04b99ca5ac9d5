package httpapi

import (
	"net/http"
	"sync/atomic"
	"time"

	"reportdb/query"
)

// catalogEnvironmentHintEvery is how often at most the catalog_environment
// hint is logged: often enough that an operator looking into an empty
// page finds a recent line, rarely enough that a Puppetboard refreshing
// all day adds a line an hour, not one a request.
const catalogEnvironmentHintEvery = time.Hour

// catalogEnvironmentHint is when the catalog_environment hint was last
// logged. reportdb stores no catalogs, so without
// --catalog-environment-from-reports or --upstream a node's
// catalog_environment is null and a filter on it matches no node. Clients
// such as Puppetboard and openvoxview filter on it once an environment is
// picked, and their pages then go empty with no error to say why: the
// hint (WARN, so that it shows at log-level warn too) names the settings.
type catalogEnvironmentHint struct {
	last atomic.Int64 // Unix nanoseconds of the last line; 0: none yet
}

// checkCatalogEnvironment logs the hint, at most once every
// catalogEnvironmentHintEvery, when one of plans (nil ones are skipped)
// filters or sorts by catalog_environment while nothing fills it.
func (s *Server) checkCatalogEnvironment(r *http.Request, plans ...*query.Plan) {
	if s.cfg.Upstream != nil || query.CatalogEnvironmentFromReports() {
		return
	}
	ce := query.Nodes.Field("catalog_environment")
	used := false
	for _, p := range plans {
		if p.FiltersOrSorts(ce) {
			used = true
			break
		}
	}
	if !used {
		return
	}
	h := &s.ceHint
	now := s.cfg.Now().UnixNano()
	last := h.last.Load()
	if last != 0 && now-last < int64(catalogEnvironmentHintEvery) {
		return
	}
	// one of concurrent requests logs
	if !h.last.CompareAndSwap(last, now) {
		return
	}
	s.log.Warn("a query selects nodes by catalog_environment, which is null for every node: reportdb stores no catalogs. "+
		"Start reportdb with --catalog-environment-from-reports (a node's catalog_environment is then its latest report's environment) "+
		"or with --upstream (a PuppetDB that has the catalogs). Puppetboard and openvoxview filter on it once an environment is picked "+
		"and show empty pages otherwise. (Logged at most once an hour.)",
		"path", r.URL.Path, "user_agent", r.UserAgent())
}
