package pql

import "strings"

// Parse translates a PQL query into the AST PuppetDB builds, e.g.
//
//	events[certname]{ certname = "x" limit 1 }
//
// becomes
//
//	["from","events",["extract",["certname"],["=","certname","x"]],["limit",1]]
//
// as []any{"from", "events", []any{"extract", ...}, []any{"limit", jsonv.Number("1")}}.
//
// Errors, in the order PuppetDB detects them:
//   - *ParseError: the query does not match the grammar;
//   - *StringEscapeError: a double-quoted string is not a valid JSON string
//     body (e.g. `"it\x27s"`);
//   - *TransformError: an implicit subquery with more than one clause;
//   - *ClauseError: limit, offset or order by given twice in one block.
func Parse(q string) (any, error) {
	q = sanitize(q)
	if strings.Trim(q, " \t\n\v\f\r") == "" { // PQL's white space, Java's \s
		return nil, &ParseError{Line: 1, Column: 1, Empty: true}
	}
	p := newParser(q)
	tree, ok := p.top()
	if !ok {
		if p.tooDeep {
			return nil, &DepthError{}
		}
		return nil, newParseError(q, p.fail)
	}
	var r resolver
	ast, err := r.resolve(tree)
	if err != nil {
		return nil, err
	}
	if err := r.checkClauses(); err != nil {
		return nil, err
	}
	return ast, nil
}
