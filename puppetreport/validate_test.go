package puppetreport_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"reportdb/jsonv"
	"reportdb/puppetreport"
)

// baseReport is a small valid format 10 report (testdata/base-format10.json):
// File[/x] has one event, Notify[y] none (dropped), Exec[z] is skipped.
func baseReport(t testing.TB) *jsonv.Object {
	return readJSON(t, "testdata/base-format10.json").(*jsonv.Object)
}

func opts() puppetreport.Options {
	p := "puppet.example.com"
	return puppetreport.Options{ProducerTimestamp: "2024-03-01T09:00:07Z", Producer: &p}
}

// at walks a path of object keys (string) and array indexes (int).
func at(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			v, _ = v.(*jsonv.Object).Get(k)
		case int:
			v = v.([]any)[k]
		}
	}
	return v
}

// set replaces or adds member key of the object at path.
func set(path []any, key string, value any) func(*jsonv.Object) {
	return func(doc *jsonv.Object) { at(doc, path...).(*jsonv.Object).Set(key, value) }
}

// del removes member key of the object at path.
func del(path []any, key string) func(*jsonv.Object) {
	return func(doc *jsonv.Object) {
		o := at(doc, path...).(*jsonv.Object)
		for i, k := range o.Keys {
			if k == key {
				o.Keys = append(o.Keys[:i], o.Keys[i+1:]...)
				o.Values = append(o.Values[:i], o.Values[i+1:]...)
				return
			}
		}
		panic("no member " + key)
	}
}

func parse(s string) any {
	v, err := jsonv.Parse([]byte(s))
	if err != nil {
		panic(err)
	}
	return v
}

var (
	root  = []any{}
	fileX = []any{"resource_statuses", "File[/x]"}
	execZ = []any{"resource_statuses", "Exec[z]"}
	ev0   = []any{"resource_statuses", "File[/x]", "events", 0}
	log0  = []any{"logs", 0}
	mtime = []any{"metrics", "time"}
)

func TestBaseReport(t *testing.T) {
	got, err := puppetreport.Convert(baseReport(t), opts())
	if err != nil {
		t.Fatal(err)
	}
	assertSameJSON(t, "base", got, readJSON(t, "testdata/base-format10.wire8.json"))
}

