package query

import (
	"math"
	"strings"

	"reportdb/internal/pgcompat"
	"reportdb/jsonv"
	"reportdb/query/ast"
	"reportdb/wire"
)

// Compile validates q (the parsed "query" parameter, the JSON AST; nil for
// none) against entity e together with the paging options, and returns the
// plan. It checks order_by columns first, then the query, as PuppetDB does.
func Compile(e *Entity, q any, o *Options) (*Plan, error) {
	if err := checkSize(o, q); err != nil {
		return nil, err
	}
	orders, err := resolveOrder(e, o.OrderBy)
	if err != nil {
		return nil, err
	}
	p, err := compileTop(e, ast.Decode(q))
	if err != nil {
		return nil, err
	}
	if err := applyPaging(p, o, orders); err != nil {
		return nil, err
	}
	return p, nil
}

// CompileEntity compiles a query on an entity endpoint (/events, /reports,
// ...), whose options may ask for distinct_resources (events only).
func CompileEntity(e *Entity, o *Options) (*Plan, error) {
	if err := checkSize(o, o.Query); err != nil {
		return nil, err
	}
	q, err := distinctQuery(o)
	if err != nil {
		return nil, err
	}
	orders, err := resolveOrder(e, o.OrderBy)
	if err != nil {
		return nil, err
	}
	p, err := compileTop(e, q)
	if err != nil {
		return nil, err
	}
	activeOnly(p, q, false)
	if err := applyPaging(p, o, orders); err != nil {
		return nil, err
	}
	if e == Events {
		setDistinct(p, o)
	}
	return p, nil
}

// distinctQuery returns the query of o decoded as it is compiled: with
// distinct_resources, PuppetDB 7.12.1 uses its legacy events engine,
// whose subset of the language is checked and whose hyphenated field
// names are normalised here.
func distinctQuery(o *Options) (ast.Node, error) {
	q := ast.Decode(o.Query)
	if o.Distinct == nil {
		return q, nil
	}
	return legacy(q)
}

// setDistinct applies the distinct_resources window of o to an events
// plan.
func setDistinct(p *Plan, o *Options) {
	if o.Distinct != nil {
		p.Distinct = o.Distinct
		p.DistinctLatest = onlyLatest(ast.Decode(o.Query))
	}
}

// applyPaging sets the paging parameters that were given (orders resolved
// from o.OrderBy) over the plan's own, then checks the plan's grouping.
func applyPaging(p *Plan, o *Options, orders []Order) error {
	if o.OrderBySet {
		p.OrderBy = orders
	}
	if o.LimitSet {
		p.Limit = o.Limit
	}
	if o.OffsetSet {
		p.Offset = o.Offset
	}
	return checkGrouping(p)
}

func resolveOrder(e *Entity, specs []OrderSpec) ([]Order, error) {
	var out []Order
	for _, s := range specs {
		fld := e.Field(s.Field)
		if fld == nil || !fld.Sortable {
			return nil, invalidf("Unrecognized column '%s' specified in :order_by; Supported columns are %s", s.Field, e.sortList())
		}
		if fld.Type == Latest {
			return nil, invalidf("Ordering by 'latest_report?' is not supported: it is a query condition, not a column")
		}
		out = append(out, Order{Field: fld, Desc: s.Desc})
	}
	return out, nil
}

// compileTop compiles a top-level query: a filter or an extract.
func compileTop(e *Entity, n ast.Node) (*Plan, error) {
	p := &Plan{Entity: e}
	filter := n
	if x, ok := n.(ast.Extract); ok {
		cols, groups, f, err := compileExtract(e, x)
		if err != nil {
			return nil, err
		}
		p.Columns, p.GroupBy, filter = cols, groups, f
	}
	f, err := compileFilter(e, filter, true)
	if err != nil {
		return nil, err
	}
	p.Filter = AndExpr(f) // a filter that is always true is none
	return p, nil
}

// activeOnly adds PuppetDB's implicit "active nodes only" condition to a
// query that does not mention node_state: on the root endpoint to every
// entity with nodes (root), on the entity endpoints to nodes only (SPEC
// §12.9: /events and /reports answer for every node).
func activeOnly(p *Plan, q ast.Node, root bool) {
	if (p.Entity == Nodes || root) && hasNodes(p.Entity) && !mentionsNodeState(q) {
		p.Filter = AndExpr(p.Filter, nodeStateExpr(p.Entity, true))
	}
}

