package pql_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"reportdb/internal/testcorpus"
	"reportdb/jsonv"
	"reportdb/query/pql"
)

func compact(t *testing.T, js string) string {
	t.Helper()
	return jsonv.Compact(testcorpus.JSON(t, js))
}

// SPEC §20.2: every row was produced by the live server with ast_only=true.
var specTable = []struct{ in, want string }{
	{`events{}`, `["from","events"]`},
	{`events { certname = "host1" }`, `["from","events",["=","certname","host1"]]`},
	{`events { certname = 'host1' and status != 'success' }`, `["from","events",["and",["=","certname","host1"],["not",["=","status","success"]]]]`},
	{`events[certname, status]{ timestamp > "2024-01-01T00:00:00Z" }`, `["from","events",["extract",["certname","status"],[">","timestamp","2024-01-01T00:00:00Z"]]]`},
	{`events[certname, count()]{ group by certname }`, `["from","events",["extract",["certname",["function","count"]],["group_by","certname"]]]`},
	{`events[status, count(), avg(line)]{ certname ~ "^web" group by status }`, `["from","events",["extract",["status",["function","count"],["function","avg","line"]],["~","certname","^web"],["group_by","status"]]]`},
	{`events{ line > 10 and line <= 20.5 }`, `["from","events",["and",[">","line",10],["<=","line",20.5]]]`},
	{`events{ !(status = "noop") }`, `["from","events",["not",["=","status","noop"]]]`},
	{`events{ file is null }`, `["from","events",["null?","file",true]]`},
	{`events{ file is not null or property is null }`, `["from","events",["or",["null?","file",false],["null?","property",true]]]`},
	{`events{ latest_report? = true }`, `["from","events",["=","latest_report?",true]]`},
	{`events{ certname in ["a", "b"] }`, `["from","events",["in","certname",["array",["a","b"]]]]`},
	{`events{ certname in reports[certname]{ status = "failed" } }`, `["from","events",["in","certname",["from","reports",["extract",["certname"],["=","status","failed"]]]]]`},
	{`events{ [certname, report] in reports[certname, hash]{ latest_report? = true } }`, `["from","events",["in",["certname","report"],["from","reports",["extract",["certname","hash"],["=","latest_report?",true]]]]]`},
	{`events{ reports{ status = "failed" } }`, `["from","events",["subquery","reports",["=","status","failed"]]]`},
	{`events{ environments{ name = "production" } }`, `["from","events",["subquery","environments",["=","name","production"]]]`},
	{`events{ order by timestamp desc, certname limit 10 offset 5 }`, `["from","events",["order_by",[["timestamp","desc"],"certname"]],["limit",10],["offset",5]]`},
	{`events[certname]{ limit 1 }`, `["from","events",["extract",["certname"]],["limit",1]]`},
	{`reports{ certname = "a" order by producer_timestamp desc limit 1 }`, `["from","reports",["=","certname","a"],["order_by",[["producer_timestamp","desc"]]],["limit",1]]`},
	{`events{ status !~ "succ" }`, `["from","events",["not",["~","status","succ"]]]`},
	{`events[count(status)]{}`, `["from","events",["extract",[["function","count","status"]]]]`},
	{`events[to_string(timestamp, "YYYY")]{}`, `["from","events",["extract",[["function","to_string","timestamp","YYYY"]]]]`},
	{`events{ line > 1.5e3 }`, `["from","events",[">","line",1500.0]]`},
	{`events{ new_value = ["a", "b"] }`, `["from","events",["=","new_value",["a","b"]]]`},
	{`events{ certname in events[certname]{ status = "failure" } limit 5 }`, `["from","events",["in","certname",["from","events",["extract",["certname"],["=","status","failure"]]]],["limit",5]]`},
	{`events{ limit 1 order by certname }`, `["from","events",["limit",1],["order_by",["certname"]]]`},
	{`events[]{}`, `["from","events",["extract",[]]]`},
	// §20.2 note: group by without a projection stays at the from level.
	{`events{ certname = "a" group by certname }`, `["from","events",["=","certname","a"],["group_by","certname"]]`},
}