func TestInvalid(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*jsonv.Object)
		want   string // exact Error() text when it starts with "=", else a substring
	}{
		{"unknown top-level key", set(root, "foo", parse(`1`)), `=report: unknown property "foo"`},
		{"unknown event key", set(ev0, "bogus", nil), `=resource_statuses["File[/x]"].events[0]: unknown property "bogus"`},
		{"unknown status key", set(fileX, "noise", true), `resource_statuses["File[/x]"]: unknown property "noise"`},
		{"unknown log key", set(log0, "extra", "x"), `logs[0]: unknown property "extra"`},
		{"unknown metric category", set([]any{"metrics"}, "foo", parse(`{"name":"foo","label":"Foo","values":[]}`)), `metrics: unknown property "foo"`},
		{"unknown metric category key", set(mtime, "unit", "s"), `metrics.time: unknown property "unit"`},
		{"missing host", del(root, "host"), `=host: missing required property`},
		{"missing time", del(root, "time"), `=time: missing required property`},
		{"missing resource_statuses", del(root, "resource_statuses"), `resource_statuses: missing required property`},
		{"missing noop", del(root, "noop"), `noop: missing required property`},
		{"missing environment", del(root, "environment"), `environment: missing required property`},
		{"missing puppet_version", del(root, "puppet_version"), `puppet_version: missing required property`},
		{"missing event status", del(ev0, "status"), `resource_statuses["File[/x]"].events[0].status: missing required property`},
		{"missing event audited", del(ev0, "audited"), `events[0].audited: missing required property`},
		{"missing event property", del(ev0, "property"), `events[0].property: missing required property`},
		{"missing event time", del(ev0, "time"), `events[0].time: missing required property`},
		{"missing status title", del(fileX, "title"), `resource_statuses["File[/x]"].title: missing required property`},
		{"missing status events", del(fileX, "events"), `resource_statuses["File[/x]"].events: missing required property`},
		{"kept status without time", del(execZ, "time"), `resource_statuses["Exec[z]"].time: missing required property`},
		{"missing log tags", del(log0, "tags"), `logs[0].tags: missing required property`},
		{"missing metric values", del(mtime, "values"), `metrics.time.values: missing required property`},
		{"bad status enum", set(root, "status", "bogus"), `=status: must be one of failed, changed, unchanged; got "bogus"`},
		{"bad event status", set(ev0, "status", "bogus"), `=resource_statuses["File[/x]"].events[0].status: must be one of success, failure, noop, audit; got "bogus"`},
		{"bad log level", set(log0, "level", "warn"), `logs[0].level: must be one of debug, info, notice, warning, err, alert, emerg, crit; got "warn"`},
		{"bad cached_catalog_status", set(root, "cached_catalog_status", "sometimes"), `cached_catalog_status: must be one of not_used, explicitly_requested, on_failure`},
		{"lowercase resource_type", set(fileX, "resource_type", "file"), `resource_statuses["File[/x]"].resource_type: must start with a capital letter`},
		{"time with space", set(root, "time", "2024-03-01 10:00:00.123+01:00"), `time: must be an ISO 8601 date-time`},
		{"time without zone", set(root, "time", "2024-03-01T10:00:00.123456789"), `time: has no zone`},
		{"time with +0100", set(root, "time", "2024-03-01T10:00:00+0100"), `time: must be an ISO 8601`},
		{"time 10 fraction digits", set(root, "time", "2024-03-01T10:00:00.1234567891Z"), `time: has more than 9 fraction digits`},
		{"time Feb 30", set(root, "time", "2024-02-30T10:00:00Z"), `time: is not a valid date and time`},
		{"time as number", set(root, "time", parse(`1709283600`)), `time: must be a string`},
		{"event time garbage", set(ev0, "time", "yesterday"), `events[0].time: must be an ISO 8601`},
		{"log time leap second", set(log0, "time", "2016-12-31T23:59:60Z"), `logs[0].time: is not a valid date and time`},
		{"report_format 9", set(root, "report_format", parse(`9`)), `=report_format: must be 10, 11 or 12; got 9`},
		{"report_format string 9", set(root, "report_format", "9"), `report_format: must be 10, 11 or 12; got "9"`},
		{"report_format 10.0", set(root, "report_format", parse(`10.0`)), `report_format: must be 10, 11 or 12; got 10.0`},
		{"noop yes", set(root, "noop", "yes"), `=noop: must be a boolean; got "yes"`},
		{"noop null", set(root, "noop", nil), `noop: must be a boolean; got null`},
		{"transaction_completed number", set(root, "transaction_completed", parse(`1`)), `transaction_completed: must be a boolean; got 1`},
		{"host number", set(root, "host", parse(`42`)), `host: must be a string; got 42`},
		{"environment null", set(root, "environment", nil), `environment: must be a string; got null`},
		{"resource_statuses array", set(root, "resource_statuses", parse(`[]`)), `=resource_statuses: must be an object; got an array`},
		{"status not object", set([]any{"resource_statuses"}, "File[/x]", "x"), `resource_statuses["File[/x]"]: must be an object; got "x"`},
		{"events not array", set(fileX, "events", parse(`{}`)), `resource_statuses["File[/x]"].events: must be an array; got an object`},
		{"event not object", set(fileX, "events", parse(`[1]`)), `events[0]: must be an object; got 1`},
		{"logs object", set(root, "logs", parse(`{}`)), `logs: must be an array; got an object`},
		{"metrics array", set(root, "metrics", parse(`[]`)), `metrics: must be an object; got an array`},
		{"metric row of 2", set(mtime, "values", parse(`[["total","Total"]]`)), `metrics.time.values[0]: must be a [name, label, value] array; got an array of 2 elements`},
		{"metric value string", set(mtime, "values", parse(`[["total","Total","5"]]`)), `metrics.time.values[0][2]: must be a number; got "5"`},
		{"metric label null", set(mtime, "values", parse(`[["total",null,5]]`)), `metrics.time.values[0][1]: must be a string; got null`},
		{"resources metric float", set([]any{"metrics", "resources"}, "values", parse(`[["total","Total",3.5]]`)), `metrics.resources.values[0][2]: must be an integer; got 3.5`},
		{"metric name mismatch", set(mtime, "name", "times"), `metrics.time.name: must equal its category "time"; got "times"`},
		{"metric total infinite", set(mtime, "values", parse(`[["total","Total",1e400]]`)), `metrics.time.values[0][2]: must be a finite number`},
		{"metric total too big", set(mtime, "values", parse(`[["total","Total",1e12]]`)), `metrics.time.values[0][2]: puts the end time out of range`},
		{"change_count float", set(fileX, "change_count", parse(`1.5`)), `change_count: must be an integer; got 1.5`},
		{"tags element number", set(fileX, "tags", parse(`["a",2]`)), `resource_statuses["File[/x]"].tags[1]: must be a string; got 2`},
		{"containment_path null", set(fileX, "containment_path", nil), `containment_path: must be an array of strings; got null`},
		{"configuration_version float", set(root, "configuration_version", parse(`1.5`)), `configuration_version: must be an integer, a string or null; got 1.5`},
		{"configuration_version bool", set(root, "configuration_version", true), `configuration_version: must be an integer, a string or null; got true`},
		{"status line word", set(fileX, "line", "four"), `resource_statuses["File[/x]"].line: must be an integer`},
		{"log line float", set(log0, "line", parse(`4.5`)), `logs[0].line: must be an integer, a string of digits or null; got 4.5`},
		{"log line too big", set(log0, "line", parse(`99999999999`)), `logs[0].line: must be an integer between`},
		{"redacted string", set(ev0, "redacted", "yes"), `events[0].redacted: must be a boolean or null; got "yes"`},
		{"provider_used number", set(fileX, "provider_used", parse(`1`)), `provider_used: must be a string or null; got 1`},
		{"evaluation_time string", set(fileX, "evaluation_time", "fast"), `evaluation_time: must be a number or null; got "fast"`},
		{"job_id number", set(root, "job_id", parse(`7`)), `job_id: must be a string or null; got 7`},
		{"server_used number", func(d *jsonv.Object) {
			d.Set("report_format", parse(`12`))
			d.Set("server_used", parse(`8140`))
		}, `server_used: must be a string or null; got 8140`},
		{"agent_version differs", set(root, "agent_version", "7.0.0"), `agent_version: must equal puppet_version "6.28.0"`},
		{"resource key mismatch", set(fileX, "resource", "File[/y]"), `resource_statuses["File[/x]"].resource: must equal the resource_statuses property name "File[/x]"; got "File[/y]"`},
		{"duplicate top-level key", func(d *jsonv.Object) {
			d.Keys = append(d.Keys, "host")
			d.Values = append(d.Values, "other")
		}, `=report: duplicate property "host"`},
		{"duplicate status past 32", func(d *jsonv.Object) {
			rs := at(d, "resource_statuses").(*jsonv.Object)
			first, status := rs.Keys[0], rs.Values[0]
			for i := range 40 {
				rs.Keys, rs.Values = append(rs.Keys, fmt.Sprintf("Notify[n%d]", i)), append(rs.Values, status)
			}
			rs.Keys, rs.Values = append(rs.Keys, first), append(rs.Values, status)
		}, `=resource_statuses: duplicate property "File[/x]"`},
		{"event error after a good status", set([]any{"resource_statuses", "Exec[z]"}, "events", parse(`[{"status":"noop"}]`)), `resource_statuses["Exec[z]"].events[0].audited: missing required property`},
		{"error inside a dropped status", set([]any{"resource_statuses", "Notify[y]"}, "skipped", "no"), `resource_statuses["Notify[y]"].skipped: must be a boolean`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc := baseReport(t)
			tc.mutate(doc)
			out, err := puppetreport.Convert(doc, opts())
			if err == nil {
				t.Fatalf("accepted; output %s", jsonv.Compact(out))
			}
			if out != nil {
				t.Errorf("output produced along with error")
			}
			var ve *puppetreport.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("error %T %v, want *ValidationError", err, err)
			}
			if exact, ok := strings.CutPrefix(tc.want, "="); ok {
				if err.Error() != exact {
					t.Errorf("error\n got %q\nwant %q", err.Error(), exact)
				}
			} else if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error\n got %q\nwant it to contain %q", err.Error(), tc.want)
			}
		})
	}
}