// hasNodes reports whether e's rows belong to nodes whose activity is
// known (nodes, reports, events; not environments or the always-empty
// entities).
func hasNodes(e *Entity) bool {
	f := e.Field("certname")
	return f != nil && f.Table != EmptyTable && f.Table != NoTable
}

// mentionsNodeState reports whether a query tests node_state (or
// ["node", "active"]) at its own level.
func mentionsNodeState(n ast.Node) bool {
	if x, ok := n.(ast.Extract); ok && len(x.Args) > 1 {
		n = ast.Decode(x.Args[1])
	}
	found := false
	ast.Walk(n, func(n ast.Node) bool {
		if c, ok := n.(ast.Compare); ok && c.Op == "=" {
			switch f := c.Field().(type) {
			case string:
				found = f == "node_state"
			case []any:
				found = len(f) == 2 && f[0] == "node" && f[1] == "active"
			}
		}
		return !found
	})
	return found
}

// compileFilter compiles a filter (nil, or [] at the top, means none) and
// adds the implicit agent-report filter for the reports entity.
func compileFilter(e *Entity, n ast.Node, top bool) (Expr, error) {
	var x Expr
	if n != nil && !(top && ast.Empty(n)) {
		var err error
		if x, err = compileExpr(e, n); err != nil {
			return nil, err
		}
	}
	if e == Reports && !mentionsField(n, "type") {
		x = AndExpr(x, Cmp{Op: "=", Field: Reports.Field("type"), Value: "agent", Literal: true})
	}
	return x, nil
}

// mentionsField reports whether a filter compares, null-tests or
// in-array-tests field at its own level (not inside subqueries).
func mentionsField(n ast.Node, field string) bool {
	found := false
	ast.Walk(n, func(n ast.Node) bool {
		switch x := n.(type) {
		case ast.Compare:
			if x.Op != "~>" && x.Field() == field {
				found = true
			}
		case ast.In:
			if _, isArray := x.Target.(ast.Array); isArray && x.Arity == 2 && x.Fields == field {
				found = true
			}
		}
		return !found
	})
	return found
}

var knownOps = "=, <, <=, >, >=, ~, null?, and, or, not, in, extract, subquery"

func compileExpr(e *Entity, n ast.Node) (Expr, error) {
	switch x := n.(type) {
	case ast.NotQuery:
		if x.OpNotString {
			return nil, invalidf("%s is not a valid query: the operator must be a string (one of %s)", clj(x.Raw()), knownOps)
		}
		return nil, invalidf("%s is not a valid query: a query is a JSON array whose first element is an operator (one of %s)", clj(x.Raw()), knownOps)
	case ast.Compare:
		return compileComparison(e, x)
	case ast.Logical:
		args := x.Args
		switch x.Op {
		case "and", "or":
			if len(args) == 0 {
				return nil, invalidf("'%s' takes at least one argument, but none were supplied", x.Op)
			}
			xs := make([]Expr, len(args))
			for i, a := range args {
				y, err := compileExpr(e, a)
				if err != nil {
					return nil, err
				}
				xs[i] = y
			}
			if x.Op == "and" {
				return And{Args: xs}, nil
			}
			return Or{Args: xs}, nil
		}
		if len(args) != 1 {
			return nil, invalidf("'not' takes exactly one argument, but %d were supplied", len(args))
		}
		y, err := compileExpr(e, args[0])
		if err != nil {
			return nil, err
		}
		return Not{X: y}, nil
	case ast.In:
		if x.Arity != 2 {
			return nil, invalidf("'in' requires exactly two arguments, but %d were supplied", x.Arity)
		}
		return compileIn(e, x)
	case ast.Implicit:
		return compileImplicit(e, x)
	case ast.Extract:
		return nil, invalidf("Unsupported subquery `extract`")
	case ast.Other:
		op := x.Op
		switch op {
		case "from", "group_by", "limit", "offset", "order_by":
			return nil, invalidf("Unsupported subquery `%s`", op)
		}
		if strings.HasPrefix(op, "select_") || strings.HasPrefix(op, "select-") {
			return nil, invalidf("Unsupported subquery `%s`: select_<entity> may only appear inside [\"in\", field, [\"extract\", fields, [\"%s\", query]]]", op, op)
		}
		return nil, invalidf("'%s' is not a valid query operator in %s (valid operators: %s)", op, clj(x.Raw()), knownOps)
	}
	return nil, invalidf("%s is not a valid query", clj(n.Raw()))
}

