package httpapi

import (
	"bytes"
	"io"
	"net/http"
	"strings"

	"reportdb/query"
	"reportdb/query/pql"
	"reportdb/service"
	"reportdb/upstream"
)

// Upstream mode (Config.Upstream): reportdb stores reports itself and
// stands in front of an existing PuppetDB for everything else. Package
// upstream holds what that means (which commands stay, the merged nodes);
// here are the routes' HTTP sides (route.upstream in the route table):
//
//   - /pdb/cmd/v1: "store report" and "deactivate node" are handled here
//     (a deactivation is then forwarded); every other command is forwarded
//     as received.
//   - Queries on entities reportdb does not hold (facts, catalogs,
//     resources, inventory, ..., their sub-paths, and the root endpoint's
//     ["from", <such entity>] / PQL) are forwarded; the answer is streamed
//     back (status, headers such as X-Records, body).
//   - nodes (/nodes, /nodes/<certname>, root "from nodes") are merged
//     (upstream.Nodes). Limits: in such a nodes query, subqueries may
//     target nodes and the entities reportdb holds (reports, events,
//     environments, producers), not the forwarded ones (400); of the
//     aggregate functions only count() (with group_by) is supported.
//   - Jolokia beans other than the population ones are the upstream's.
//   - The upstream being unreachable answers 503 to what needs it; reports
//     and report queries are unaffected.
//
// What the upstream answers (forwarded or merged) is not recorded as the
// route's own (metrics, slow-query log): it counts under "other".

// upstreamHandler builds a route's upstream-mode handler from local, the
// route's own handler, which serves what reportdb answers itself.
type upstreamHandler func(s *Server, local http.HandlerFunc) http.HandlerFunc

// forwarded routes are the upstream's alone.
func forwarded(s *Server, _ http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { s.forward(w, r, nil) }
}

// upstreamCommand forwards every command reportdb does not keep
// (upstream.Kept), in either form: named in the URL, or in the envelope
// body.
func upstreamCommand(s *Server, local http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			local(w, r)
			return
		}
		if name := r.URL.Query().Get("command"); name != "" {
			if upstream.Kept(name) {
				local(w, r)
			} else {
				s.forward(w, r, nil)
			}
			return
		}
		raw, err := io.ReadAll(io.LimitReader(r.Body, s.cfg.MaxBodyBytes+1))
		r.Body = io.NopCloser(bytes.NewReader(raw))
		if err != nil || int64(len(raw)) > s.cfg.MaxBodyBytes {
			local(w, r) // which reports it
			return
		}
		gz := strings.EqualFold(strings.TrimSpace(r.Header.Get("Content-Encoding")), "gzip")
		if name, ok := upstream.EnvelopeCommand(raw, gz, s.cfg.MaxBodyBytes); !ok || upstream.Kept(name) {
			local(w, r)
			return
		}
		s.forward(w, r, raw)
	}
}

// mergedNodes serves /nodes on the merged nodes.
func mergedNodes(s *Server, _ http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		opts, ok := s.queryOptions(w, r, KindEntity)
		if !ok {
			return
		}
		plan, err := query.CompileEntity(query.Nodes, opts)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.serveMergedNodes(w, r, plan, opts)
	}
}

// mergedNode serves /nodes/<certname> on the merged nodes; a certname
// holding a slash (%2F) names a sub-path of the upstream's.
func mergedNode(s *Server, _ http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("certname")
		if strings.Contains(name, "/") {
			s.forward(w, r, nil)
			return
		}
		s.serveMergedNode(w, r, name)
	}
}

// upstreamUnrouted sorts the paths under /pdb/query/ that no other route
// matches, by their decoded path: under /nodes/, a certname is merged and
// any deeper path forwarded; under a forwarded entity's path, or an
// environment's facts or resources, forwarded; anything else is local's.
func upstreamUnrouted(s *Server, local http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rest, ok := strings.CutPrefix(r.URL.Path, "/pdb/query/v4/")
		if !ok {
			local(w, r)
			return
		}
		if name, ok := strings.CutPrefix(rest, "nodes/"); ok {
			if strings.Contains(name, "/") {
				s.forward(w, r, nil)
			} else {
				s.serveMergedNode(w, r, name)
			}
			return
		}
		first, sub, _ := strings.Cut(rest, "/")
		_, empty := emptyEndpoint[first]
		if empty || first == "fact-names" ||
			first == "environments" && (strings.HasSuffix(sub, "/facts") || strings.HasSuffix(sub, "/resources")) {
			s.forward(w, r, nil)
			return
		}
		local(w, r)
	}
}

