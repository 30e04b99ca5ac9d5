package httpapi

import (
	"context"
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

func (s *Server) reportExists(r *http.Request, hash string) (bool, error) {
	return s.exists(r, "SELECT 1 FROM reports WHERE hash = "+s.backend.Dialect().Placeholder(1), hash)
}

func (s *Server) environmentExists(r *http.Request, name string) (bool, error) {
	return s.exists(r, "SELECT 1 FROM environments WHERE name = "+s.backend.Dialect().Placeholder(1), name)
}

func notFound(kind, name string) error {
	return reportdb.Errorf(reportdb.ENOTFOUND, "No information is known about %s %s", kind, name)
}

// handleReportEvents serves /reports/<hash>/events as the events endpoint
// restricted to that report (PuppetDB 7.12.1 answers 500 there; later
// versions do this).
func (s *Server) handleReportEvents(w http.ResponseWriter, r *http.Request) {
	hash := r.PathValue("hash")
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		s.writeError(w, r, errMethod)
		return
	}
	ok, err := s.reportExists(r, hash)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if !ok {
		s.writeError(w, r, notFound("report", hash))
		return
	}
	params, err := s.readParams(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	opts, err := query.ParseOptions(query.KindEvents, params)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.serveEntity(w, r, query.Events, opts, query.Cmp{Op: "=", Field: query.Events.Field("report"), Value: hash})
}

// reportBlobHandler serves /reports/<hash>/metrics and /logs: the stored
// array, exactly as PostgreSQL renders it (pretty is accepted and ignored).
func (s *Server) reportBlobHandler(column string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		hash := r.PathValue("hash")
		params, err := query.ParseQueryString(r.URL.RawQuery)
		if err == nil {
			_, err = query.ParseOptions(query.KindSingle, params)
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		ctx, cancel := s.queryContext(r)
		defer cancel()
		var data any
		found := false
		err = func() error {
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
	params, err := query.ParseQueryString(r.URL.RawQuery)
	if err == nil {
		_, err = query.ParseOptions(query.KindSingle, params)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	ok, err := s.environmentExists(r, name)
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

// environmentSubHandler serves /environments/<name>/events and /reports.
func (s *Server) environmentSubHandler(e *query.Entity, kind query.Kind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		if r.Method != http.MethodGet && r.Method != http.MethodPost {
			s.writeError(w, r, errMethod)
			return
		}
		ok, err := s.environmentExists(r, name)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if !ok {
			s.writeError(w, r, notFound("environment", name))
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
		s.serveEntity(w, r, e, opts, query.Cmp{Op: "=", Field: e.Field("environment"), Value: name})
	}
}

var _ = context.Background
