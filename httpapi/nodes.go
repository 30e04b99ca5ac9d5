package httpapi

import (
	"net/http"

	"reportdb/engine"
	"reportdb/query"
)

// handleNode serves /pdb/query/v4/nodes/<certname>: one pretty object or 404.
func (s *Server) handleNode(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("certname")
	opts, err := singleParams(r, KindNode)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	plan, err := query.Compile(query.Nodes, []any{"=", "certname", name}, &query.Options{})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var row []byte
	err = s.svc.Execute(r.Context(), plan, opts, func(rows *engine.Rows, _ int64) error {
		if rows.Next() {
			var err error
			if row, err = rows.AppendJSON(nil); err != nil {
				return err
			}
		}
		return rows.Err()
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if row == nil {
		s.writeError(w, r, notFound("node", name))
		return
	}
	v, err := parseJSON(row)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writePretty(w, http.StatusOK, v)
}
