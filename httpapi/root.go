package httpapi

import (
	"errors"
	"net/http"

	"reportdb"
	"reportdb/query"
	"reportdb/query/pql"
)

// handleRoot serves /pdb/query/v4: ["from", entity, query?, paging...] as
// the JSON AST or a PQL string.
func (s *Server) handleRoot(w http.ResponseWriter, r *http.Request) {
	opts, ok := s.queryOptions(w, r, KindRoot)
	if !ok {
		return
	}
	ast := opts.Query
	if opts.QuerySet && opts.Query == nil && query.RootQueryIsPQL(opts.QueryText) {
		var err error
		if ast, err = pql.Parse(opts.QueryText); err != nil {
			s.writeError(w, r, pqlError(err))
			return
		}
	}
	plan, err := query.CompileRoot(ast, opts)
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

func pqlError(err error) error {
	var pe *pql.ParseError
	if errors.As(err, &pe) {
		return reportdb.Invalid(pe.Message())
	}
	return reportdb.Invalid(err.Error())
}