// More translations, following PuppetDB's grammar and transform.
var moreTable = []struct{ in, want string }{
	{`events[certname]{ certname = "x" limit 1 }`, `["from","events",["extract",["certname"],["=","certname","x"]],["limit",1]]`},
	{" \n\tevents {\n}\n ", `["from","events"]`},
	{`events{a=1 and b=2 and c=3}`, `["from","events",["and",["=","a",1],["=","b",2],["=","c",3]]]`},
	{`events{a=1 or b=2 and c=3 or d=4}`, `["from","events",["or",["=","a",1],["and",["=","b",2],["=","c",3]],["=","d",4]]]`},
	{`events{a=1 and (b=2 and c=3)}`, `["from","events",["and",["=","a",1],["and",["=","b",2],["=","c",3]]]]`},
	{`events{ !a = 1 }`, `["from","events",["not",["=","a",1]]]`},
	{`events{ ! ! a = 1 }`, `["from","events",["not",["not",["=","a",1]]]]`},
	{`events{ ((a = 1)) }`, `["from","events",["=","a",1]]`},
	{`events{ a != 1 }`, `["from","events",["not",["=","a",1]]]`},
	{`events{ a >= -3 and b < -0 and c > -1.5 and d <= 007 }`, `["from","events",["and",[">=","a",-3],["<","b",0],[">","c",-1.5],["<=","d",7]]]`},
	{`events{ a = 1.0E10 and b = 1.5e-5 and c = 2.5E+2 and d = -0.0 }`, `["from","events",["and",["=","a",1.0E10],["=","b",1.5E-5],["=","c",250.0],["=","d",-0.0]]]`},
	{`events{ a = false }`, `["from","events",["=","a",false]]`},
	{`events{ a = [1, [true, 'x'], 2.5] }`, `["from","events",["=","a",[1,[true,"x"],2.5]]]`},
	{`events{ a in [1, "b", false] }`, `["from","events",["in","a",["array",[1,"b",false]]]]`},
	{`events{ a ~> ["x", 'y'] }`, `["from","events",["~>","a",["x","y"]]]`},
	{`events{ containment_path ~> ["^Stage"] }`, `["from","events",["~>","containment_path",["^Stage"]]]`},
	{`events{ a = "q\"\\\/\b\f\n\r\tz\u00e9\ud83d\ude00" }`, `["from","events",["=","a","q\"\\/\b\f\n\r\tzé😀"]]`},
	{`events{ a = 'it\'s \n \\ "x"' }`, `["from","events",["=","a","it's \\n \\\\ \"x\""]]`},
	{"events{ a = \"tab\there\" }", `["from","events",["=","a","tab\there"]]`},
	{`nodes[certname]{ facts.os.family = "Debian" and trusted.extensions.pp_role = 'web' }`, `["from","nodes",["extract",["certname"],["and",["=","facts.os.family","Debian"],["=","trusted.extensions.pp_role","web"]]]]`},
	{`inventory[certname]{ facts.foo."quoted string" = 100 }`, `["from","inventory",["extract",["certname"],["=","facts.foo.\"quoted string\"",100]]]`},
	{`inventory[certname]{ facts.foo[0].bar[10] = 100 }`, `["from","inventory",["extract",["certname"],["=","facts.foo[0].bar[10]",100]]]`},
	{`inventory[certname, facts.os]{}`, `["from","inventory",["extract",["certname","facts.os"]]]`},
	{`resources{ parameters.ensure = "present" }`, `["from","resources",["=","parameters.ensure","present"]]`},
	{`events[certname, count()]{ status = "failure" group by certname }`, `["from","events",["extract",["certname",["function","count"]],["=","status","failure"],["group_by","certname"]]]`},
	{`events[min(line), max(line), sum(line)]{}`, `["from","events",["extract",[["function","min","line"],["function","max","line"],["function","sum","line"]]]]`},
	{`events[to_string(timestamp, "YYYY", 'MM')]{}`, `["from","events",["extract",[["function","to_string","timestamp","YYYY","MM"]]]]`},
	{`events[ certname ]{ order by certname asc }`, `["from","events",["extract",["certname"]],["order_by",[["certname","asc"]]]]`},
	{`events[certname]{ status = "x" order by certname offset 2 limit 1 }`, `["from","events",["extract",["certname"],["=","status","x"]],["order_by",["certname"]],["offset",2],["limit",1]]`},
	{`events{ certname in reports[certname]{ limit 1 } and a = 1 }`, `["from","events",["and",["in","certname",["from","reports",["extract",["certname"]],["limit",1]]],["=","a",1]]]`},
	{`events{certname in reports[certname]{}}`, `["from","events",["in","certname",["from","reports",["extract",["certname"]]]]]`},
	{`events{ [a] in [1] }`, `["from","events",["in",["a"],["array",[1]]]]`},
	{`events{ reports{} }`, `["from","events",["subquery","reports"]]`},
	{`events{ reports{ limit 1 } }`, `["from","events",["subquery","reports",["limit",1]]]`},
	{`factsets{}`, `["from","factsets"]`},
	{`package_inventory{}`, `["from","package_inventory"]`},
	{`events{ limit 3000000000 }`, `["from","events",["limit",3000000000]]`},
}

