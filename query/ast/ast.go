// Package ast is PuppetDB's query language as typed nodes: the JSON AST
// (["and", ["=", "certname", "a"], ...]) decoded once into operators,
// fields, values, subqueries, extract/group_by and paging clauses. PQL
// (package pql) parses into the JSON AST, which decodes into the same
// nodes; ast_only answers with that JSON.
//
// Decoding is about form only: the nodes keep what was written (argument
// lists of any length, field names of any type), and every node keeps its
// JSON (Raw) for the messages that quote it. Whether a field exists, an
// arity is right or a value has the field's type is the planner's business
// (package query), which walks the nodes in PuppetDB's order so that the
// first error it meets is the one PuppetDB reports.
package ast

import "reportdb/jsonv"

// Node is a decoded query node.
type Node interface {
	// Raw is the node's JSON, as given.
	Raw() any
}

type raw struct{ v any }

func (r raw) Raw() any { return r.v }

// NotQuery is a position that must hold a query and holds something else:
// a value that is not an array, [] (which a top-level filter accepts as
// "no filter": see Empty), or an array whose operator is not a string.
type NotQuery struct {
	raw
	// OpNotString is set for an array whose first element is not a string.
	OpNotString bool
}

// Empty reports whether n is [] (no filter, at the top of a query).
func Empty(n Node) bool {
	nq, ok := n.(NotQuery)
	if !ok {
		return false
	}
	a, isArr := nq.v.([]any)
	return isArr && len(a) == 0
}

// Compare is a comparison of a field with a value: "=", "<", "<=", ">",
// ">=", "~" (regular expression), "~>" (regular expression on a path) or
// "null?". Args are as written (a well-formed one has two: the field, a
// string or ["node", "active"], and the value).
type Compare struct {
	raw
	Op   string
	Args []any
}

// Field is the compared field (nil when there is no argument).
func (c Compare) Field() any {
	if len(c.Args) == 0 {
		return nil
	}
	return c.Args[0]
}

// Logical is "and", "or" or "not" over queries.
type Logical struct {
	raw
	Op   string
	Args []Node
}

// In is ["in", fields, target]: Fields is the first argument as written
// (a field name or an array of them), Target the second, decoded (nil when
// absent); Arity is the number of arguments given.
type In struct {
	raw
	Fields any
	Target Node
	Arity  int
}

// Array is the ["array", [values...]] target of "in" (Args as written).
type Array struct {
	raw
	Args []any
}

// Implicit is ["subquery", entity, query]: a subquery through an implicit
// relationship (Args as written; Query is the decoded second argument,
// nil when absent).
type Implicit struct {
	raw
	Args  []any
	Query Node
}

// Extract is ["extract", columns, query?, ["group_by", ...]?] at the top of
// a query (and, with a ["select_<entity>", ...] clause, the old-style
// subquery of "in": see SelectExtract).
type Extract struct {
	raw
	Args []any // as written, after "extract"
}

// SelectExtract is the old-style explicit subquery target of "in":
// ["extract", fields, ["select_<entity>", query?, paging...]].
type SelectExtract struct {
	raw
	Args []any // as written, after "extract"
	// Select is the third element decoded when it is a non-empty array:
	// its name, the query (nil if none) and the paging clauses.
	Select *Select
}

// Select is ["select_<entity>", query?, paging...].
type Select struct {
	Name     any  // as written
	HasQuery bool // a query is given (Query is nil for JSON null)
	Query    Node
	Paging   []any
}

// From is ["from", entity, query?, paging...]: the root endpoint's query,
// or an explicit subquery of "in".
type From struct {
	raw
	Entity   any  // as written (nil when absent)
	HasQuery bool // a query is given (Query is nil for JSON null)
	Query    Node
	Paging   []any
	// Short is set when the entity is missing.
	Short bool
}

