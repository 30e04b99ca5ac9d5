package puppetreport_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reportdb/jsonv"
	"reportdb/puppetreport"
)

// puppet7Dir holds real Puppet 7.23 reports (see its README.md).
const puppet7Dir = "../testdata/puppet7"

const sampleYAML = puppet7Dir + "/yaml/yaml01.example.com-202611212344.yaml"

func parseYAMLFile(t testing.TB, path string) any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := puppetreport.ParseYAML(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return doc
}

// TestParseYAMLSample reads the real store-processor YAML of a failed run
// (Puppet 7.23) and checks it against what the YAML says.
func TestParseYAMLSample(t *testing.T) {
	doc := parseYAMLFile(t, sampleYAML)
	// Puppet itself, loading this YAML and rendering the report as JSON
	// (gen-yaml.rb), gives exactly the same tree, key order and number text
	// included.
	assertSameJSON(t, "yaml01 vs Ruby's render(:json)", doc, readJSON(t, puppet7Dir+"/yaml/yaml01.example.com-202611212344.ruby.json"))

	if got := at(doc, "time"); got != "2026-11-21T23:44:45.567939892+00:00" {
		t.Errorf("time %v", got)
	}
	if got := at(doc, "configuration_version"); got != jsonv.Number("1795304685") {
		t.Errorf("configuration_version %#v, want the integer", got)
	}
	if got := at(doc, "metrics", "time", "values", 3, 2); got != jsonv.Number("0.00020075399999999998") {
		t.Errorf("time/schedule %#v", got)
	}
	if got := at(doc, "logs", 0, "file"); got != nil {
		t.Errorf("logs[0].file %#v, want null", got)
	}
	if got := at(doc, "resource_statuses", "Exec[failing-step]", "events", 0, "desired_value"); jsonv.Compact(got) != `["0"]` {
		t.Errorf("desired_value %s", jsonv.Compact(got))
	}

	out, err := puppetreport.Convert(doc, opts())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path []any
		want any
	}{
		{[]any{"certname"}, "yaml01.example.com"},
		{[]any{"status"}, "failed"},
		{[]any{"noop"}, false},
		{[]any{"noop_pending"}, true},
		{[]any{"configuration_version"}, "1795304685"},
		{[]any{"report_format"}, jsonv.Number("12")},
		{[]any{"puppet_version"}, "7.23.0"},
		{[]any{"environment"}, "production"},
		{[]any{"transaction_uuid"}, "fdb90771-2a83-4e8e-b078-bc5798def5ce"},
		{[]any{"catalog_uuid"}, "7c8380bc-3480-4c90-9152-d5749bb02fb1"},
		{[]any{"cached_catalog_status"}, "not_used"},
		{[]any{"code_id"}, nil},
		{[]any{"start_time"}, "2026-11-21T23:44:45.567+00:00"},
		// time + metrics.time.total 0.02403108 = 23:44:45.591970972
		{[]any{"end_time"}, "2026-11-21T23:44:45.591+00:00"},
		{[]any{"logs", 3, "level"}, "err"},
		{[]any{"logs", 3, "line"}, jsonv.Number("4")},
		{[]any{"logs", 3, "time"}, "2026-11-21T23:44:45.586+00:00"},
		// kept: Notify (success), Exec (failure), after-fail (skipped), noop-me (noop)
		{[]any{"resources", 0, "resource_title"}, "hello from yaml"},
		{[]any{"resources", 1, "resource_type"}, "Exec"},
		{[]any{"resources", 1, "events", 0, "status"}, "failure"},
		{[]any{"resources", 1, "events", 0, "new_value"}, `["0"]`},
		{[]any{"resources", 1, "events", 0, "old_value"}, "notrun"},
		{[]any{"resources", 1, "events", 0, "name"}, "executed_command"},
		{[]any{"resources", 2, "resource_title"}, "/srv/after-fail"},
		{[]any{"resources", 2, "skipped"}, true},
		{[]any{"resources", 3, "events", 0, "status"}, "noop"},
		{[]any{"resources", 3, "events", 0, "timestamp"}, "2026-11-21T23:44:45.587+00:00"},
		{[]any{"resources", 3, "timestamp"}, "2026-11-21T23:44:45.587+00:00"},
	} {
		if got := at(out, c.path...); got != c.want {
			t.Errorf("%v = %#v, want %#v", c.path, got, c.want)
		}
	}
	if n := len(at(out, "logs").([]any)); n != 8 {
		t.Errorf("%d logs, want 8", n)
	}
	res := at(out, "resources").([]any)
	events := 0
	for _, r := range res {
		events += len(at(r, "events").([]any))
	}
	if len(res) != 4 || events != 3 {
		t.Errorf("%d resources with %d events, want 4 with 3 (of 12 statuses)", len(res), events)
	}
	// metrics: categories in document order, rows sorted by label
	var rows []string
	for _, m := range at(out, "metrics").([]any) {
		rows = append(rows, at(m, "category").(string)+"/"+at(m, "name").(string)+"="+string(at(m, "value").(jsonv.Number)))
	}
	want := "resources/changed=1 resources/corrective_change=0 resources/failed=1 resources/failed_to_restart=0 " +
		"resources/out_of_sync=3 resources/restarted=0 resources/scheduled=0 resources/skipped=1 resources/total=12 " +
		"time/catalog_application=0.02100799999971059 time/config_retrieval=0.098945862 time/exec=0.009702806 " +
		"time/file=0.00104974 time/filebucket=4.3061e-05 time/notify=0.001030706 time/schedule=0.00020075399999999998 " +
		"time/total=0.02403108 time/transaction_evaluation=0.016672400000061316 " +
		"changes/total=1 events/failure=1 events/noop=1 events/success=1 events/total=3"
	if got := strings.Join(rows, " "); got != want {
		t.Errorf("metrics\n got %s\nwant %s", got, want)
	}
}

