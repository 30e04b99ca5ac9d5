package httpapi

import (
	"net/http"

	"reportdb/query"
	"reportdb/query/sqlgen"
	"reportdb/store"
)

// handleNode serves /pdb/query/v4/nodes/<certname>: one pretty object or 404.
func (s *Server) handleNode(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("certname")
	if err := checkSingleParams(r); err != nil {
		s.writeError(w, r, err)
		return
	}
	opts := &query.Options{}
	plan, err := query.Compile(query.Nodes, []any{"=", "certname", name}, opts, query.Context{})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	built, err := sqlgen.Select(s.backend.Dialect(), plan)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	ctx, cancel := s.queryContext(r)
	defer cancel()
	var row []byte
	err = s.backend.Snapshot(ctx, func(q store.Querier) error {
		rows, err := q.Query(ctx, built.SQL, built.Args)
		if err != nil {
			return err
		}
		defer rows.Close()
		enc := newRowEncoder(built.Columns)
		if rows.Next() {
			if err := rows.Scan(enc.dest...); err != nil {
				return err
			}
			if row, err = enc.appendRow(nil); err != nil {
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
