package httpapi

import (
	"net/http"

	"reportdb"
	"reportdb/query"
)

// exists runs a one-row existence check.
func (s *Server) exists(r *http.Request, sql string, args ...any) (bool, error) {
	ctx, cancel := s.queryContext(r)
	defer cancel()
	rows, err := s.backend.Query(ctx, sql, args)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	found := rows.Next()
	return found, rows.Err()
}

// parent is what a scoped listing hangs from: the path value naming it, the
// word its 404 uses, and the existence check (completed by a placeholder).
type parent struct {
	param, kind, existsSQL string
}

var (
	reportParent      = parent{"hash", "report", "SELECT 1 FROM reports WHERE hash = "}
	environmentParent = parent{"name", "environment", "SELECT 1 FROM environments WHERE name = "}
)

func (s *Server) parentExists(r *http.Request, p parent, name string) (bool, error) {
	return s.exists(r, p.existsSQL+s.backend.Dialect().Placeholder(1), name)
}

// checkSingleParams validates the query string of an endpoint that answers
// one object (/nodes/<certname>, /environments/<name>, /reports/<hash>/logs
// and /metrics): only pretty is accepted, as PuppetDB does.
func checkSingleParams(r *http.Request) error {
	params, err := query.ParseQueryString(r.URL.RawQuery)
	if err != nil {
		return err
	}
	_, err = query.ParseOptions(query.KindSingle, params)
	return err
}

func notFound(kind, name string) error {
	return reportdb.Errorf(reportdb.ENOTFOUND, "No information is known about %s %s", kind, name)
}

// reportBlobHandler serves /reports/<hash>/metrics and /logs: the stored
// array, exactly as PostgreSQL renders it (pretty is accepted and ignored).
func (s *Server) reportBlobHandler(column string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		hash := r.PathValue("hash")
		if err := checkSingleParams(r); err != nil {
			s.writeError(w, r, err)
			return
		}
		ctx, cancel := s.queryContext(r)
		defer cancel()
		var data any
		found := false
		err := func() error {
			d := s.backend.Dialect()
			expr := query.Reports.Field(column).SQL
			if x, ok := d.FieldSQL(query.Reports.Field(column)); ok {
				expr = x
			}
			rows, err := s.backend.Query(ctx, "SELECT "+expr+" FROM reports r WHERE r.hash = "+d.Placeholder(1), []any{hash})
			if err != nil {
				return err
			}
			defer rows.Close()
			if rows.Next() {
				found = true
				if err := rows.Scan(&data); err != nil {
					return err
				}
			}
			return rows.Err()
		}()
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if !found {
			s.writeError(w, r, notFound("report", hash))
			return
		}
		w.Header().Set("Content-Type", ctJSON)
		out := newBody(w, r)
		w.WriteHeader(http.StatusOK)
		switch d := data.(type) {
		case string:
			out.WriteString(d)
		case []byte:
			out.Write(d)
		default:
			out.WriteString("null")
		}
		out.Close()
	}
}

// handleEnvironment serves /environments/<name> (any method).
func (s *Server) handleEnvironment(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if err := checkSingleParams(r); err != nil {
		s.writeError(w, r, err)
		return
	}
	ok, err := s.parentExists(r, environmentParent, name)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if !ok {
		s.writeError(w, r, notFound("environment", name))
		return
	}
	writeJSONObject(w, http.StatusOK, "name", name)
}

// scopedHandler serves a child listing of one parent: /reports/<hash>/events
// (PuppetDB 7.12.1 answers 500 there; later versions do this) and
// /environments/<name>/events and /reports. The parent, named by the path
// value p.param, must exist (404 otherwise); the listing is entity e restricted
// to field = that name, with the usual query and paging parameters.
func (s *Server) scopedHandler(p parent, e *query.Entity, kind query.Kind, field string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue(p.param)
		if r.Method != http.MethodGet && r.Method != http.MethodPost {
			s.writeError(w, r, errMethod)
			return
		}
		ok, err := s.parentExists(r, p, name)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if !ok {
			s.writeError(w, r, notFound(p.kind, name))
			return
		}
		params, err := s.readParams(r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		opts, err := query.ParseOptions(kind, params)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.serveEntity(w, r, e, opts, query.Cmp{Op: "=", Field: e.Field(field), Value: name})
	}
}