// compileComparison compiles =, <, <=, >, >=, ~, ~> and null?.
func compileComparison(e *Entity, x ast.Compare) (Expr, error) {
	op, args := x.Op, x.Args
	switch op {
	case "=", "<", "<=", ">", ">=":
		if len(args) != 2 {
			return nil, invalidf("%s requires exactly two arguments", op)
		}
		return compileCompare(e, op, args[0], args[1])
	case "~":
		if len(args) != 2 {
			return nil, invalidf("~ requires exactly two arguments")
		}
		return compileMatch(e, args[0], args[1])
	case "~>":
		if len(args) != 2 {
			return nil, invalidf("~> requires exactly two arguments")
		}
		return nil, invalidf("Query operator ~> is not allowed on field %s", fieldText(args[0]))
	}
	// null?
	if len(args) != 2 {
		return nil, invalidf("null? requires exactly two arguments, but %d were supplied", len(args))
	}
	fld, err := queryField(e, args[0])
	if err != nil {
		return nil, err
	}
	if fld.Type == Latest {
		return nil, invalidf("Operator null? is not supported on field latest_report?")
	}
	if fld.Type == JSONValue {
		// PuppetDB JSON-encodes the flag, which is then always truthy:
		// both forms mean IS NULL, and the column is never NULL.
		return IsNull{Field: fld, Null: true}, nil
	}
	return IsNull{Field: fld, Null: truthy(args[1])}, nil
}

func fieldText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return clj(v)
}

// queryField resolves a field name used in a filter.
func queryField(e *Entity, v any) (*Field, error) {
	name, ok := v.(string)
	if !ok {
		return nil, invalidf("%s is not a queryable object for %s: a field name must be a string", clj(v), e.label())
	}
	fld := e.Field(name)
	if fld == nil {
		fld = e.dottedField(name)
	}
	if fld == nil || !fld.Queryable {
		if len(e.Fields) == 0 {
			return nil, invalidf("'%s' is not a queryable object for %s. Entity %s has no queryable objects", name, e.label(), e.label())
		}
		return nil, invalidf("'%s' is not a queryable object for %s. Known queryable objects are %s", name, e.label(), e.queryableList())
	}
	return fld, nil
}

func compileCompare(e *Entity, op string, fv, v any) (Expr, error) {
	if fv == "node_state" && op == "=" {
		return nodeState(e, v)
	}
	if f, ok := fv.([]any); ok && len(f) == 2 && f[0] == "node" && f[1] == "active" && op == "=" {
		b, ok := v.(bool)
		if !ok {
			return nil, invalidf("[\"node\", \"active\"] must be compared with true or false, got %s", clj(v))
		}
		return nodeStateExpr(e, b), nil
	}
	fld, err := queryField(e, fv)
	if err != nil {
		return nil, err
	}
	if e == Reports && fld.Name == "type" && op == "=" && v == "any" {
		return Const{Value: true}, nil
	}
	if op == "=" {
		return compileEquals(fld, v)
	}
	switch fld.Type {
	case Number:
		n, ok := v.(jsonv.Number)
		if !ok {
			return nil, invalidf("Argument \"%s\" and operator \"%s\" have incompatible types.", plainText(v), op)
		}
		return numberCmp(fld, op, n), nil
	case Timestamp:
		ms, err := timestampArg(v)
		if err != nil {
			return nil, err
		}
		return Cmp{Op: op, Field: fld, Value: ms}, nil
	}
	return nil, invalidf("Query operators >,>=,<,<= are not allowed on field %s", fld.Name)
}

