package httpapi

import (
	"context"
	"net/http"
	"time"

	"reportdb"
	"reportdb/query"
)

// parent is what a scoped listing hangs from: the path value naming it, the
// word its 404 uses, and the entity and field that must have that value.
type parent struct {
	param, kind string
	entity      *query.Entity
	field       string
}

var (
	reportParent      = parent{"hash", "report", query.Reports, "hash"}
	environmentParent = parent{"name", "environment", query.Environments, "name"}
)

// requireParent answers 404 (or the error) and returns false unless the
// parent named name exists; timeout is the client's (0: none).
func (s *Server) requireParent(w http.ResponseWriter, r *http.Request, p parent, name string, timeout time.Duration) bool {
	ctx, cancel := s.queryContextFor(r, timeout)
	defer cancel()
	ok, err := s.engine.Exists(ctx, p.entity, p.field, name)
	err = timedOut(ctx, err)
	if err == nil && !ok {
		err = notFound(p.kind, name)
	}
	if err != nil {
		s.writeError(w, r, err)
		return false
	}
	return true
}

// checkSingleParams validates the query string of an endpoint that answers
// one object (/environments/<name>, /reports/<hash>/logs and /metrics;
// /nodes/<certname> as KindNode): only pretty is accepted (besides the
// global parameters), as PuppetDB does.
func checkSingleParams(r *http.Request) error {
	_, err := singleParams(r, KindSingle)
	return err
}

// singleParams is checkSingleParams, with the options read (the timeout).
func singleParams(r *http.Request, kind Kind) (*query.Options, error) {
	params, err := parseQueryString(r.URL.RawQuery)
	if err != nil {
		return nil, err
	}
	return parseOptions(kind, params)
}

func notFound(kind, name string) error {
	return reportdb.Errorf(reportdb.ENOTFOUND, "No information is known about %s %s", kind, name)
}

// reportBlobHandler serves /reports/<hash>/metrics and /logs: the stored
// array, exactly as PostgreSQL renders it (pretty is accepted and ignored).
func (s *Server) reportBlobHandler(column string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		hash := r.PathValue("hash")
		opts, err := singleParams(r, KindSingle)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		ctx, cancel := s.queryContextFor(r, opts.Timeout)
		defer cancel()
		data, err := s.reportDocument(ctx, r, hash, column)
		if err != nil {
			s.writeError(w, r, timedOut(ctx, err))
			return
		}
		w.Header().Set("Content-Type", ctJSON)
		out := newBody(w, r)
		w.WriteHeader(http.StatusOK)
		out.Write(data)
		out.Close()
	}
}

// reportDocument reads a report's stored document (404 when there is no
// such report). A document is as large as a report body may be: what
// reading it takes (the driver's copy and ours) is charged to the body
// budget first, so that many reads of large documents wait their turn.
func (s *Server) reportDocument(ctx context.Context, r *http.Request, hash, column string) ([]byte, error) {
	size, found, err := s.engine.ReportDocumentSize(ctx, hash, column)
	if err == nil && found {
		_, err = leaseOf(r).grow(ctx, 2*size)
	}
	var data []byte
	if err == nil && found {
		data, found, err = s.engine.ReportDocument(ctx, hash, column)
	}
	if err == nil && !found {
		err = notFound("report", hash)
	}
	return data, err
}

// handleEnvironment serves /environments/<name> (any method).
func (s *Server) handleEnvironment(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	opts, err := singleParams(r, KindSingle)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if !s.requireParent(w, r, environmentParent, name, opts.Timeout) {
		return
	}
	writeJSONObject(w, http.StatusOK, "name", name)
}

// scopedHandler serves a child listing of one parent: /reports/<hash>/events
// (PuppetDB 7.12.1 answers 500 there; later versions do this) and
// /environments/<name>/events and /reports. The parent, named by the path
// value p.param, must exist (404 otherwise); the listing is entity e restricted
// to field = that name, with the usual query and paging parameters.
func (s *Server) scopedHandler(p parent, e *query.Entity, kind Kind, field string) http.HandlerFunc {
	return s.listHandler(p, e, kind, pathFilter{field, p.param})
}

// pathFilter restricts a listing: field equals the path value param.
type pathFilter struct{ field, param string }

// listHandler serves a listing of entity e restricted by path values, with
// the usual query and paging parameters of kind. A parent with a param
// must exist first (404).
func (s *Server) listHandler(p parent, e *query.Entity, kind Kind, filters ...pathFilter) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodPost {
			s.writeError(w, r, errMethod)
			return
		}
		// before the parameters are read, as PuppetDB checks the parent
		// outside its query handling: the client's timeout is not known yet
		if p.param != "" && !s.requireParent(w, r, p, r.PathValue(p.param), 0) {
			return
		}
		params, err := s.readParams(r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		opts, err := parseOptions(kind, params)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		var extra query.Expr
		for _, f := range filters {
			extra = query.AndExpr(extra, query.Cmp{Op: "=", Field: e.Field(f.field), Value: r.PathValue(f.param)})
		}
		s.serveEntity(w, r, e, opts, extra)
	}
}
