package query

import (
	"sort"
	"strconv"

	"reportdb/query/ast"
)

// compileExtract compiles a top-level ["extract", COLS, Q?, ["group_by", ...]?]
// and returns the projection, the grouping and the filter.
func compileExtract(e *Entity, x ast.Extract) ([]Column, []Column, ast.Node, error) {
	args := x.Args
	if len(args) < 1 || len(args) > 3 {
		return nil, nil, nil, invalidf("extract takes a column list, an optional query and an optional group_by clause: %s", clj(x.Raw()))
	}
	cols, err := extractColumns(e, args[0])
	if err != nil {
		return nil, nil, nil, err
	}
	var filter ast.Node
	var groups []Column
	for i, a := range args[1:] {
		g, ok := a.([]any)
		if ok && len(g) > 0 && g[0] == "group_by" {
			if i != len(args)-2 {
				return nil, nil, nil, invalidf("group_by must be the last clause of extract")
			}
			if groups, err = groupColumns(e, g[1:]); err != nil {
				return nil, nil, nil, err
			}
			continue
		}
		if i > 0 {
			return nil, nil, nil, invalidf("%s is not a valid expression for \"extract\"", clj(a))
		}
		if a == nil {
			return nil, nil, nil, invalidf("%s is not a valid expression for \"extract\"", clj(a))
		}
		filter = ast.Decode(a)
		if err := checkExtractFilter(filter); err != nil {
			return nil, nil, nil, err
		}
	}
	return cols, groups, filter, nil
}

// checkExtractFilter reproduces PuppetDB's messages for a filter position
// holding something that is not a query.
func checkExtractFilter(n ast.Node) error {
	switch x := n.(type) {
	case ast.Compare, ast.Logical, ast.In, ast.Implicit:
		return nil
	case ast.NotQuery:
		if !x.OpNotString {
			if ast.Empty(x) {
				return nil
			}
			return invalidf("%s is not a valid expression for \"extract\"", clj(n.Raw()))
		}
	}
	if a := n.Raw().([]any); len(a) >= 2 {
		return invalidf("Unsupported subquery `%s`", fieldText(a[0]))
	}
	return invalidf("%s is not a valid expression for \"extract\"", clj(n.Raw()))
}

var functions = map[string]bool{"count": true, "sum": true, "avg": true, "min": true, "max": true, "to_string": true}

// extractColumns resolves a top-level extract list: field names and
// ["function", name, args...]. With at most 8 columns PuppetDB emits the
// function results first, then the fields in the order requested; with
// more, hash-map order.
func extractColumns(e *Entity, v any) ([]Column, error) {
	var items []any
	switch x := v.(type) {
	case string:
		items = []any{x}
	case []any:
		items = x
	default:
		return nil, invalidf("extract takes a field name or an array of fields and functions, got %s", clj(v))
	}
	var fields, funcs []Column
	var unknown []string
	seen := map[string]bool{}
	used := map[string]int{}
	for _, it := range items {
		switch x := it.(type) {
		case string:
			fld := e.anyField(x)
			if fld == nil || !fld.Extract {
				unknown = append(unknown, x)
				continue
			}
			if !seen[x] {
				seen[x] = true
				fields = append(fields, Column{Name: x, Field: fld})
			}
		case []any:
			c, err := functionColumn(e, x)
			if err != nil {
				return nil, err
			}
			used[c.Func]++
			if n := used[c.Func]; n > 1 {
				c.Name = c.Func + "_" + strconv.Itoa(n)
			}
			funcs = append(funcs, c)
		default:
			return nil, invalidf("extract columns are field names or [\"function\", ...], got %s", clj(it))
		}
	}
	if len(unknown) > 0 {
		return nil, unknownExtract(e, unknown)
	}
	if len(fields)+len(funcs) == 0 {
		return nil, nil
	}
	if len(fields)+len(funcs) > 8 {
		sort.SliceStable(fields, func(i, j int) bool {
			return e.hashPos[fields[i].Name] < e.hashPos[fields[j].Name]
		})
	}
	return append(funcs, fields...), nil
}