func TestNotAnObject(t *testing.T) {
	for _, doc := range []any{nil, "x", []any{}, jsonv.Number("1")} {
		_, err := puppetreport.Convert(doc, opts())
		if err == nil || !strings.HasPrefix(err.Error(), "report: must be an object") {
			t.Errorf("%v: error %v", doc, err)
		}
	}
}

func TestBadProducerTimestamp(t *testing.T) {
	_, err := puppetreport.Convert(baseReport(t), puppetreport.Options{ProducerTimestamp: "now"})
	var ve *puppetreport.ValidationError
	if err == nil || errors.As(err, &ve) || !strings.Contains(err.Error(), "ProducerTimestamp") {
		t.Fatalf("error %v", err)
	}
}

// TestAllowances checks the documented widenings of the seed schema and
// what each gives on the wire.
func TestAllowances(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*jsonv.Object)
		path   []any  // into the wire output
		want   string // compact JSON
	}{
		{"agent_version alias", func(d *jsonv.Object) {
			del(root, "puppet_version")(d)
			d.Set("agent_version", "5.5.22")
		}, []any{"puppet_version"}, `"5.5.22"`},
		{"both versions equal", set(root, "agent_version", "6.28.0"), []any{"puppet_version"}, `"6.28.0"`},
		{"report_format string", set(root, "report_format", "10"), []any{"report_format"}, `10`},
		{"format 11 with both server fields", func(d *jsonv.Object) {
			d.Set("report_format", parse(`11`))
			d.Set("server_used", "puppet:8140")
		}, []any{"report_format"}, `11`},
		// A Puppet 7 server's http and store processors write server_used
		// (read from an older agent's master_used) and keep its format.
		{"format 10 with server_used", set(root, "server_used", "puppet:8140"), []any{"report_format"}, `10`},
		{"format 10 with server_used only", func(d *jsonv.Object) {
			del(root, "master_used")(d)
			d.Set("server_used", "puppet:8140")
		}, []any{"report_format"}, `10`},
		{"format 12 string with server_used only", func(d *jsonv.Object) {
			del(root, "master_used")(d)
			d.Set("report_format", "12")
			d.Set("server_used", nil)
		}, []any{"report_format"}, `12`},
		{"configuration_version null", set(root, "configuration_version", nil), []any{"configuration_version"}, `""`},
		{"configuration_version string", set(root, "configuration_version", "abc123"), []any{"configuration_version"}, `"abc123"`},
		{"configuration_version -0", set(root, "configuration_version", parse(`-0`)), []any{"configuration_version"}, `"0"`},
		{"metrics empty", set(root, "metrics", parse(`{}`)), []any{"end_time"}, `"2024-03-01T10:00:00.123+01:00"`},
		{"metrics absent", del(root, "metrics"), []any{"metrics"}, `[]`},
		{"time metric without total", set(mtime, "values", parse(`[["file","File",1.5]]`)), []any{"end_time"}, `"2024-03-01T10:00:00.123+01:00"`},
		{"integer total", set(mtime, "values", parse(`[["total","Total",2]]`)), []any{"end_time"}, `"2024-03-01T10:00:02.123+01:00"`},
		{"first total wins", set(mtime, "values", parse(`[["total","Total",1],["total","Total",2]]`)), []any{"end_time"}, `"2024-03-01T10:00:01.123+01:00"`},
		{"SPEC example .123 + 5.55", set(root, "time", "2024-03-01T10:00:00.123+01:00"), []any{"end_time"}, `"2024-03-01T10:00:05.672+01:00"`},
		{"negative offset across midnight", func(d *jsonv.Object) {
			d.Set("time", "2024-12-31T23:59:58.999999999-05:30")
		}, []any{"end_time"}, `"2025-01-01T00:00:04.549-05:30"`},
		{"zulu time", set(root, "time", "2024-03-01T09:00:00.5Z"), []any{"start_time"}, `"2024-03-01T09:00:00.500Z"`},
		{"+00:00 kept", set(root, "time", "2024-03-01T09:00:00+00:00"), []any{"start_time"}, `"2024-03-01T09:00:00.000+00:00"`},
		{"-00:00 is UTC", set(root, "time", "2024-03-01T09:00:00.1-00:00"), []any{"start_time"}, `"2024-03-01T09:00:00.100Z"`},
		{"no fraction digits", set(root, "time", "2024-03-01T09:00:00+02:00"), []any{"end_time"}, `"2024-03-01T09:00:05.549+02:00"`},
		{"line as digit string", set(fileX, "line", "12"), []any{"resources", 0, "line"}, `12`},
		{"line null", set(fileX, "line", nil), []any{"resources", 0, "line"}, `null`},
		{"log line string", set(log0, "line", "7"), []any{"logs", 0, "line"}, `7`},
		{"log file absent", del(log0, "file"), []any{"logs", 0, "file"}, `null`},
		{"redacted null", set(ev0, "redacted", nil), []any{"resources", 0, "events", 0, "status"}, `"success"`},
		{"event message and name null", func(d *jsonv.Object) {
			set(ev0, "message", nil)(d)
			set(ev0, "name", nil)(d)
		}, []any{"resources", 0, "events", 0}, `{"status":"success","timestamp":"2024-03-01T10:00:01.500+01:00","name":null,"property":"content","new_value":"{md5}bb","old_value":"{md5}aa","corrective_change":false,"message":null}`},
		{"corrective_change absent", func(d *jsonv.Object) {
			del(ev0, "corrective_change")(d)
			del(fileX, "corrective_change")(d)
			del(root, "corrective_change")(d)
		}, []any{"corrective_change"}, `null`},
		{"event corrective_change absent", del(ev0, "corrective_change"), []any{"resources", 0, "events", 0, "corrective_change"}, `null`},
		{"desired number, previous null", func(d *jsonv.Object) {
			set(ev0, "desired_value", parse(`1e20`))(d)
			set(ev0, "previous_value", nil)(d)
		}, []any{"resources", 0, "events", 0, "new_value"}, `"1.0e+20"`},
		{"previous null is empty", set(ev0, "previous_value", nil), []any{"resources", 0, "events", 0, "old_value"}, `""`},
		{"previous absent is empty", del(ev0, "previous_value"), []any{"resources", 0, "events", 0, "old_value"}, `""`},
		{"desired hash", set(ev0, "desired_value", parse(`{"a":1,"b":null,"c":[true,"x"]}`)), []any{"resources", 0, "events", 0, "new_value"}, `"{\"a\"=>1, \"b\"=>nil, \"c\"=>[true, \"x\"]}"`},
		{"desired boolean", set(ev0, "desired_value", false), []any{"resources", 0, "events", 0, "new_value"}, `"false"`},
		{"historical array", set(ev0, "historical_value", parse(`["a"]`)), []any{"resources", 0, "events", 0, "status"}, `"success"`},
		{"dropped status without time", del([]any{"resource_statuses", "Notify[y]"}, "time"), []any{"resources", 1, "resource_title"}, `"z"`},
		{"unchanged status dropped, skipped kept", func(*jsonv.Object) {}, []any{"resources", 1, "events"}, `[]`},
		{"optional status fields absent", func(d *jsonv.Object) {
			for _, k := range []string{"resource", "provider_used", "file", "line", "evaluation_time", "out_of_sync", "changed", "failed", "failed_to_restart"} {
				del(fileX, k)(d)
			}
		}, []any{"resources", 0, "file"}, `null`},
		{"optional report fields null", func(d *jsonv.Object) {
			for _, k := range []string{"transaction_uuid", "catalog_uuid", "code_id", "job_id", "cached_catalog_status", "master_used", "corrective_change", "logs"} {
				d.Set(k, nil)
			}
		}, nil, ``},
		{"job_id and code_id strings", func(d *jsonv.Object) {
			d.Set("job_id", "j1")
			d.Set("code_id", "c1")
		}, []any{"job_id"}, `"j1"`},
		{"metric floats printed as Ruby does", set(mtime, "values", parse(`[["a","A",1e-5],["b","B",100.0],["c","C",1E2],["d","D",-0],["total","Total",0.0001]]`)), []any{"metrics"},
			`[{"category":"resources","name":"changed","value":1},{"category":"resources","name":"skipped","value":1},{"category":"resources","name":"total","value":3},` +
				`{"category":"time","name":"a","value":1.0e-05},{"category":"time","name":"b","value":100.0},{"category":"time","name":"c","value":100.0},{"category":"time","name":"d","value":0},{"category":"time","name":"total","value":0.0001}]`},
		{"metrics sorted by label bytewise", set([]any{"metrics", "resources"}, "values", parse(`[["total","Total",3],["corrective_change","Corrective change",0],["changed","Changed",1],["failed_to_restart","Failed to restart",0],["failed","Failed",0]]`)), []any{"metrics"},
			`[{"category":"resources","name":"changed","value":1},{"category":"resources","name":"corrective_change","value":0},{"category":"resources","name":"failed","value":0},{"category":"resources","name":"failed_to_restart","value":0},{"category":"resources","name":"total","value":3},` +
				`{"category":"time","name":"config_retrieval","value":0.5},{"category":"time","name":"file","value":0.25},{"category":"time","name":"total","value":5.55}]`},
		{"producer nil", func(*jsonv.Object) {}, nil, ``},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc := baseReport(t)
			tc.mutate(doc)
			o := opts()
			if tc.name == "producer nil" {
				o.Producer = nil
			}
			out, err := puppetreport.Convert(doc, o)
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Keys) != 21 {
				t.Fatalf("%d keys", len(out.Keys))
			}
			if tc.name == "producer nil" {
				if p, _ := out.Get("producer"); p != nil {
					t.Errorf("producer %v", p)
				}
				return
			}
			if tc.path == nil {
				return
			}
			if got := jsonv.Compact(at(out, tc.path...)); got != tc.want {
				t.Errorf("%v\n got %s\nwant %s", tc.path, got, tc.want)
			}
		})
	}
}