// puppet7Pairs lists the Puppet JSON reports with the YAML Puppet generated
// from them (gen-yaml.rb).
func puppet7Pairs(t *testing.T, suffix string) [][2]string {
	var pairs [][2]string
	for _, sub := range []string{"format12", "apply"} {
		ys, _ := filepath.Glob(filepath.Join(puppet7Dir, sub, "*"+suffix))
		for _, y := range ys {
			if suffix == ".yaml" && strings.HasSuffix(y, ".ivars.yaml") {
				continue
			}
			pairs = append(pairs, [2]string{strings.TrimSuffix(y, suffix) + ".json", y})
		}
	}
	if len(pairs) == 0 {
		t.Fatalf("no *%s in %s", suffix, puppet7Dir)
	}
	return pairs
}

// TestParseYAMLMatchesJSON: for every real report, the YAML Puppet writes
// (Report#to_yaml, what the http processor POSTs) and the instance-variable
// dump of the same report both parse to exactly Puppet's own report JSON,
// and therefore convert identically.
func TestParseYAMLMatchesJSON(t *testing.T) {
	pairs := append(puppet7Pairs(t, ".yaml"), puppet7Pairs(t, ".ivars.yaml")...)
	if len(pairs) != 12 {
		t.Errorf("%d YAML fixtures, want 10 + 2", len(pairs))
	}
	for _, p := range pairs {
		want := readJSON(t, p[0])
		got := parseYAMLFile(t, p[1])
		assertSameJSON(t, p[1], got, want)
		wo, err := puppetreport.Convert(want, opts())
		if err != nil {
			t.Errorf("%s: %v", p[0], err)
			continue
		}
		got = parseYAMLFile(t, p[1]) // Convert may not share the tree
		go2, err := puppetreport.Convert(got, opts())
		if err != nil {
			t.Errorf("%s: %v", p[1], err)
			continue
		}
		assertSameJSON(t, p[1]+" converted", go2, wo)
	}
}