func compileEquals(fld *Field, v any) (Expr, error) {
	if v == nil && fld.Type != JSONValue && fld.Type != Latest {
		return IsNull{Field: fld, Null: true}, nil
	}
	switch fld.Type {
	case String, NullString:
		s, ok := v.(string)
		if !ok {
			if fld.Type == NullString {
				return Cmp{Op: "=", Field: fld, Value: jsonv.Compact(v)}, nil
			}
			return nil, invalidf("Argument %s is incompatible with string field \"%s\".", jsonv.Compact(v), fld.Name)
		}
		if err := checkText(s); err != nil {
			return nil, err
		}
		return Cmp{Op: "=", Field: fld, Value: s}, nil
	case Number:
		n, ok := v.(jsonv.Number)
		if !ok {
			return nil, invalidf("Argument \"%s\" is incompatible with numeric field \"%s\".", plainText(v), fld.Name)
		}
		return numberCmp(fld, "=", n), nil
	case Timestamp:
		ms, err := timestampArg(v)
		if err != nil {
			return nil, err
		}
		return Cmp{Op: "=", Field: fld, Value: ms}, nil
	case Boolean, NullBoolean:
		b, ok := v.(bool)
		if !ok {
			return nil, invalidf("Argument %s is incompatible with boolean field \"%s\": use true or false.", jsonv.Compact(v), fld.Name)
		}
		return Cmp{Op: "=", Field: fld, Value: b}, nil
	case Path:
		s, ok := v.(string)
		if !ok {
			return nil, invalidf("Argument %s is incompatible with array field \"%s\": compare it with one string element.", jsonv.Compact(v), fld.Name)
		}
		if err := checkText(s); err != nil {
			return nil, err
		}
		return Cmp{Op: "=", Field: fld, Value: s}, nil
	case JSONValue:
		return Cmp{Op: "=", Field: fld, Value: wire.ValueText(v)}, nil
	case Latest:
		return LatestReport{Field: fld, Latest: truthy(v)}, nil
	}
	return nil, invalidf("'%s' is not a queryable object", fld.Name)
}

// plainText renders a value as PuppetDB's "Argument \"x\"" messages do.
func plainText(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return x
	case jsonv.Number:
		return string(x)
	case bool:
		if x {
			return "true"
		}
		return "false"
	}
	return jsonv.Compact(v)
}

func timestampArg(v any) (int64, error) {
	switch x := v.(type) {
	case string:
		if ms, ok := ParseTimestampValue(x); ok {
			return ms, nil
		}
	case jsonv.Number:
		if ms, ok := NumberMillis(x); ok {
			return ms, nil
		}
	}
	return 0, invalidf("'%s' is not a valid timestamp value", plainText(v))
}

func compileMatch(e *Entity, fv, pv any) (Expr, error) {
	fld, err := queryField(e, fv)
	if err != nil {
		return nil, err
	}
	switch fld.Type {
	case String, Path, NullString:
		p, ok := pv.(string)
		if !ok {
			return nil, invalidf("The regular expression for ~ on field %s must be a string, got %s", fld.Name, jsonv.Compact(pv))
		}
		if err := checkRegex(fld, p); err != nil {
			return nil, err
		}
		if _, err := pgcompat.CompileRegex(p); err != nil {
			return nil, invalidf("ERROR: %s", err.Error())
		}
		return Match{Field: fld, Pattern: p}, nil
	case JSONValue:
		p := wire.ValueText(pv)
		if err := checkRegex(fld, p); err != nil {
			return nil, err
		}
		if _, err := pgcompat.CompileRegex(p); err != nil {
			return nil, invalidf("ERROR: %s", err.Error())
		}
		return Match{Field: fld, Pattern: p}, nil
	case Number:
		return nil, invalidf("Operator ~ is not supported on numeric field %s (regular expressions apply to string fields)", fld.Name)
	case Timestamp:
		return nil, invalidf("Operator ~ is not supported on timestamp field %s (use <, <=, >, >=)", fld.Name)
	case Boolean, NullBoolean:
		return nil, invalidf("Operator ~ is not supported on boolean field %s", fld.Name)
	}
	return nil, invalidf("Operator ~ is not supported on field %s (only = is)", fld.Name)
}

func nodeState(e *Entity, v any) (Expr, error) {
	s, ok := v.(string)
	if !ok {
		return nil, invalidf("No matching clause: %s", plainText(v))
	}
	switch strings.ToLower(s) {
	case "active":
		return nodeStateExpr(e, true), nil
	case "inactive":
		return nodeStateExpr(e, false), nil
	case "any":
		return Const{Value: true}, nil
	}
	return nil, invalidf("No matching clause: %s", s)
}