// Other is an array whose operator is none of the above (a misplaced
// clause such as "group_by" or "limit", select_<entity> outside "in", or
// an unknown operator).
type Other struct {
	raw
	Op string
}

// Decode decodes the JSON AST of a query (nil: no query).
func Decode(v any) Node {
	if v == nil {
		return nil
	}
	arr, ok := v.([]any)
	if !ok || len(arr) == 0 {
		return NotQuery{raw: raw{v}}
	}
	op, ok := arr[0].(string)
	if !ok {
		return NotQuery{raw: raw{v}, OpNotString: true}
	}
	args := arr[1:]
	switch op {
	case "=", "<", "<=", ">", ">=", "~", "~>", "null?":
		return Compare{raw: raw{v}, Op: op, Args: args}
	case "and", "or", "not":
		l := Logical{raw: raw{v}, Op: op, Args: make([]Node, len(args))}
		for i, a := range args {
			if l.Args[i] = Decode(a); a == nil {
				l.Args[i] = NotQuery{raw: raw{nil}} // null is no query here
			}
		}
		return l
	case "in":
		n := In{raw: raw{v}, Arity: len(args)}
		if len(args) > 0 {
			n.Fields = args[0]
		}
		if len(args) > 1 {
			n.Target = decodeTarget(args[1])
		}
		return n
	case "subquery":
		n := Implicit{raw: raw{v}, Args: args}
		if len(args) > 1 {
			n.Query = Decode(args[1])
		}
		return n
	case "extract":
		return Extract{raw: raw{v}, Args: args}
	}
	return Other{raw: raw{v}, Op: op}
}

// decodeTarget decodes the second argument of "in".
func decodeTarget(v any) Node {
	t, ok := v.([]any)
	if !ok || len(t) == 0 {
		return NotQuery{raw: raw{v}}
	}
	switch t[0] {
	case "array":
		return Array{raw: raw{v}, Args: t[1:]}
	case "extract":
		n := SelectExtract{raw: raw{v}, Args: t[1:]}
		if len(t) == 3 {
			if sel, ok := t[2].([]any); ok && len(sel) > 0 {
				s := &Select{Name: sel[0]}
				s.Query, s.HasQuery, s.Paging = splitQuery(sel[1:])
				n.Select = s
			}
		}
		return n
	case "from":
		return DecodeFrom(v)
	}
	op, _ := t[0].(string)
	return Other{raw: raw{v}, Op: op}
}

// DecodeFrom decodes ["from", entity, query?, paging...] (the root
// endpoint's query); Short is set when it has no entity.
func DecodeFrom(v any) From {
	t, _ := v.([]any)
	n := From{raw: raw{v}}
	if len(t) < 2 {
		n.Short = true
		return n
	}
	n.Entity = t[1]
	n.Query, n.HasQuery, n.Paging = splitQuery(t[2:])
	return n
}

// splitQuery separates an optional leading query from the paging clauses
// that follow it.
func splitQuery(rest []any) (q Node, has bool, paging []any) {
	if len(rest) > 0 && !IsPaging(rest[0]) {
		return Decode(rest[0]), true, rest[1:]
	}
	return nil, false, rest
}

// IsPaging reports whether v is a paging clause: ["limit", ...],
// ["offset", ...] or ["order_by", ...].
func IsPaging(v any) bool {
	a, ok := v.([]any)
	if !ok || len(a) == 0 {
		return false
	}
	switch a[0] {
	case "limit", "offset", "order_by":
		return true
	}
	return false
}

// Walk calls fn for n and, while fn returns true, for the queries under
// its logical operators (not into subqueries).
func Walk(n Node, fn func(Node) bool) {
	if n == nil || !fn(n) {
		return
	}
	if l, ok := n.(Logical); ok {
		for _, a := range l.Args {
			Walk(a, fn)
		}
	}
}

// Clojure renders a raw value as PuppetDB quotes queries in messages.
func Clojure(v any) string { return jsonv.Clojure(v) }
