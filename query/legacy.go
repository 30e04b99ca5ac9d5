package query

import "strings"

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

// CheckLegacy validates an events query against the legacy engine's
// subset and returns it with hyphenated field names (resource-type)
// rewritten to their underscored form, which that engine also accepts.
func CheckLegacy(ast any) error {
	_, err := legacy(ast)
	return err
}

// NormalizeLegacy returns the query with legacy hyphenated field names
// rewritten; it must only be called after CheckLegacy succeeded.
func NormalizeLegacy(ast any) any {
	out, _ := legacy(ast)
	return out
}

func legacy(ast any) (any, error) {
	arr, ok := ast.([]any)
	if !ok || len(arr) == 0 {
		return ast, nil
	}
	op, _ := arr[0].(string)
	wellFormed := func() error {
		return invalidf("%s is not well-formed: query operator '%s' is unknown", clj(ast), fieldText(arr[0]))
	}
	switch op {
	case "and", "or", "not":
		out := []any{op}
		for _, a := range arr[1:] {
			x, err := legacy(a)
			if err != nil {
				return nil, err
			}
			out = append(out, x)
		}
		return out, nil
	case "=", "~", "<", "<=", ">", ">=":
		if len(arr) != 3 {
			return ast, nil // arity is reported by the normal engine
		}
		name, ok := arr[1].(string)
		if !ok {
			return ast, nil
		}
		name = strings.ReplaceAll(name, "-", "_")
		switch op {
		case "=":
			if !legacyEquals[name] {
				return nil, invalidf("'%s' is not a queryable object for version 4 of the resource events API", arr[1])
			}
		case "~":
			if !legacyRegex[name] {
				return nil, invalidf("'%s' is not a queryable object for version 4 of the resource events API", arr[1])
			}
		default:
			if !legacyInequality[name] {
				return nil, invalidf("%s operator does not support object '%s' for resource events", op, arr[1])
			}
		}
		return []any{op, name, arr[2]}, nil
	case "in":
		if len(arr) == 3 {
			if t, ok := arr[2].([]any); ok && len(t) > 0 {
				if t[0] != "extract" {
					return nil, invalidf("The subquery argument of 'in' must be an 'extract', not '%s'", fieldText(t[0]))
				}
			}
		}
		return ast, nil
	case "extract":
		return nil, invalidf("extract is not supported in this query (distinct_resources and aggregate-event-counts use PuppetDB's legacy events engine, which has no extract)")
	}
	return nil, wellFormed()
}

// OnlyLatest returns the value of a query that is exactly
// ["=", "latest_report?", V] (nil otherwise): distinct_resources then
// restricts its candidates to (non-)latest reports.
func OnlyLatest(ast any) *bool {
	arr, ok := ast.([]any)
	if !ok || len(arr) != 3 || arr[0] != "=" || arr[1] != "latest_report?" {
		return nil
	}
	v := truthy(arr[2])
	return &v
}
