package query

import "reportdb/query/ast"

// CompileRoot compiles a root-endpoint query, ["from", entity, query?,
// paging...], applying the URL/body paging parameters over the in-query
// clauses key by key, as PuppetDB does.
func CompileRoot(q any, o *Options) (*Plan, error) {
	if err := checkSize(o, q); err != nil {
		return nil, err
	}
	arr, ok := q.([]any)
	if !ok || len(arr) < 2 || arr[0] != "from" {
		return nil, invalidf("Your initial query must be of the form: [\"from\",<entity>,(<optional-query>)]. Check your query and try again.")
	}
	p, err := compileFrom(ast.DecodeFrom(arr), true)
	if err != nil {
		return nil, err
	}
	var orders []Order
	if o.OrderBySet {
		if orders, err = resolveOrder(p.Entity, o.OrderBy); err != nil {
			return nil, err
		}
	}
	if err := applyPaging(p, o, orders); err != nil {
		return nil, err
	}
	return p, nil
}