// TestParseYAMLIvars checks the instance-variable form in detail: symbols,
// tag sets, YAML timestamps and dropped instance variables.
func TestParseYAMLIvars(t *testing.T) {
	y := `--- !ruby/object:Puppet::Transaction::Report
kind: apply
host: h.example.com
time: 2024-03-01 10:00:00.123456789123 +01:00
external_times: {}
logs:
- !ruby/object:Puppet::Util::Log
  level: :notice
  message: hi
  source: Puppet
  tags: !ruby/object:Puppet::Util::TagSet
    hash:
      notice: true
      other: true
  time: 2024-03-01 09:00:00.5 Z
  remote: true
metrics:
  time: !ruby/object:Puppet::Util::Metric
    name: time
    label: Time
    values:
    - - :total
      - Total
      - 1.5
resource_statuses:
  File[/x]: !ruby/object:Puppet::Resource::Status
    resource: File[/x]
    source_description: /Stage[main]/File[/x]
    time: 2024-03-01 10:00:00 +01:00
    tags: !ruby/object:Set
      hash:
        file: true
    events:
    - !ruby/object:Puppet::Transaction::Event
      name: !ruby/sym content_changed
      status: success
      default_log_level: :notice
      time: 2024-03-01 10:00:00.000000001 +01:00
      desired_value: !binary |-
        //4=
report_format: 12
server_used:
catalog_uuid: c
`
	doc, err := puppetreport.ParseYAML([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"host":"h.example.com","time":"2024-03-01T10:00:00.123456789+01:00","configuration_version":null,` +
		`"transaction_uuid":null,"report_format":12,"puppet_version":null,"status":null,"transaction_completed":null,` +
		`"noop":null,"noop_pending":null,"environment":null,` +
		`"logs":[{"level":"notice","message":"hi","source":"Puppet","tags":["notice","other"],"time":"2024-03-01T09:00:00.500000000Z","file":null,"line":null}],` +
		`"metrics":{"time":{"name":"time","label":"Time","values":[["total","Total",1.5]]}},` +
		`"resource_statuses":{"File[/x]":{"title":null,"file":null,"line":null,"resource":"File[/x]","resource_type":null,` +
		`"provider_used":null,"containment_path":null,"evaluation_time":null,"tags":["file"],"time":"2024-03-01T10:00:00.000000000+01:00",` +
		`"failed":null,"failed_to_restart":false,"changed":null,"out_of_sync":null,"skipped":null,"change_count":null,"out_of_sync_count":null,` +
		`"events":[{"audited":null,"property":null,"previous_value":null,"desired_value":"//4=","historical_value":null,"message":null,` +
		`"name":"content_changed","status":"success","time":"2024-03-01T10:00:00.000000001+01:00","redacted":null,"corrective_change":null}],` +
		`"corrective_change":null}},"corrective_change":null,"catalog_uuid":"c"}`
	if got := jsonv.Compact(doc); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestParseYAMLScalars: plain scalars are typed as Psych (Ruby 3.1) types
// them; expectations were produced by Ruby itself.
func TestParseYAMLScalars(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`hello world`, `"hello world"`},
		{`7.23.0`, `"7.23.0"`},
		{`7.23`, `7.23`},
		{`1795304685`, `1795304685`},
		{`123456789012345678901234567890`, `123456789012345678901234567890`},
		{`-0`, `0`},
		{`+12`, `12`},
		{`1_000`, `1000`},
		{`1,000`, `1000`},
		{`0777`, `511`},
		{`00`, `0`},
		{`09`, `"09"`},
		{`0x1F`, `31`},
		{`-0b101`, `-5`},
		{`0o17`, `"0o17"`},
		{`1__0`, `"1__0"`},
		{`1e5`, `"1e5"`},
		{`1.`, `1.0`},
		{`1.E+5`, `100000.0`},
		{`.5`, `0.5`},
		{`-.5`, `-0.5`},
		{`+.`, `"+."`},
		{`-0.0`, `-0.0`},
		{`4.3061e-05`, `4.3061e-05`},
		{`0.00020075399999999998`, `0.00020075399999999998`},
		{`1:30`, `5400`},
		{`-1:30:00`, `-1800`},
		{`1:30.5`, `5430.0`},
		{`12:00`, `43200`},
		{`yes`, `true`},
		{`On`, `true`},
		{`No`, `false`},
		{`OFF`, `false`},
		{`y`, `"y"`},
		{`tru`, `"tru"`},
		{`nUlL`, `null`},
		{`~`, `null`},
		{`é`, `"é"`},
		{`:foo`, `"foo"`},
		{`:'a b'c`, `"a b"`},
		{`:"x"`, `"x"`},
		{`'12'`, `"12"`},
		{`"true"`, `"true"`},
		{`!ruby/sym notice`, `"notice"`},
		{`!ruby/symbol notice`, `"notice"`},
		{`!!str 12`, `"12"`},
		{`!!float 1`, `1.0`},
		{`!binary "//4="`, `"//4="`},
		{`2001-1-5`, `"2001-01-05"`},
		{`2001-02-29`, `"2001-02-29"`},
		{`2026-11-21 23:44:45.567939892 +00:00`, `"2026-11-21T23:44:45.567939892+00:00"`},
		{`2026-11-21 23:44:45.567939892 Z`, `"2026-11-21T23:44:45.567939892Z"`},
		{`'2026-11-21T23:44:45.567939892+00:00'`, `"2026-11-21T23:44:45.567939892+00:00"`},
		{`2001-1-1t1:00:00.1234567891234Z`, `"2001-01-01T01:00:00.123456789Z"`},
		{`2001-04-31 10:00:00 +01:00`, `"2001-05-01T10:00:00.000000000+01:00"`},
		{`2001-02-29 24:00:00 Z`, `"2001-03-02T00:00:00.000000000Z"`},
		{`2001-01-01 24:00:01 Z`, `"2001-01-01 24:00:01 Z"`},
		{`2001-01-01 23:59:60 Z`, `"2001-01-02T00:00:00.000000000Z"`},
		{`2001-01-01 10:00:00 +0530`, `"2001-01-01T10:00:00.000000000+05:30"`},
		{`2001-01-01 10:00:00 +530`, `"2001-01-01 10:00:00 +530"`},
		{`2001-01-01 10:00:00 -5`, `"2001-01-01T10:00:00.000000000-05:00"`},
		{`2001-01-01 10:00:00 +24`, `"2001-01-01 10:00:00 +24"`},
		{`2001-01-01 10:00:00`, `"2001-01-01T10:00:00.000000000+00:00"`},
		{`2001-13-01 10:00:00 Z`, `"2001-13-01 10:00:00 Z"`},
	} {
		doc, err := puppetreport.ParseYAML([]byte("--- !ruby/object:Puppet::Transaction::Report\nv: " + c.in + "\n"))
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if got := jsonv.Compact(at(doc, "v")); got != c.want {
			t.Errorf("%s: got %s, want %s", c.in, got, c.want)
		}
	}
	// keys are stringified as Ruby's JSON generator does (to_s)
	doc, err := puppetreport.ParseYAML([]byte("--- !ruby/object:Puppet::Transaction::Report\nv:\n  :sym: 1\n  2: 2\n  ~: 3\n  yes: 4\n  1.50: 5\n  2001-01-01 10:00:00 Z: 6\n  2001-01-01 10:00:00 +01:00: 7\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := jsonv.Compact(at(doc, "v")), `{"sym":1,"2":2,"":3,"true":4,"1.5":5,"2001-01-01 10:00:00 UTC":6,"2001-01-01 10:00:00 +0100":7}`; got != want {
		t.Errorf("keys: got %s, want %s", got, want)
	}
}

// TestParseYAMLAliases: a few aliases are fine (and expanded); cycles,
// bombs and their expansions beyond the limits are not.
func TestParseYAMLAliases(t *testing.T) {
	doc, err := puppetreport.ParseYAML([]byte("--- !ruby/object:Puppet::Transaction::Report\na: &t [x, {k: &s v}]\nb: *t\nc: *s\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := jsonv.Compact(at(doc, "a")) + jsonv.Compact(at(doc, "b")) + jsonv.Compact(at(doc, "c")); got != `["x",{"k":"v"}]["x",{"k":"v"}]"v"` {
		t.Errorf("got %s", got)
	}

	var bomb strings.Builder
	bomb.WriteString("--- !ruby/object:Puppet::Transaction::Report\na0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i <= 9; i++ {
		bomb.WriteString("a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [")
		for j := 0; j < 9; j++ {
			if j > 0 {
				bomb.WriteString(", ")
			}
			bomb.WriteString("*a" + string(rune('0'+i-1)))
		}
		bomb.WriteString("]\n")
	}
	wide := "--- !ruby/object:Puppet::Transaction::Report\nbig: &b [" + strings.Repeat("x, ", 2000) + "x]\nuse: [" + strings.Repeat("*b, ", 200) + "*b]\n"
	start := time.Now()
	for _, c := range []struct{ name, in, want string }{
		{"bomb", bomb.String(), "more than 256 alias expansions"},
		{"cycle", "--- !ruby/object:Puppet::Transaction::Report\na: &a [x, *a]\n", "alias *a refers to a node that contains it"},
		{"wide", wide, "aliases expand to more than 100000 nodes"},
		{"many", "--- !ruby/object:Puppet::Transaction::Report\na: &a x\nb: [" + strings.Repeat("*a, ", 300) + "*a]\n", "more than 256 alias expansions"},
	} {
		_, err := puppetreport.ParseYAML([]byte(c.in))
		var ye *puppetreport.YAMLError
		if !errors.As(err, &ye) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want a YAMLError with %q", c.name, err, c.want)
		}
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("alias checks took %v", d)
	}
}

// TestParseYAMLRejects: everything that is not a Puppet report in YAML, or
// asks for anything but plain data and the report classes, is an error
// that says why.
func TestParseYAMLRejects(t *testing.T) {
	const hdr = "--- !ruby/object:Puppet::Transaction::Report\n"
	deep := hdr + "v: " + strings.Repeat("[", 600) + strings.Repeat("]", 600) + "\n"
	for _, c := range []struct{ name, in, want string }{
		{"empty", "", "not a Puppet report: the YAML input is empty"},
		{"null", "---\n", "not a Puppet report: the YAML document is null"},
		{"malformed", "a: b: c\n", "not valid YAML: mapping values are not allowed in this context"},
		{"unclosed", hdr + "a: [1, 2\n", "not valid YAML"},
		{"scalar", "--- hello\n", "not a Puppet report: the YAML document is a scalar"},
		{"sequence", "- 1\n", "not a Puppet report: the YAML document is a sequence"},
		{"untagged", "host: h\n", "not a Puppet report: the YAML document is an untagged mapping; a report is a mapping tagged !ruby/object:Puppet::Transaction::Report"},
		{"other class", "--- !ruby/object:Puppet::Node::Facts\nname: h\n", "a mapping tagged !ruby/object:Puppet::Node::Facts"},
		{"JSON", `{"host": "h"}`, "an untagged mapping"},
		{"two documents", hdr + "host: h\n--- 1\n", "line 3: more than one YAML document"},
		{"unknown object", hdr + "resource_statuses:\n  X[y]:\n    events:\n    - desired_value: !ruby/object:Gem::Installer\n        i: x\n",
			`line 5, resource_statuses["X[y]"].events[0].desired_value: unsupported YAML tag !ruby/object:Gem::Installer`},
		{"unknown ivar object", hdr + "logs:\n- !ruby/object:Puppet::Util::Log\n  level: :err\n  source: !ruby/object:Puppet::Type::File {}\n",
			"logs[0].source: unsupported YAML tag !ruby/object:Puppet::Type::File"},
		{"ruby hash", hdr + "metrics: !ruby/hash:Foo {}\n", "unsupported YAML tag !ruby/hash:Foo"},
		{"ruby array", hdr + "logs: !ruby/array:Foo []\n", "unsupported YAML tag !ruby/array:Foo"},
		{"regexp", hdr + "host: !ruby/regexp /x/\n", "unsupported YAML tag !ruby/regexp"},
		{"class", hdr + "host: !ruby/class Kernel\n", "unsupported YAML tag !ruby/class"},
		{"string subclass", hdr + "host: !ruby/string:Foo x\n", "unsupported YAML tag !ruby/string:Foo"},
		{"long form tag", "--- !<tag:ruby.yaml.org,2002:object:ERB>\nsrc: x\n", "a mapping tagged !ruby/object:ERB"},
		{"wrong class", hdr + "resource_statuses:\n  X[y]: !ruby/object:Puppet::Util::Log {}\n", `resource_statuses["X[y]"]: expected a Puppet::Resource::Status here; got !ruby/object:Puppet::Util::Log`},
		{"class out of place", hdr + "host: !ruby/object:Puppet::Util::Metric {}\n", "host: a Puppet::Util::Metric is not expected here"},
		{"nested report", hdr + "logs: [!ruby/object:Puppet::Transaction::Report {}]\n", "expected a Puppet::Util::Log here"},
		{"bad tag set", hdr + "tags: !ruby/object:Puppet::Util::TagSet {a: 1}\n", "a Puppet::Util::TagSet must be {hash: {element: true, ...}}"},
		{"merge key", hdr + "a: &a {x: 1}\nb:\n  <<: *a\n", "YAML merge keys (<<) are not supported"},
		{"complex key", hdr + "? [a]\n: 1\n", "mapping keys must be scalars"},
		{"duplicate key", hdr + "host: a\nhost: b\n", `line 3: duplicate key "host"`},
		{"duplicate after to_s", hdr + "v:\n  :a: 1\n  a: 2\n", `duplicate key "a"`},
		{"infinity", hdr + "v: .inf\n", ".inf (infinity or NaN) has no JSON representation"},
		{"float overflow", hdr + "v: 1.0e+400\n", "out of the range of a float"},
		{"bad integer", hdr + "v: 0x_\n", "invalid integer 0x_"},
		{"bad int tag", hdr + "v: !!int abc\n", `!!int "abc" is not a valid int`},
		{"deep", deep, "nesting depth exceeds the maximum allowed (512)"},
	} {
		_, err := puppetreport.ParseYAML([]byte(c.in))
		var ye *puppetreport.YAMLError
		if !errors.As(err, &ye) {
			t.Errorf("%s: got %v, want a *YAMLError", c.name, err)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got %s\nwant ...%s...", c.name, err, c.want)
		}
	}
}

// TestParseYAMLThenConvertRejects: YAML that is well-formed but not a
// valid report is left to Convert, whose errors name the field.
func TestParseYAMLThenConvertRejects(t *testing.T) {
	data, err := os.ReadFile(sampleYAML)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ from, to, want string }{
		{"status: failed\n", "status: :weird\n", `status: must be one of failed, changed, unchanged; got "weird"`},
		{"report_format: 12\n", "report_format: 3\n", "report_format: must be 10, 11 or 12; got 3"},
		{"noop: false\n", "noop: 'false'\n", `noop: must be a boolean; got "false"`},
		{"noop: false\n", "noop: false\nbogus: 1\n", `report: unknown property "bogus"`},
		{"time: '2026-11-21T23:44:45.567939892+00:00'\n", "time: 2026-11-21\n", "time: must be an ISO 8601 date-time"},
	} {
		y := strings.Replace(string(data), c.from, c.to, 1)
		if y == string(data) {
			t.Fatalf("sample lacks %q", c.from)
		}
		doc, err := puppetreport.ParseYAML([]byte(y))
		if err != nil {
			t.Errorf("%s: ParseYAML: %v", c.to, err)
			continue
		}
		if _, err := puppetreport.Convert(doc, opts()); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.to, err, c.want)
		}
	}
}

// FuzzParseYAML: ParseYAML never panics, returns a tree or a *YAMLError,
// and whatever it returns is valid JSON that Convert handles without
// panicking.
func FuzzParseYAML(f *testing.F) {
	data, err := os.ReadFile(sampleYAML)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	const hdr = "--- !ruby/object:Puppet::Transaction::Report\n"
	f.Add([]byte(hdr + "host: h\ntime: 2024-03-01 10:00:00.5 +01:00\nreport_format: 12\nlogs:\n- !ruby/object:Puppet::Util::Log\n  level: :notice\n  tags: !ruby/object:Puppet::Util::TagSet\n    hash:\n      a: true\nmetrics: {}\nresource_statuses: {}\n"))
	f.Add([]byte(hdr + "a: &a [x, *a]\nb: &b {k: *b}\n"))
	f.Add([]byte(hdr + "a: &a [1, 2]\nb: [*a, *a, *a]\nc: !binary aGk=\nd: :sym\ne: 1:30\n"))
	f.Add([]byte(hdr + "resource_statuses:\n  X[y]: !ruby/object:Puppet::Resource::Status\n    events:\n    - !ruby/object:Puppet::Transaction::Event {name: :x}\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		doc, err := puppetreport.ParseYAML(in)
		if err != nil {
			var ye *puppetreport.YAMLError
			if !errors.As(err, &ye) || doc != nil {
				t.Fatalf("error %T %v with doc %v", err, err, doc)
			}
			return
		}
		if _, err := jsonv.Parse([]byte(jsonv.Compact(doc))); err != nil {
			t.Fatalf("result is not valid JSON: %v", err)
		}
		puppetreport.Convert(doc, opts())
	})
}

// TestPuppet7Wire: for every real report with the store-report body the
// real puppetdb terminus built for it (puppet apply, in process), Convert
// of Puppet's JSON and of Puppet's YAML of the same report give that body,
// except that File content checksums are base64 in the JSON/YAML (binary
// strings) where the in-process terminus saw the raw {sha256} text: exactly
// those new_values are base64 of the terminus's.
func TestPuppet7Wire(t *testing.T) {
	wantB64 := map[string]int{"web01-run2": 3, "app01-run2": 1, "db01-run3-noop": 1}
	pairs := puppet7Pairs(t, ".pdb-wire.json")
	if len(pairs) != 8 {
		t.Errorf("%d .pdb-wire.json files, want 8", len(pairs))
	}
	for _, p := range pairs {
		wire := readJSON(t, p[1]).(*jsonv.Object)
		pt, _ := wire.Get("producer_timestamp")
		pr, _ := wire.Get("producer")
		opt := puppetreport.Options{ProducerTimestamp: pt.(string)}
		if s, ok := pr.(string); ok {
			opt.Producer = &s
		}
		base := strings.TrimSuffix(p[0], ".json")
		for _, src := range []struct {
			name string
			doc  any
		}{{p[0], readJSON(t, p[0])}, {base + ".yaml", parseYAMLFile(t, base+".yaml")}} {
			got, err := puppetreport.Convert(src.doc, opt)
			if err != nil {
				t.Errorf("%s: %v", src.name, err)
				continue
			}
			if n, want := undoBase64NewValues(got, wire), wantB64[filepath.Base(base)]; n != want {
				t.Errorf("%s: %d base64 new_values, want %d", src.name, n, want)
			}
			assertSameJSON(t, src.name, got, wire)
		}
	}
}
