// Package nodeeval answers a compiled nodes query (a query.Plan) on node
// rows held in memory: the rows of reportdb's nodes merged with an upstream
// PuppetDB's (package upstream), which neither side's SQL can filter alone
// (a filter may test a report field and a fact field at once, and the
// upstream's deactivated and expired decide node_state). It reproduces
// what the SQL answers: SQL's three-valued logic, PostgreSQL's ordering
// (NULLs last ascending) and regular expressions, count() with group_by.
package nodeeval

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"reportdb"
	"reportdb/internal/pgcompat"
	"reportdb/jsonv"
	"reportdb/query"
)

// Sub answers a subquery on an entity reportdb stores (reports, events,
// environments, producers) with the rows of its plan.
type Sub func(p *query.Plan) ([]*jsonv.Object, error)

// Eval filters, aggregates, orders, pages and projects rows by plan; total
// is the number of result rows before paging. A subquery on plan's own
// entity is evaluated on rows too; one on another entity reportdb stores
// is asked of sub; one on an entity reportdb does not store is a 400.
func Eval(plan *query.Plan, rows []*jsonv.Object, sub Sub) ([]any, int, error) {
	ev := &evaluator{entity: plan.Entity, rows: rows, sub: sub}
	return ev.run(plan)
}

type evaluator struct {
	entity *query.Entity
	rows   []*jsonv.Object
	sub    Sub
	subs   map[*query.Plan]map[string]bool
}

func (ev *evaluator) run(plan *query.Plan) ([]any, int, error) {
	var kept []*jsonv.Object
	for _, row := range ev.rows {
		t, err := ev.eval(plan.Filter, row)
		if err != nil {
			return nil, 0, err
		}
		if t == triTrue {
			kept = append(kept, row)
		}
	}
	aggregate := false
	for _, c := range plan.Columns {
		if c.IsFunc() {
			if c.Func != "count" {
				return nil, 0, reportdb.Errorf(reportdb.EINVALID, "With an upstream PuppetDB, nodes queries support only the count() function, not %s()", c.Func)
			}
			aggregate = true
		}
	}
	if aggregate {
		kept = groupCount(plan, kept)
	}
	sort.SliceStable(kept, func(i, j int) bool {
		for _, o := range plan.OrderBy {
			if o.Field == nil {
				continue
			}
			c := compareNullsLast(normValue(o.Field, rowValue(kept[i], o.Field.Name)), normValue(o.Field, rowValue(kept[j], o.Field.Name)))
			if o.Desc {
				c = -c
			}
			if c != 0 {
				return c < 0
			}
		}
		return false
	})
	total := len(kept)
	if plan.Offset > 0 {
		if int(plan.Offset) >= len(kept) {
			kept = nil
		} else {
			kept = kept[plan.Offset:]
		}
	}
	if plan.Limit > 0 && int(plan.Limit) < len(kept) {
		kept = kept[:plan.Limit]
	}
	out := make([]any, len(kept))
	for i, row := range kept {
		if plan.Columns == nil || aggregate {
			out[i] = row
			continue
		}
		o := &jsonv.Object{}
		for _, c := range plan.Columns {
			o.Keys = append(o.Keys, c.Name)
			o.Values = append(o.Values, rowValue(row, c.Field.Name))
		}
		out[i] = o
	}
	return out, total, nil
}

// groupCount turns rows into count rows: one per group_by tuple (in first
// appearance order), keys in column order.
func groupCount(plan *query.Plan, rows []*jsonv.Object) []*jsonv.Object {
	type group struct {
		key   []any
		count int64
	}
	var groups []*group
	index := map[string]*group{}
	for _, row := range rows {
		var key []any
		for _, g := range plan.GroupBy {
			key = append(key, rowValue(row, g.Name))
		}
		k := tupleKey(key)
		g := index[k]
		if g == nil {
			g = &group{key: key}
			index[k] = g
			groups = append(groups, g)
		}
		g.count++
	}
	if len(groups) == 0 && len(plan.GroupBy) == 0 {
		groups = []*group{{}}
	}
	out := make([]*jsonv.Object, len(groups))
	for i, g := range groups {
		o := &jsonv.Object{}
		for _, c := range plan.Columns {
			o.Keys = append(o.Keys, c.Name)
			if c.Func == "count" {
				o.Values = append(o.Values, jsonv.Number(strconv.FormatInt(g.count, 10)))
				continue
			}
			for gi, gb := range plan.GroupBy {
				if gb.Name == c.Name {
					o.Values = append(o.Values, g.key[gi])
				}
			}
		}
		out[i] = o
	}
	return out
}

// tupleKey is a map key for a tuple of normalized values.
func tupleKey(vals []any) string {
	var b strings.Builder
	for _, v := range vals {
		fmt.Fprintf(&b, "%T:%v\x00", v, v)
	}
	return b.String()
}

func rowValue(row *jsonv.Object, name string) any {
	v, _ := row.Get(name)
	return v
}

// normValue turns a JSON value of field f into a comparable Go value:
// timestamps to Unix ms, numbers to float64.
func normValue(f *query.Field, v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		if f != nil && f.Type == query.Timestamp {
			if ms, ok := query.ParseTimestampValue(x); ok {
				return float64(ms)
			}
		}
		return x
	case jsonv.Number:
		n, _ := strconv.ParseFloat(string(x), 64)
		return n
	case int64:
		return float64(x)
	case int:
		return float64(x)
	}
	return v
}