// nodeStateExpr filters on node activity: a NodeState on entities with
// nodes (the engine turns it into a constant when no node is inactive,
// see ResolveNodeState), a constant on the others, whose rows have no
// node.
func nodeStateExpr(e *Entity, active bool) Expr {
	if hasNodes(e) {
		return NodeState{Field: e.Field("certname"), Active: active}
	}
	return Const{Value: active}
}

func compileIn(e *Entity, x ast.In) (Expr, error) {
	fv := x.Fields
	names, ok := fieldList(fv)
	if !ok {
		return nil, invalidf("The first argument of 'in' must be a field name or an array of field names, got %s", clj(fv))
	}
	if len(names) == 0 {
		return nil, invalidf("'in' needs at least one field")
	}
	fields := make([]*Field, len(names))
	for i, n := range names {
		fld, err := queryField(e, n)
		if err != nil {
			return nil, err
		}
		if fld.Type == Latest {
			return nil, invalidf("Operator 'in' is not supported on field latest_report?")
		}
		fields[i] = fld
	}
	switch t := x.Target.(type) {
	case ast.Array:
		if len(t.Args) != 1 {
			return nil, invalidf("Operator array requires a vector argument")
		}
		vals, ok := t.Args[0].([]any)
		if !ok {
			return nil, invalidf("Operator array requires a vector argument")
		}
		if len(fields) != 1 {
			return nil, invalidf("Operator in...array requires a single field, got %s", clj(fv))
		}
		return inArray(fields[0], vals)
	case ast.SelectExtract:
		sub, err := compileSubExtract(t)
		if err != nil {
			return nil, err
		}
		return inQuery(fields, sub)
	case ast.From:
		sub, err := compileFrom(t, false)
		if err != nil {
			return nil, err
		}
		return inQuery(fields, sub)
	case ast.Other:
		return nil, invalidf("Unsupported subquery `%s`", fieldText(t.Raw().([]any)[0]))
	}
	return nil, invalidf("The second argument of 'in' must be [\"array\", [...]], [\"extract\", ...] or [\"from\", ...], got %s", clj(x.Target.Raw()))
}

func inArray(fld *Field, vals []any) (Expr, error) {
	out := make([]any, 0, len(vals))
	outside := false // a number no row's column can equal was left out
	for _, v := range vals {
		switch fld.Type {
		case Path:
			return nil, invalidf("Operator in...array is not supported on array types")
		case JSONValue:
			return nil, invalidf("Operator in...array is not supported on field %s (it holds JSON values; use or with =)", fld.Name)
		case String, NullString:
			if _, isArr := v.([]any); isArr || v == nil {
				return nil, invalidf("Operator in...array on field %s takes strings, got %s", fld.Name, jsonv.Compact(v))
			}
			s := plainText(v)
			if err := checkText(s); err != nil {
				return nil, err
			}
			out = append(out, s)
		case Number:
			n, ok := v.(jsonv.Number)
			if !ok {
				return nil, invalidf("Argument \"%s\" is incompatible with numeric field \"%s\".", plainText(v), fld.Name)
			}
			val, _ := numberValue(n)
			if !inRange(fld, val) {
				outside = true
				continue
			}
			out = append(out, val)
		case Timestamp:
			ms, err := timestampArg(v)
			if err != nil {
				return nil, err
			}
			out = append(out, ms)
		case Boolean, NullBoolean:
			b, ok := v.(bool)
			if !ok {
				return nil, invalidf("Argument %s is incompatible with boolean field \"%s\".", jsonv.Compact(v), fld.Name)
			}
			out = append(out, b)
		}
	}
	if len(out) == 0 {
		if outside {
			// false, and unknown where the column is NULL, as the list was
			_, hi := numberRange(fld)
			return Cmp{Op: ">", Field: fld, Value: hi}, nil
		}
		return Const{Value: false}, nil
	}
	return InValues{Field: fld, Values: out}, nil
}

func inQuery(fields []*Field, sub *Plan) (Expr, error) {
	if len(sub.Columns) != len(fields) {
		return nil, invalidf("'in' compares %d field(s) with a subquery extracting %d", len(fields), len(sub.Columns))
	}
	for _, c := range sub.Columns {
		if c.IsFunc() {
			return nil, invalidf("A subquery used with 'in' must extract fields, not functions")
		}
	}
	return InQuery{Fields: fields, Sub: sub}, nil
}

