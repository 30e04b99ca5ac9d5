package httpapi

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"

	"reportdb/query"
)

// The PuppetDB v4 endpoints of data reportdb does not store (facts,
// catalogs, resources, ...). They answer exactly as PuppetDB 7.12.1 answers
// with no such data: the query is validated against the entity's fields
// (same 400 texts), then it runs on an always-empty relation, so a listing
// is [], an extract count is [{"count":0}] and include_total gives
// X-Records: 0. One named catalog or factset is a 404. The answers are
// recorded from a real PuppetDB in testdata/puppetdb-empty.json.

var (
	nodeParent    = parent{"certname", "node", query.Nodes, "certname"}
	noParent      = parent{}
	emptyEndpoint = map[string]string{ // path under /pdb/query/v4/ -> entity
		"facts": "facts", "fact-paths": "fact_paths", "fact-contents": "fact_contents",
		"inventory": "inventory", "resources": "resources", "catalogs": "catalogs", "edges": "edges",
		"packages": "packages", "package-inventory": "package_inventory", "factsets": "factsets",
		"catalog-inputs": "catalog_inputs", "catalog-input-contents": "catalog_input_contents",
	}
)

// emptyRoutes are the routes of the endpoints reportdb holds no data for
// (and of producers, which it answers from its reports); their labels are
// their paths under /pdb/query/v4/ with <name> for a path value. In front
// of an upstream PuppetDB, which holds that data, they are forwarded.
func emptyRoutes() []route {
	const v4 = "/pdb/query/v4/"
	var rs []route
	add := func(path string, h func(*Server) http.HandlerFunc) {
		label := strings.NewReplacer("{", "<", "}", ">").Replace(path)
		rs = append(rs, route{pattern: v4 + path, label: label, handler: h, upstream: forwarded})
	}
	paths := make([]string, 0, len(emptyEndpoint))
	for path := range emptyEndpoint {
		paths = append(paths, path)
	}
	sort.Strings(paths)
	for _, path := range paths {
		add(path, entity(query.Lookup(emptyEndpoint[path]), KindEntity))
	}
	add("fact-names", entity(query.FactNames, KindEntity))
	// producers are answered from reportdb's reports, upstream or not
	own := func(path string, h func(*Server) http.HandlerFunc) {
		add(path, h)
		rs[len(rs)-1].upstream = nil
	}
	own("producers", entity(query.Producers, KindEntity))
	own("producers/{name}", method((*Server).handleProducer))

	facts, resources := query.Lookup("facts"), query.Lookup("resources")
	filtered := func(p parent, e *query.Entity, fields ...string) func(*Server) http.HandlerFunc {
		return func(s *Server) http.HandlerFunc { return s.filteredHandler(p, e, fields...) }
	}
	add("facts/{name}", filtered(noParent, facts, "name"))
	add("facts/{name}/{value}", filtered(noParent, facts, "name", "value"))
	add("resources/{type}", filtered(noParent, resources, "type"))
	add("resources/{type}/{title}", filtered(noParent, resources, "type", "title"))
	add("package-inventory/{certname}", filtered(noParent, query.Lookup("package_inventory"), "certname"))

	add("nodes/{certname}/facts", filtered(nodeParent, facts, "certname"))
	add("nodes/{certname}/facts/{name}", filtered(nodeParent, facts, "certname", "name"))
	add("nodes/{certname}/facts/{name}/{value}", filtered(nodeParent, facts, "certname", "name", "value"))
	add("nodes/{certname}/resources", filtered(nodeParent, resources, "certname"))
	add("nodes/{certname}/resources/{type}", filtered(nodeParent, resources, "certname", "type"))
	add("nodes/{certname}/resources/{type}/{title}", filtered(nodeParent, resources, "certname", "type", "title"))

	add("environments/{name}/facts", scoped(environmentParent, facts, KindEntity, "environment"))
	add("environments/{name}/resources", scoped(environmentParent, resources, KindEntity, "environment"))

	absent := func(kind string) func(*Server) http.HandlerFunc {
		return func(s *Server) http.HandlerFunc { return s.absentHandler(kind) }
	}
	for _, p := range []string{"catalogs/{name}", "catalogs/{name}/edges", "catalogs/{name}/resources"} {
		add(p, absent("catalog"))
	}
	for _, p := range []string{"factsets/{name}", "factsets/{name}/facts"} {
		add(p, absent("factset"))
	}
	return rs
}

// absentHandler answers one named object reportdb never holds (a catalog,
// a factset): PuppetDB's 404.
func (s *Server) absentHandler(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, notFound(kind, r.PathValue("name")))
	}
}

// filteredHandler serves a listing of entity e restricted by path values:
// the i-th field equals the path value of the same name, except "certname",
// which comes from {certname}. A non-empty p must exist first (404).
func (s *Server) filteredHandler(p parent, e *query.Entity, fields ...string) http.HandlerFunc {
	filters := make([]pathFilter, len(fields))
	for i, f := range fields {
		filters[i] = pathFilter{f, f}
	}
	return s.listHandler(p, e, KindEntity, filters...)
}

// handleProducer serves /producers/<name>: the producer of stored reports
// as one pretty object, or 404.
func (s *Server) handleProducer(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if err := checkSingleParams(r); err != nil {
		s.writeError(w, r, err)
		return
	}
	q, _ := json.Marshal([]any{"extract", []any{[]any{"function", "count"}}, []any{"=", "name", name}})
	n, err := s.internalCount(r, "/pdb/query/v4/producers", string(q))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if n == 0 {
		s.writeError(w, r, notFound("producer", name))
		return
	}
	writeJSONObject(w, http.StatusOK, "name", name)
}
