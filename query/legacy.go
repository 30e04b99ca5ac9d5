package query

import (
	"strings"

	"reportdb/query/ast"
)

// In distinct_resources mode (and always on aggregate-event-counts)
// PuppetDB 7.12.1 compiles the events query with its older engine, which
// knows fewer operators and fields. These tables and messages reproduce it.
var (
	legacyEquals = set("certname", "report", "latest_report?", "environment", "resource_type",
		"resource_title", "status", "property", "message", "file", "line", "containing_class",
		"corrective_change", "old_value", "new_value")
	legacyRegex = set("certname", "environment", "report", "resource_type", "resource_title",
		"status", "property", "message", "file", "line", "containing_class")
	legacyInequality = set("timestamp", "run_start_time", "run_end_time", "report_receive_time")
)

func set(xs ...string) map[string]bool {
	m := map[string]bool{}
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// CheckLegacy validates a query (the JSON AST) against the legacy engine's
// subset (aggregate-event-counts always uses that engine).
func CheckLegacy(q any) error {
	_, err := legacy(ast.Decode(q))
	return err
}

// legacy validates a query against the legacy engine's subset and returns
// it with hyphenated field names (resource-type) rewritten to their
// underscored form, which that engine also accepts.
func legacy(n ast.Node) (ast.Node, error) {
	wellFormed := func() error {
		a := n.Raw().([]any)
		return invalidf("%s is not well-formed: query operator '%s' is unknown", clj(n.Raw()), fieldText(a[0]))
	}
	switch x := n.(type) {
	case nil:
		return nil, nil
	case ast.NotQuery:
		if x.OpNotString {
			return nil, wellFormed()
		}
		return n, nil
	case ast.Logical:
		out := []any{x.Op}
		for _, a := range x.Args {
			y, err := legacy(a)
			if err != nil {
				return nil, err
			}
			out = append(out, y.Raw()) // a is never nil: see ast.Logical
		}
		return ast.Decode(out), nil
	case ast.Compare:
		switch x.Op {
		case "null?", "~>":
			return nil, wellFormed()
		}
		if len(x.Args) != 2 {
			return n, nil // arity is reported by the normal engine
		}
		name, ok := x.Args[0].(string)
		if !ok {
			return n, nil
		}
		name = strings.ReplaceAll(name, "-", "_")
		switch x.Op {
		case "=":
			if !legacyEquals[name] {
				return nil, invalidf("'%s' is not a queryable object for version 4 of the resource events API", x.Args[0])
			}
		case "~":
			if !legacyRegex[name] {
				return nil, invalidf("'%s' is not a queryable object for version 4 of the resource events API", x.Args[0])
			}
		default:
			if !legacyInequality[name] {
				return nil, invalidf("%s operator does not support object '%s' for resource events", x.Op, x.Args[0])
			}
		}
		return ast.Decode([]any{x.Op, name, x.Args[1]}), nil
	case ast.In:
		if x.Arity == 2 {
			switch t := x.Target.(type) {
			case ast.SelectExtract, ast.NotQuery:
			default:
				return nil, invalidf("The subquery argument of 'in' must be an 'extract', not '%s'", fieldText(t.Raw().([]any)[0]))
			}
		}
		return n, nil
	case ast.Extract:
		return nil, invalidf("extract is not supported in this query (distinct_resources and aggregate-event-counts use PuppetDB's legacy events engine, which has no extract)")
	}
	return nil, wellFormed()
}

// onlyLatest returns the value of a query that is exactly
// ["=", "latest_report?", V] (nil otherwise): distinct_resources then
// restricts its candidates to (non-)latest reports.
func onlyLatest(n ast.Node) *bool {
	c, ok := n.(ast.Compare)
	if !ok || c.Op != "=" || len(c.Args) != 2 || c.Args[0] != "latest_report?" {
		return nil
	}
	v := truthy(c.Args[1])
	return &v
}