// compileSubExtract compiles the old-style explicit subquery
// ["extract", F | [F...], ["select_<entity>", Q?, paging...]].
func compileSubExtract(t ast.SelectExtract) (*Plan, error) {
	if len(t.Args) != 2 {
		return nil, invalidf("An 'extract' subquery takes a field list and a [\"select_<entity>\", query] clause, got %s", clj(t.Raw()))
	}
	sel := t.Select
	if sel == nil {
		return nil, invalidf("%s is not a valid expression for \"extract\"", clj(t.Args[1]))
	}
	name, _ := sel.Name.(string)
	if strings.HasPrefix(name, "select-") {
		return nil, invalidf("Unsupported subquery `%s` - did you mean `%s`?", name, strings.ReplaceAll(name, "-", "_"))
	}
	if !strings.HasPrefix(name, "select_") {
		return nil, invalidf("Unsupported subquery `%s`", fieldText(sel.Name))
	}
	ent := Lookup(strings.TrimPrefix(name, "select_"))
	if ent == nil {
		return nil, invalidf("Unsupported subquery `%s`", name)
	}
	cols, err := extractFields(ent, t.Args[0])
	if err != nil {
		return nil, err
	}
	p := &Plan{Entity: ent, Columns: cols}
	if p.Filter, err = compileFilter(ent, sel.Query, false); err != nil {
		return nil, err
	}
	if err := applyPagingClauses(p, sel.Paging); err != nil {
		return nil, err
	}
	return p, nil
}

// fieldList reads the field argument of 'in' and 'extract': one name or an
// array of them (the array's elements are checked by the caller).
func fieldList(v any) ([]any, bool) {
	switch x := v.(type) {
	case string:
		return []any{x}, true
	case []any:
		return x, true
	}
	return nil, false
}

// extractFields resolves an extract list of plain fields (a subquery's).
func extractFields(e *Entity, v any) ([]Column, error) {
	names, ok := fieldList(v)
	if !ok {
		return nil, invalidf("extract takes a field name or an array of field names, got %s", clj(v))
	}
	var cols []Column
	var unknown []string
	for _, n := range names {
		s, ok := n.(string)
		if !ok {
			return nil, invalidf("A subquery extract list holds field names, got %s", clj(n))
		}
		fld := e.Field(s)
		if fld == nil || !fld.Extract {
			unknown = append(unknown, s)
			continue
		}
		cols = append(cols, Column{Name: s, Field: fld})
	}
	if len(unknown) > 0 {
		return nil, unknownExtract(e, unknown)
	}
	return cols, nil
}

func unknownExtract(e *Entity, unknown []string) error {
	if len(unknown) == 1 {
		return invalidf("Can't extract unknown '%s' field '%s'. Acceptable fields are %s", e.label(), unknown[0], e.extractList())
	}
	return invalidf("Can't extract unknown '%s' fields %s. Acceptable fields are %s", e.label(), andList(unknown), e.extractList())
}

// compileImplicit compiles ["subquery", E, Q].
func compileImplicit(e *Entity, x ast.Implicit) (Expr, error) {
	args := x.Args
	if len(args) != 2 {
		return nil, invalidf("'subquery' takes an entity and a query: [\"subquery\", \"reports\", [\"=\", \"status\", \"failed\"]], got %d argument(s)", len(args))
	}
	name, ok := args[0].(string)
	if !ok {
		return nil, invalidf("'subquery' takes an entity name, got %s", clj(args[0]))
	}
	target := Lookup(name)
	if target == nil {
		return nil, invalidf("No implicit relationship for entity '%s': there is no such entity", name)
	}
	rel, ok := e.Relations[name]
	if !ok {
		return nil, invalidf("No implicit relationship for entity '%s'", name)
	}
	local := e.Field(rel.Local)
	foreign := target.Field(rel.Foreign)
	sub := &Plan{Entity: target, Columns: []Column{{Name: foreign.Name, Field: foreign}}}
	var err error
	if sub.Filter, err = compileFilter(target, x.Query, false); err != nil {
		return nil, err
	}
	return InQuery{Fields: []*Field{local}, Sub: sub}, nil
}