func TestSpecTable(t *testing.T) {
	for _, tc := range append(specTable, moreTable...) {
		got, err := pql.Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if g, w := jsonv.Compact(got), compact(t, tc.want); g != w {
			t.Errorf("Parse(%q)\n got %s\nwant %s", tc.in, g, w)
		}
	}
}

type confCase struct {
	ID       string     `json:"id"`
	Endpoint string     `json:"endpoint"`
	Params   [][]string `json:"params"`
	Expect   struct {
		Status int             `json:"status"`
		Body   json.RawMessage `json:"body"`
	} `json:"expect"`
}

const casesFile = "/work/shared/conformance/cases.jsonl"

// TestConformanceGoldens checks every root-endpoint case whose query is PQL:
// parse errors must render PuppetDB's exact body, ast_only cases must give
// the golden AST, and every 200 case must at least parse.
func TestConformanceGoldens(t *testing.T) {
	f, err := os.Open(casesFile)
	if err != nil {
		t.Skipf("conformance cases not available: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	n := 0
	for sc.Scan() {
		var c confCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("bad case line: %v", err)
		}
		if c.Endpoint != "root" {
			continue
		}
		query, astOnly, has := "", false, false
		for _, kv := range c.Params {
			switch kv[0] {
			case "query":
				query, has = kv[1], true
			case "ast_only":
				astOnly = kv[1] == "true"
			}
		}
		if !has || strings.HasPrefix(strings.TrimSpace(query), "[") {
			continue
		}
		n++
		ast, err := pql.Parse(query)
		switch {
		case c.Expect.Status == 400:
			var body string
			if err := json.Unmarshal(c.Expect.Body, &body); err != nil || !strings.HasPrefix(body, "PQL parse error") {
				continue
			}
			var pe *pql.ParseError
			if !errors.As(err, &pe) {
				t.Errorf("%s: Parse(%q) = %v, want a parse error", c.ID, query, err)
				continue
			}
			if got := pe.Message(); got != body {
				t.Errorf("%s: Parse(%q) message\n got %q\nwant %q", c.ID, query, got, body)
			}
		case c.Expect.Status == 200:
			if err != nil {
				t.Errorf("%s: Parse(%q): %v", c.ID, query, err)
				continue
			}
			if astOnly {
				if g, w := jsonv.Compact(ast), compact(t, string(c.Expect.Body)); g != w {
					t.Errorf("%s: Parse(%q)\n got %s\nwant %s", c.ID, query, g, w)
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Error("no PQL root cases found")
	}
}

// Exact error bodies (SPEC §20.3 and catalogue R4/R5, plus our own cases
// derived from the same rules).
var errorBodies = []struct{ in, want string }{
	{`events{certname=}`, "PQL parse error at line 1, column 17:\n\nevents{certname=}\n                ^\n\nExpected one of:\n\n[\nfalse\ntrue\n#\"[0-9]+\"\n-\n'\n\"\n#\"\\s+\"\n"},
	{`foo{}`, "PQL parse error at line 1, column 1:\n\nfoo{}\n^\n\nExpected one of:\n\nevents\nedges\ninventory\nfact_contents\nfact_paths\nfactsets\nenvironments\nnodes\nresources\npackage_inventory\npackages\ncatalogs\nreports\nfacts\n#\"\\s+\"\n"},
	{`events { certname = "x" `, "PQL parse error at line 1, column 25:\n\nevents { certname = \"x\" \n                        ^\n\nExpected one of:\n\n}\n#\"\\s+\"\norder by\noffset\nlimit\ngroup by\nor\nand\n"},
	// an empty query, or one of white space only, is said to be empty
	// (PuppetDB echoes the empty one as the line "null")
	{``, emptyQuery},
	{"   \n\t", emptyQuery},
	// trailing garbage: the end-of-string alternatives
	{`events{} x`, "PQL parse error at line 1, column 9:\n\nevents{} x\n        ^\n\nExpected one of:\n\n#\"\\s+\" (followed by end-of-string):end-of-string\n"},
	// second line
	{"events {\n  certname = }", "PQL parse error at line 2, column 14:\n\n  certname = }\n             ^\n\nExpected one of:\n\n[\nfalse\ntrue\n#\"[0-9]+\"\n-\n'\n\"\n"},
}

const emptyQuery = "PQL parse error: the query is empty. A PQL query names an entity and, optionally, the fields to return and a filter, e.g. nodes[certname] { certname ~ \"^web\" }"

func TestErrorBodies(t *testing.T) {
	for _, tc := range errorBodies {
		_, err := pql.Parse(tc.in)
		var pe *pql.ParseError
		if !errors.As(err, &pe) {
			t.Errorf("Parse(%q) = %v, want *ParseError", tc.in, err)
			continue
		}
		if got := pe.Message(); got != tc.want {
			t.Errorf("Parse(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
		if pe.Error() != pe.Message() {
			t.Errorf("Parse(%q): Error() differs from Message()", tc.in)
		}
	}
}

// Parse errors: only the position lines are asserted.
var parseErrors = []struct {
	in         string
	line, col  int
	firstLines string
}{
	{`events{`, 1, 8, "PQL parse error at line 1, column 8:\n\nevents{\n       ^\n"},
	{`events{}}`, 1, 9, ""},
	{`events{ a = 1 } }`, 1, 16, ""},
	{`events{ (a = 1 }`, 1, 16, ""},
	{`events{ a = 1 AND b = 2 }`, 1, 15, ""},
	{`events{ a = 1 OR b = 2 }`, 1, 15, ""},
	{`Events{}`, 1, 1, ""},
	{`events{ certname="a"and x="b" }`, 1, 21, ""},
	{`events{ certname="a" and(x="b") }`, 1, 25, ""},
	{`events{ a = 1 limit }`, 1, 21, ""},
	{`events{ limit 1 group by a }`, 1, 17, ""},
	{`events{ a = bar }`, 1, 13, ""},
	{`events{ a ~ 1 }`, 1, 13, ""},
	{`events{ a > true }`, 1, 13, ""},
	{`events{ a = 1e5 }`, 1, 14, ""},
	{`events{ a = [] }`, 1, 14, ""},
	{`events{ reports[certname]{} }`, 1, 16, ""},
	{`events{ a is nil }`, 1, 11, ""},
	{`events{ a = "unterminated }`, 1, 28, ""},
	{`events{ a = "x\` + "\n" + `y" }`, 1, 15, ""},
	{`events{ order by asc }`, 1, 18, ""},
	{`events[a b]{}`, 1, 10, ""},
	{`events{ facts.a."b"= 1 }`, 1, 17, ""},
	{"events{\r\n a = }", 2, 6, "PQL parse error at line 2, column 6:\n\n a = }\n     ^\n"},
}

func TestParseErrors(t *testing.T) {
	for _, tc := range parseErrors {
		_, err := pql.Parse(tc.in)
		var pe *pql.ParseError
		if !errors.As(err, &pe) {
			t.Errorf("Parse(%q) = %v, want *ParseError", tc.in, err)
			continue
		}
		if pe.Line != tc.line || pe.Column != tc.col {
			t.Errorf("Parse(%q): at %d:%d, want %d:%d\n%s", tc.in, pe.Line, pe.Column, tc.line, tc.col, pe.Message())
		}
		if tc.firstLines != "" && !strings.HasPrefix(pe.Message(), tc.firstLines) {
			t.Errorf("Parse(%q)\n got %q\nwant prefix %q", tc.in, pe.Message(), tc.firstLines)
		}
		if len(pe.Expected) == 0 {
			t.Errorf("Parse(%q): empty Expected list", tc.in)
		}
	}
}

func TestSemanticErrors(t *testing.T) {
	tests := []struct {
		in      string
		wantErr string
		check   func(error) bool
	}{
		{`events{ certname = "it\x27s" }`, "Unrecognized character escape 'x' (code 120)\n at [Source: (StringReader); line: 1, column: 6]",
			func(err error) bool { var e *pql.StringEscapeError; return errors.As(err, &e) }},
		{`events{ a = "\u12G4" }`, "Unexpected character ('G' (code 71)): expected a hex-digit for character escape sequence\n at [Source: (StringReader); line: 1, column: 7]",
			func(err error) bool { var e *pql.StringEscapeError; return errors.As(err, &e) }},
		{`events{ a = "\u12" }`, "Unexpected character ('\"' (code 34)): expected a hex-digit for character escape sequence\n at [Source: (StringReader); line: 1, column: 7]",
			func(err error) bool { var e *pql.StringEscapeError; return errors.As(err, &e) }},
		{`events{ a = "ok" and b = "é\'" }`, "Unrecognized character escape ''' (code 39)\n at [Source: (StringReader); line: 1, column: 5]",
			func(err error) bool { var e *pql.StringEscapeError; return errors.As(err, &e) }},
		{`events{ limit 1 limit 2 }`, "Multiple 'limit' clauses are not permitted",
			func(err error) bool { var e *pql.ClauseError; return errors.As(err, &e) && e.Clause == "limit" }},
		{`events{ order by a offset 1 order by b }`, "Multiple 'order_by' clauses are not permitted",
			func(err error) bool { var e *pql.ClauseError; return errors.As(err, &e) }},
		{`events{ a in reports[a]{ offset 1 offset 2 } }`, "Multiple 'offset' clauses are not permitted",
			func(err error) bool { var e *pql.ClauseError; return errors.As(err, &e) }},
		{`events{ reports{ a = 1 limit 1 } }`, "Wrong number of args (3) passed to: puppetlabs.puppetdb.pql.transform/transform-subquery",
			func(err error) bool { var e *pql.TransformError; return errors.As(err, &e) }},
	}
	for _, tc := range tests {
		_, err := pql.Parse(tc.in)
		if err == nil {
			t.Errorf("Parse(%q) succeeded, want %q", tc.in, tc.wantErr)
			continue
		}
		if err.Error() != tc.wantErr || !tc.check(err) {
			t.Errorf("Parse(%q) = %T %q, want %q", tc.in, err, err.Error(), tc.wantErr)
		}
	}
}

func TestLongChainsAndNesting(t *testing.T) {
	var b strings.Builder
	b.WriteString("events{ ")
	for i := 0; i < 2000; i++ {
		if i > 0 {
			b.WriteString(" or ")
		}
		b.WriteString(`certname = "h"`)
	}
	b.WriteString(" }")
	v, err := pql.Parse(b.String())
	if err != nil {
		t.Fatal(err)
	}
	if n := len(v.([]any)[2].([]any)); n != 2001 {
		t.Errorf("or chain has %d elements, want 2001", n)
	}
	deep := "events{ " + strings.Repeat("(", 200) + "a = 1" + strings.Repeat(")", 200) + " }"
	if _, err := pql.Parse(deep); err != nil {
		t.Errorf("200 nested parentheses: %v", err)
	}
	// Inputs that are exponential or quadratic without the parser's
	// memoisation and dead-end pruning; each must return promptly.
	for _, q := range []string{
		"events{ facts" + strings.Repeat(".match()", 60) + " = 1 }",
		"events{ facts" + strings.Repeat(".match(a.b)", 60) + " = 1 }",
		"events{ " + strings.Repeat("a = 1 and ", 3000) + " }",
		"events{ " + strings.Repeat("(a = 1 or ", 300) + " }",
		"events{ order by " + strings.Repeat("a , ", 3000) + " }",
		"events[" + strings.Repeat("a, ", 3000) + "]{}",
		"events{ a = [" + strings.Repeat("1, ", 3000) + "] }",
		"events{ " + strings.Repeat("a in events[a]{", 200) + " }",
		"events{ a = " + strings.Repeat("\"\\", 2000) + " }",
	} {
		pql.Parse(q)
	}
	huge := "events{ " + strings.Repeat("(", 100000) + " }"
	if _, err := pql.Parse(huge); err == nil {
		t.Error("unbalanced deep nesting parsed")
	}
}

func FuzzParse(f *testing.F) {
	for _, tc := range specTable {
		f.Add(tc.in)
	}
	for _, tc := range moreTable {
		f.Add(tc.in)
	}
	for _, tc := range parseErrors {
		f.Add(tc.in)
	}
	f.Add(`events{ certname = "it\x27s" }`)
	f.Add(`events{ limit 1 limit 2 }`)
	f.Fuzz(func(t *testing.T, q string) {
		if len(q) > 4096 {
			return
		}
		v, err := pql.Parse(q)
		if err != nil {
			var pe *pql.ParseError
			if errors.As(err, &pe) {
				msg := pe.Message()
				if msg == emptyQuery && strings.TrimSpace(q) == "" {
					return
				}
				if !strings.HasPrefix(msg, "PQL parse error at line ") || pe.Line < 1 || pe.Column < 1 {
					t.Fatalf("bad parse error for %q: %q", q, msg)
				}
			}
			return
		}
		l, ok := v.([]any)
		if !ok || len(l) < 2 || l[0] != "from" {
			t.Fatalf("Parse(%q) = %#v, want a from node", q, v)
		}
		js := jsonv.Compact(v)
		if _, err := jsonv.Parse([]byte(js)); err != nil {
			t.Fatalf("Parse(%q) encodes to invalid JSON %s: %v", q, js, err)
		}
	})
}
