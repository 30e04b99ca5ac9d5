package httpapi

import (
	"net/http"

	"reportdb/service"
)

// handleRoot serves /pdb/query/v4: ["from", entity, query?, paging...] as
// the JSON AST or a PQL string, compiled and run by the query service.
func (s *Server) handleRoot(w http.ResponseWriter, r *http.Request) {
	opts, ok := s.queryOptions(w, r, KindRoot)
	if !ok {
		return
	}
	plan, ast, err := service.CompileRoot(opts)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if opts.ASTOnly {
		writePretty(w, http.StatusOK, ast)
		return
	}
	s.execute(w, r, plan, opts)
}