// compileFrom compiles ["from", E, Q?, paging...]: the root endpoint's
// query (top true) or an explicit subquery inside 'in'.
func compileFrom(t ast.From, top bool) (*Plan, error) {
	if t.Short {
		return nil, invalidf("Your initial query must be of the form: [\"from\",<entity>,(<optional-query>)]. Check your query and try again.")
	}
	name, ok := t.Entity.(string)
	if !ok {
		return nil, invalidf("Your initial query must be of the form: [\"from\",<entity>,(<optional-query>)]. Check your query and try again.")
	}
	ent := Lookup(strings.ReplaceAll(name, "-", "_"))
	if ent == nil {
		return nil, invalidf("Invalid entity '%s' in query", name)
	}
	q := t.Query
	if t.HasQuery {
		if _, isArr := raw(q).([]any); !isArr {
			return nil, invalidf("%s is not a valid query for entity '%s': expected a filter or an extract", clj(raw(q)), name)
		}
	}
	p, err := compileTop(ent, q)
	if err == nil && top {
		activeOnly(p, q, true)
	}
	if err == nil && !top && p.Columns == nil {
		err = invalidf("A [\"from\", ...] subquery used with 'in' must extract fields: [\"from\", \"%s\", [\"extract\", [fields], query]]", name)
	}
	if err != nil {
		return nil, err
	}
	if err := applyPagingClauses(p, t.Paging); err != nil {
		return nil, err
	}
	return p, nil
}

// raw is a node's JSON (nil for no node).
func raw(n ast.Node) any {
	if n == nil {
		return nil
	}
	return n.Raw()
}

// applyPagingClauses applies in-query ["limit", n], ["offset", n] and
// ["order_by", [...]] clauses (each at most once).
func applyPagingClauses(p *Plan, clauses []any) error {
	seen := map[string]bool{}
	for _, c := range clauses {
		a, ok := c.([]any)
		if !ok || len(a) == 0 || !ast.IsPaging(c) {
			return invalidf("%s is not a valid paging clause: expected [\"limit\", n], [\"offset\", n] or [\"order_by\", [...]]", clj(c))
		}
		name := a[0].(string)
		if seen[name] {
			return invalidf("Multiple '%s' clauses are not permitted", name)
		}
		seen[name] = true
		if len(a) < 2 {
			return invalidf("Received '%s' clause without an argument", name)
		}
		if len(a) > 2 {
			return invalidf("'%s' takes exactly one argument", name)
		}
		switch name {
		case "limit", "offset":
			n, ok := a[1].(jsonv.Number)
			var v int64
			if ok {
				var good bool
				vv, good := numberValue(n)
				v, ok = vv.(int64)
				ok = ok && good
			}
			if n, isNum := a[1].(jsonv.Number); isNum && !ok && n.IsInteger() && !strings.HasPrefix(string(n), "-") {
				return invalidf("Illegal value '%s' for :%s; it is too large (the largest %s is %d).", plainText(a[1]), name, name, int64(math.MaxInt64))
			}
			if !ok || (name == "limit" && v < 1) || v < 0 {
				if name == "limit" {
					return invalidf("Illegal value '%s' for :limit; expected a positive non-zero integer.", plainText(a[1]))
				}
				return invalidf("Illegal value '%s' for :offset; expected a non-negative integer.", plainText(a[1]))
			}
			if name == "limit" {
				p.Limit = v
			} else {
				p.Offset = v
			}
		case "order_by":
			list, ok := a[1].([]any)
			if !ok {
				return invalidf("order_by takes an array of fields or [field, \"asc\"|\"desc\"] pairs, got %s", clj(a[1]))
			}
			var specs []OrderSpec
			for _, it := range list {
				switch x := it.(type) {
				case string:
					specs = append(specs, OrderSpec{Field: x})
				case []any:
					fname, ok1 := x[0].(string)
					dir, ok2 := "", true
					if len(x) == 2 {
						dir, ok2 = x[1].(string)
					}
					if !ok1 || !ok2 || len(x) > 2 || (dir != "" && dir != "asc" && dir != "desc") {
						return invalidf("Illegal order_by entry %s: expected field or [field, \"asc\"|\"desc\"]", clj(it))
					}
					specs = append(specs, OrderSpec{Field: fname, Desc: dir == "desc"})
				default:
					return invalidf("Illegal order_by entry %s: expected field or [field, \"asc\"|\"desc\"]", clj(it))
				}
			}
			orders, err := resolveOrder(p.Entity, specs)
			if err != nil {
				return err
			}
			p.OrderBy = orders
		}
	}
	return nil
}