// compare orders two normalized non-nil values of one type.
func compare(a, b any) int {
	switch x := a.(type) {
	case string:
		y, _ := b.(string)
		return strings.Compare(x, y)
	case float64:
		y, _ := b.(float64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case bool:
		y, _ := b.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	}
	return strings.Compare(jsonv.Compact(a), jsonv.Compact(b))
}

// compareNullsLast is PostgreSQL's ascending order: NULLs last (and so
// first when descending).
func compareNullsLast(a, b any) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	return compare(a, b)
}

type tri int

const (
	triFalse tri = iota
	triTrue
	triUnknown // SQL NULL
)

func triOf(b bool) tri {
	if b {
		return triTrue
	}
	return triFalse
}

// eval evaluates a filter on a row with SQL's three-valued logic.
func (ev *evaluator) eval(x query.Expr, row *jsonv.Object) (tri, error) {
	switch e := x.(type) {
	case nil:
		return triTrue, nil
	case query.Const:
		return triOf(e.Value), nil
	case query.And:
		res := triTrue
		for _, a := range e.Args {
			t, err := ev.eval(a, row)
			if err != nil {
				return 0, err
			}
			if t == triFalse {
				return triFalse, nil
			}
			if t == triUnknown {
				res = triUnknown
			}
		}
		return res, nil
	case query.Or:
		res := triFalse
		for _, a := range e.Args {
			t, err := ev.eval(a, row)
			if err != nil {
				return 0, err
			}
			if t == triTrue {
				return triTrue, nil
			}
			if t == triUnknown {
				res = triUnknown
			}
		}
		return res, nil
	case query.Not:
		t, err := ev.eval(e.X, row)
		switch {
		case err != nil:
			return 0, err
		case t == triUnknown:
			return triUnknown, nil
		}
		return triOf(t == triFalse), nil
	case query.IsNull:
		return triOf((rowValue(row, e.Field.Name) == nil) == e.Null), nil
	case query.Cmp:
		if !scalar(e.Field) {
			break
		}
		v := normValue(e.Field, rowValue(row, e.Field.Name))
		if v == nil {
			return triUnknown, nil
		}
		c := compare(v, normValue(e.Field, e.Value))
		switch e.Op {
		case "=":
			return triOf(c == 0), nil
		case "<":
			return triOf(c < 0), nil
		case "<=":
			return triOf(c <= 0), nil
		case ">":
			return triOf(c > 0), nil
		case ">=":
			return triOf(c >= 0), nil
		}
		return 0, reportdb.Errorf(reportdb.EINVALID, "operator %s is not supported on nodes with an upstream PuppetDB", e.Op)
	case query.Match:
		if !scalar(e.Field) {
			break
		}
		v, ok := rowValue(row, e.Field.Name).(string)
		if !ok {
			return triUnknown, nil
		}
		re, err := pgcompat.CompileRegex(e.Pattern)
		if err != nil {
			return 0, reportdb.Invalid("ERROR: " + err.Error())
		}
		return triOf(re.MatchString(v)), nil
	case query.InValues:
		if !scalar(e.Field) {
			break
		}
		v := normValue(e.Field, rowValue(row, e.Field.Name))
		if v == nil {
			return triUnknown, nil
		}
		for _, c := range e.Values {
			if compare(v, normValue(e.Field, c)) == 0 {
				return triTrue, nil
			}
		}
		return triFalse, nil
	case query.NodeState:
		active := rowValue(row, "deactivated") == nil && rowValue(row, "expired") == nil
		return triOf(active == e.Active), nil
	case query.InQuery:
		set, err := ev.subquery(e.Sub)
		if err != nil {
			return 0, err
		}
		var key []any
		for _, f := range e.Fields {
			v := rowValue(row, f.Name)
			if v == nil {
				return triUnknown, nil
			}
			key = append(key, normValue(f, v))
		}
		return triOf(set[tupleKey(key)]), nil
	}
	return 0, reportdb.Errorf(reportdb.EINVALID, "this filter is not supported on nodes with an upstream PuppetDB")
}

// scalar reports whether f's JSON values compare as the SQL compares them
// (every node field does); a document, an array or a JSON value column
// has operators of its own ("=" on containment_path is membership), which
// are left unsupported rather than answered wrong.
func scalar(f *query.Field) bool {
	switch f.Type {
	case query.String, query.Number, query.Timestamp, query.Boolean, query.NullString, query.NullBoolean:
		return true
	}
	return false
}

// subquery evaluates an "in" subquery once: on the rows, or on an entity
// reportdb stores through sub.
func (ev *evaluator) subquery(p *query.Plan) (map[string]bool, error) {
	if set, ok := ev.subs[p]; ok {
		return set, nil
	}
	var rows []*jsonv.Object
	switch {
	case p.Entity == ev.entity:
		inner := &evaluator{entity: ev.entity, rows: ev.rows, sub: ev.sub}
		out, _, err := inner.run(p)
		if err != nil {
			return nil, err
		}
		for _, o := range out {
			rows = append(rows, o.(*jsonv.Object))
		}
	case p.Entity.Exists:
		var err error
		if rows, err = ev.sub(p); err != nil {
			return nil, err
		}
	default:
		return nil, reportdb.Errorf(reportdb.EINVALID, "With an upstream PuppetDB, a nodes query cannot hold a subquery on %s (it lives upstream); query the upstream's entity at its own endpoint", p.Entity.Name)
	}
	set := map[string]bool{}
	for _, o := range rows {
		var key []any
		for _, c := range p.Columns {
			key = append(key, normValue(c.Field, rowValue(o, c.Name)))
		}
		set[tupleKey(key)] = true
	}
	if ev.subs == nil {
		ev.subs = map[*query.Plan]map[string]bool{}
	}
	ev.subs[p] = set
	return set, nil
}