func ExampleConvert() {
	doc, _ := jsonv.Parse([]byte(`{"host":"web01","time":"2024-03-01T10:00:00.123456789+01:00",
	 "configuration_version":1709283600,"report_format":12,"puppet_version":"7.23.0",
	 "status":"unchanged","transaction_completed":true,"noop":false,"noop_pending":false,
	 "environment":"production","logs":[],"resource_statuses":{},
	 "metrics":{"time":{"name":"time","label":"Time","values":[["total","Total",2.5]]}}}`))
	out, err := puppetreport.Convert(doc, puppetreport.Options{ProducerTimestamp: "2024-03-01T09:00:05Z"})
	fmt.Println(jsonv.Compact(out), err)
	// Output:
	// {"certname":"web01","job_id":null,"puppet_version":"7.23.0","report_format":12,"configuration_version":"1709283600","producer_timestamp":"2024-03-01T09:00:05.000Z","start_time":"2024-03-01T10:00:00.123+01:00","end_time":"2024-03-01T10:00:02.623+01:00","environment":"production","transaction_uuid":null,"status":"unchanged","noop":false,"noop_pending":false,"corrective_change":null,"logs":[],"metrics":[{"category":"time","name":"total","value":2.5}],"resources":[],"catalog_uuid":null,"code_id":null,"cached_catalog_status":null,"producer":null} <nil>
}
