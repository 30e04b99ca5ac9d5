package ast_test

import (
	"reflect"
	"testing"

	"reportdb/internal/testcorpus"
	"reportdb/jsonv"
	"reportdb/query/ast"
)

// TestDecode: each form decodes into its node, keeping what was written
// (arities and field names are the planner's to check).
func TestDecode(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string // node type
		ok   func(ast.Node) bool
	}{
		{`["=","certname","a"]`, "ast.Compare", func(n ast.Node) bool {
			c := n.(ast.Compare)
			return c.Op == "=" && c.Field() == "certname" && len(c.Args) == 2
		}},
		{`["=","certname"]`, "ast.Compare", func(n ast.Node) bool { return len(n.(ast.Compare).Args) == 1 }},
		{`["null?","file",true]`, "ast.Compare", nil},
		{`["~>","certname","x"]`, "ast.Compare", nil},
		{`["and",["=","a",1],null]`, "ast.Logical", func(n ast.Node) bool {
			l := n.(ast.Logical)
			_, second := l.Args[1].(ast.NotQuery) // null is not a query inside and
			return l.Op == "and" && len(l.Args) == 2 && second
		}},
		{`["not"]`, "ast.Logical", func(n ast.Node) bool { return len(n.(ast.Logical).Args) == 0 }},
		{`["in","certname",["array",["a","b"]]]`, "ast.In", func(n ast.Node) bool {
			in := n.(ast.In)
			a, ok := in.Target.(ast.Array)
			return ok && in.Arity == 2 && in.Fields == "certname" && len(a.Args) == 1
		}},
		{`["in",["certname"],["extract","certname",["select_reports",["=","status","failed"],["limit",1]]]]`, "ast.In", func(n ast.Node) bool {
			se, ok := n.(ast.In).Target.(ast.SelectExtract)
			return ok && se.Select != nil && se.Select.Name == "select_reports" && se.Select.HasQuery &&
				len(se.Select.Paging) == 1 && reflect.TypeOf(se.Select.Query).String() == "ast.Compare"
		}},
		{`["in","certname",["from","reports",["extract",["certname"]],["limit",2]]]`, "ast.In", func(n ast.Node) bool {
			f, ok := n.(ast.In).Target.(ast.From)
			return ok && f.Entity == "reports" && f.HasQuery && len(f.Paging) == 1
		}},
		{`["in","certname",["bogus",1]]`, "ast.In", func(n ast.Node) bool {
			o, ok := n.(ast.In).Target.(ast.Other)
			return ok && o.Op == "bogus"
		}},
		{`["in","certname"]`, "ast.In", func(n ast.Node) bool { return n.(ast.In).Target == nil && n.(ast.In).Arity == 1 }},
		{`["subquery","reports",["=","status","failed"]]`, "ast.Implicit", func(n ast.Node) bool { return n.(ast.Implicit).Query != nil }},
		{`["extract",["certname"],["=","a",1],["group_by","certname"]]`, "ast.Extract", func(n ast.Node) bool { return len(n.(ast.Extract).Args) == 3 }},
		{`["limit",1]`, "ast.Other", nil},
		{`[]`, "ast.NotQuery", func(n ast.Node) bool { return ast.Empty(n) }},
		{`"certname"`, "ast.NotQuery", func(n ast.Node) bool { return !ast.Empty(n) && !n.(ast.NotQuery).OpNotString }},
		{`[1,2]`, "ast.NotQuery", func(n ast.Node) bool { return n.(ast.NotQuery).OpNotString }},
	} {
		v := testcorpus.JSON(t, c.in)
		n := ast.Decode(v)
		if got := reflect.TypeOf(n).String(); got != c.want {
			t.Errorf("%s: decoded as %s, want %s", c.in, got, c.want)
			continue
		}
		if !reflect.DeepEqual(n.Raw(), v) {
			t.Errorf("%s: Raw() = %v", c.in, n.Raw())
		}
		if c.ok != nil && !c.ok(n) {
			t.Errorf("%s: decoded wrong: %#v", c.in, n)
		}
	}
	if ast.Decode(nil) != nil {
		t.Error("Decode(nil) is not nil")
	}
}

func TestDecodeFrom(t *testing.T) {
	f := ast.DecodeFrom(testcorpus.JSON(t, `["from","nodes",null,["order_by",["certname"]]]`))
	if f.Short || f.Entity != "nodes" || !f.HasQuery || f.Query != nil || len(f.Paging) != 1 {
		t.Errorf("from with a null query: %#v", f)
	}
	if f := ast.DecodeFrom(testcorpus.JSON(t, `["from"]`)); !f.Short {
		t.Errorf("from without entity: %#v", f)
	}
	if f := ast.DecodeFrom(testcorpus.JSON(t, `["from","reports",["limit",1]]`)); f.HasQuery || len(f.Paging) != 1 {
		t.Errorf("from with only paging: %#v", f)
	}
}

// TestWalk visits logical operators' queries, not subqueries.
func TestWalk(t *testing.T) {
	n := ast.Decode(testcorpus.JSON(t, `["and",["=","a",1],["not",["or",["=","b",2]]],["subquery","reports",["=","c",3]]]`))
	var fields []any
	ast.Walk(n, func(n ast.Node) bool {
		if c, ok := n.(ast.Compare); ok {
			fields = append(fields, c.Field())
		}
		return true
	})
	if !reflect.DeepEqual(fields, []any{"a", "b"}) {
		t.Errorf("walked fields %v, want [a b]", fields)
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{`["and",["=","a",1]]`, `["in","x",["extract","y",["select_reports",null]]]`, `["from","nodes"]`, `[[1]]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := jsonv.Parse([]byte(s))
		if err != nil {
			return
		}
		n := ast.Decode(v)
		if v != nil && !reflect.DeepEqual(n.Raw(), v) {
			t.Fatalf("Raw() %v != %v", n.Raw(), v)
		}
		ast.Walk(n, func(ast.Node) bool { return true })
	})
}