func functionColumn(e *Entity, x []any) (Column, error) {
	if len(x) < 2 || x[0] != "function" {
		return Column{}, invalidf("%s is not a valid extract column: expected a field name or [\"function\", name, args...]", clj(x))
	}
	name, _ := x[1].(string)
	if !functions[name] {
		return Column{}, invalidf("Unknown function %s in extract; supported functions are count, avg, sum, min, max and to_string", clj(x[1]))
	}
	args := x[2:]
	c := Column{Name: name, Func: name}
	argField := func(a any) (*Field, error) {
		s, ok := a.(string)
		if !ok {
			return nil, invalidf("The argument of function %s must be a field name, got %s", name, clj(a))
		}
		fld := e.Field(s)
		if fld == nil || !fld.Queryable || fld.Type == Latest {
			return nil, unknownExtract(e, []string{s})
		}
		return fld, nil
	}
	switch name {
	case "count":
		if len(args) > 1 {
			return Column{}, invalidf("Function count takes no argument or one field, got %d arguments", len(args))
		}
		if len(args) == 1 {
			fld, err := argField(args[0])
			if err != nil {
				return Column{}, err
			}
			c.Field = fld
		}
	case "sum", "avg", "min", "max":
		if len(args) != 1 {
			return Column{}, invalidf("Function %s takes exactly one field, got %d arguments", name, len(args))
		}
		fld, err := argField(args[0])
		if err != nil {
			return Column{}, err
		}
		ok := fld.Type == Number || ((name == "min" || name == "max") && (fld.Type == Timestamp || fld.Type == String))
		if !ok {
			return Column{}, invalidf("Function %s is not supported on %s field '%s'", name, typeName(fld.Type), fld.Name)
		}
		c.Field = fld
	case "to_string":
		if len(args) != 2 {
			return Column{}, invalidf("Function to_string takes a field and a format string, got %d arguments", len(args))
		}
		fld, err := argField(args[0])
		if err != nil {
			return Column{}, err
		}
		if fld.Type != Timestamp && fld.Type != Number {
			return Column{}, invalidf("Function to_string is not supported on %s field '%s' (timestamps and numbers only)", typeName(fld.Type), fld.Name)
		}
		format, ok := args[1].(string)
		if !ok {
			return Column{}, invalidf("The format of to_string must be a string, got %s", clj(args[1]))
		}
		c.Field, c.Format = fld, format
	}
	return c, nil
}

func typeName(t Type) string {
	switch t {
	case Number:
		return "numeric"
	case Timestamp:
		return "timestamp"
	case Boolean, NullBoolean:
		return "boolean"
	case Path:
		return "array"
	case JSONValue:
		return "JSON"
	case Blob:
		return "JSON document"
	}
	return "string"
}

func groupColumns(e *Entity, items []any) ([]Column, error) {
	var out []Column
	for _, it := range items {
		switch x := it.(type) {
		case string:
			fld := e.anyField(x)
			if fld == nil || !fld.Extract {
				return nil, invalidf("%s is niether a valid column name nor function name", clj(x))
			}
			out = append(out, Column{Name: x, Field: fld})
		case []any:
			c, err := functionColumn(e, x)
			if err != nil {
				return nil, err
			}
			if c.Func != "to_string" {
				return nil, invalidf("Only to_string may be used in group_by, got %s", clj(x))
			}
			out = append(out, c)
		default:
			return nil, invalidf("%s is niether a valid column name nor function name", clj(it))
		}
	}
	if len(out) == 0 {
		return nil, invalidf("group_by needs at least one column")
	}
	return out, nil
}

// checkGrouping rejects plain columns that are neither grouped nor
// aggregated when the query aggregates (PostgreSQL's GROUP BY rule, which
// PuppetDB surfaces as a 500).
func checkGrouping(p *Plan) error {
	agg := false
	for _, c := range p.Columns {
		if c.Aggregate() {
			agg = true
		}
	}
	if !agg && len(p.GroupBy) == 0 {
		return nil
	}
	grouped := func(c Column) bool {
		for _, g := range p.GroupBy {
			if g.Field == c.Field && g.Func == c.Func && g.Format == c.Format {
				return true
			}
		}
		return false
	}
	for _, c := range p.Columns {
		if !c.Aggregate() && !grouped(c) {
			return invalidf("column \"%s\" must appear in the GROUP BY clause or be used in an aggregate function", c.Name)
		}
	}
	for _, o := range p.OrderBy {
		if o.Field != nil && !grouped(Column{Field: o.Field}) {
			return invalidf("column \"%s\" must appear in the GROUP BY clause to be used in order_by of an aggregating query", o.Field.Name)
		}
	}
	return nil
}