// upstreamBeans forwards Jolokia reads of the upstream's own beans (JVM,
// command queue, storage, ...); the population beans count the merged
// nodes here.
func upstreamBeans(s *Server, local http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if bean, ok := strings.CutPrefix(r.URL.Path, "/metrics/v2/read/"); ok && !strings.HasPrefix(bean, populationDomain+":") {
			s.forward(w, r, nil)
			return
		}
		local(w, r)
	}
}

// upstreamRoot routes a root query by its entity: forwarded entities go
// upstream, nodes are merged, the rest (and any query the root endpoint
// refuses) is local's.
func upstreamRoot(s *Server, local http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var raw []byte
		if r.Body != nil && r.Method == http.MethodPost {
			b, err := readAll(r.Body, s.cfg.MaxQueryBodyBytes)
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			raw = b
			r.Body = io.NopCloser(bytes.NewReader(raw))
		}
		params, err := s.readParams(r)
		if raw != nil {
			r.Body = io.NopCloser(bytes.NewReader(raw))
		}
		if err != nil {
			local(w, r)
			return
		}
		opts, err := parseOptions(KindRoot, params)
		if err != nil || opts.ASTOnly {
			local(w, r)
			return
		}
		ast := opts.Query
		if opts.QuerySet && opts.Query == nil && query.RootQueryIsPQL(opts.QueryText) {
			if ast, err = pql.Parse(opts.QueryText); err != nil {
				local(w, r)
				return
			}
		}
		arr, ok := ast.([]any)
		if !ok || len(arr) < 2 || arr[0] != "from" {
			local(w, r)
			return
		}
		name, _ := arr[1].(string)
		switch e := query.Lookup(strings.ReplaceAll(name, "-", "_")); {
		case e == nil:
			local(w, r)
		case !e.Exists:
			s.forward(w, r, raw)
		case e == query.Nodes:
			plan, err := query.CompileRoot(ast, opts)
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			s.serveMergedNodes(w, r, plan, opts)
		default:
			local(w, r)
		}
	}
}

// forward streams r to the upstream (body: a replacement for r.Body, or
// nil for r.Body itself); an unreachable upstream is a 503.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, body []byte) {
	var in io.Reader = r.Body
	if body != nil {
		in = bytes.NewReader(body)
	} else if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		in = nil
	}
	if err := s.cfg.Upstream.Forward(w, r, in); err != nil {
		s.writeError(w, r, upstream.Err(err))
	}
}

// upstreamNodes is the upstream's nodes merged with the store's.
func (s *Server) upstreamNodes() upstream.Nodes {
	return upstream.Nodes{Upstream: s.cfg.Upstream, Local: upstream.EngineLocal(s.engine, s.cfg.QueryTimeout)}
}

// serveMergedNode serves one merged node, as /nodes/<certname> does.
func (s *Server) serveMergedNode(w http.ResponseWriter, r *http.Request, name string) {
	if err := checkSingleParams(r); err != nil {
		s.writeError(w, r, err)
		return
	}
	row, err := s.upstreamNodes().Node(r.Context(), name)
	switch {
	case err != nil:
		s.writeError(w, r, err)
	case row == nil:
		s.writeError(w, r, notFound("node", name))
	default:
		writePretty(w, http.StatusOK, row)
	}
}

// serveMergedNodes answers a nodes plan on the merged nodes.
func (s *Server) serveMergedNodes(w http.ResponseWriter, r *http.Request, plan *query.Plan, opts *query.Options) {
	out, total, err := s.upstreamNodes().Query(r.Context(), plan)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	n := int64(-1)
	if opts.IncludeTotal {
		n = int64(total)
	}
	s.respond(w, r, func(send sender) error { return send(&service.List{Values: out}, n, opts.Pretty) })
}
