package wire_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"reportdb/internal/testcorpus"
	"reportdb/jsonv"
	"reportdb/wire"
)

func TestHashWorkedExample(t *testing.T) {
	// SPEC §6.2: computed by PuppetDB's own code.
	payload := mustParse(t, `{"certname":"host1.example.com","puppet_version":"7.23.0","report_format":12,
	 "configuration_version":"1700000000","start_time":"2024-03-01T10:00:00.123456+01:00",
	 "end_time":"2024-03-01T09:00:05.5Z","producer_timestamp":"2024-03-01T09:00:06.000Z",
	 "transaction_uuid":"d2f3c9a0-1b2c-4d5e-8f90-1234567890ab","producer":null,"corrective_change":null,
	 "noop":false,"noop_pending":null,"catalog_uuid":null,"code_id":null,"cached_catalog_status":null,
	 "environment":"production","status":"changed","metrics":[],"logs":[],"resources":[]}`)
	r, err := wire.Decode(8, payload, 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := "4832b7ba37e691db5dd6f728a362853bedbff3e8"; r.Hash != want {
		t.Fatalf("hash = %s, want %s", r.Hash, want)
	}
	if got := wire.FormatMillis(r.StartTime); got != "2024-03-01T09:00:00.123Z" {
		t.Errorf("start_time = %s", got)
	}
}

func mustParse(t *testing.T, s string) any {
	t.Helper()
	v, err := jsonv.Parse([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestCorpusHashesMatchGoldens decodes every wire v8 report of the corpus and
// checks that each report hash appearing in PuppetDB's recorded answers is
// produced, and that the stored event count is PuppetDB's.
func TestCorpusHashesMatchGoldens(t *testing.T) {
	m, dir := testcorpus.LoadManifest(t)
	hashes := map[string]bool{}
	events := 0
	for _, s := range m.Submissions {
		payload := mustParse(t, string(testcorpus.ReadFile(t, filepath.Join(dir, s.Wire8))))
		r, err := wire.Decode(8, payload, 1)
		if err != nil {
			t.Fatalf("%s: %v", s.Wire8, err)
		}
		if !hashes[r.Hash] {
			events += len(r.Events)
		}
		hashes[r.Hash] = true
	}
	if len(hashes) != m.Reports {
		t.Errorf("distinct hashes = %d, want %d reports", len(hashes), m.Reports)
	}
	if events != 2501 {
		t.Errorf("stored events = %d, want 2501 (PuppetDB's count)", events)
	}
	re := regexp.MustCompile(`"(?:hash|report)":\s*"([0-9a-f]{40})"`)
	seen := 0
	for _, c := range testcorpus.LoadCases(t) {
		for _, mm := range re.FindAllStringSubmatch(string(c.Expect.Body), -1) {
			seen++
			if !hashes[mm[1]] {
				t.Fatalf("case %s: golden hash %s not produced by any corpus report", c.ID, mm[1])
			}
		}
	}
	if seen < 100 {
		t.Fatalf("only %d golden hashes found; the goldens should contain many", seen)
	}
}

func TestDecodeRejects(t *testing.T) {
	base := `{"certname":"a","puppet_version":"7","report_format":12,"configuration_version":"1",
	"start_time":"2024-03-01T10:00:00Z","end_time":"2024-03-01T10:00:01Z","producer_timestamp":"2024-03-01T10:00:02Z",
	"producer":null,"corrective_change":null,"noop":false,"noop_pending":null,"transaction_uuid":null,
	"catalog_uuid":null,"code_id":null,"cached_catalog_status":null,"environment":"production",
	"status":"changed","metrics":[],"logs":[],"resources":%s%s}`
	res := `[{"skipped":false,"timestamp":"2024-03-01T10:00:00Z","resource_type":"File","resource_title":"/x","file":null,"line":null,"containment_path":null,"corrective_change":null,"events":[%s]}]`
	ev := `{"status":"success","timestamp":"2024-03-01T10:00:00Z","property":"ensure","new_value":"a","old_value":"b","message":null,"corrective_change":null%s}`
	build := func(resources, extra string) string {
		return strings.Replace(strings.Replace(base, "%s", resources, 1), "%s", extra, 1)
	}
	ok := build(strings.Replace(res, "%s", strings.Replace(ev, "%s", "", 1), 1), "")
	if _, err := wire.Decode(8, mustParse(t, ok), 0); err != nil {
		t.Fatalf("valid report rejected: %v", err)
	}
	cases := []struct{ name, doc, want string }{
		{"unknown top key", build("[]", `,"server_used":"x"`), "server_used: unknown key"},
		{"unknown event key", build(strings.Replace(res, "%s", strings.Replace(ev, "%s", `,"foo":1`, 1), 1), ""), "resources[0].events[0].foo: unknown key"},
		{"missing producer", strings.Replace(ok, `"producer":null,`, "", 1), "producer: missing required key"},
		{"format as string", strings.Replace(ok, `"report_format":12`, `"report_format":"12"`, 1), "report_format: must be an integer"},
		{"null environment", strings.Replace(ok, `"environment":"production"`, `"environment":null`, 1), "environment: must not be null"},
		{"bad type", build("[]", `,"type":"foo"`), "type: must be"},
		{"zone-less time", strings.Replace(ok, `"start_time":"2024-03-01T10:00:00Z"`, `"start_time":"2024-03-01T10:00:00"`, 1), "start_time: not a valid date-time"},
		{"offset without colon", strings.Replace(ok, `"start_time":"2024-03-01T10:00:00Z"`, `"start_time":"2024-03-01T10:00:00+0100"`, 1), "start_time: not a valid date-time"},
		{"bad uuid", strings.Replace(ok, `"transaction_uuid":null`, `"transaction_uuid":"nope"`, 1), "transaction_uuid: not a valid UUID"},
		{"line float", strings.Replace(ok, `"file":null,"line":null`, `"file":null,"line":1.5`, 1), "resources[0].line: must be an integer"},
		{"metric without value", build("[]", "") + "", ""},
		{"long certname", strings.Replace(ok, `"certname":"a"`, `"certname":"`+strings.Repeat("a", 256)+`"`, 1),
			"certname: is 256 bytes long, longer than the 255 bytes stored for it"},
		{"long environment", strings.Replace(ok, `"environment":"production"`, `"environment":"`+strings.Repeat("e", 300)+`"`, 1),
			"environment: is 300 bytes long"},
		{"long configuration_version", strings.Replace(ok, `"configuration_version":"1"`, `"configuration_version":"`+strings.Repeat("1", 1025)+`"`, 1),
			"configuration_version: is 1025 bytes long, longer than the 1024 bytes"},
		{"long resource type", strings.Replace(ok, `"resource_type":"File"`, `"resource_type":"`+strings.Repeat("F", 256)+`"`, 1),
			"resources[0].resource_type: is 256 bytes long"},
		{"long property", strings.Replace(ok, `"property":"ensure"`, `"property":"`+strings.Repeat("p", 256)+`"`, 1),
			"resources[0].events[0].property: is 256 bytes long"},
		{"long event name", build(strings.Replace(res, "%s", strings.Replace(ev, "%s", `,"name":"`+strings.Repeat("n", 256)+`"`, 1), 1), ""),
			"resources[0].events[0].name: is 256 bytes long"},
	}
	// the longest names stored, and titles of any length
	longest := strings.NewReplacer(`"certname":"a"`, `"certname":"`+strings.Repeat("a", wire.MaxNameBytes)+`"`,
		`"configuration_version":"1"`, `"configuration_version":"`+strings.Repeat("1", wire.MaxConfigurationVersionBytes)+`"`,
		`"resource_title":"/x"`, `"resource_title":"`+strings.Repeat("/x", 50_000)+`"`).Replace(ok)
	if _, err := wire.Decode(8, mustParse(t, longest), 0); err != nil {
		t.Errorf("longest names and a 100 kB title rejected: %v", err)
	}
	for _, c := range cases {
		if c.want == "" {
			continue
		}
		_, err := wire.Decode(8, mustParse(t, c.doc), 0)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to contain %q", c.name, err, c.want)
		}
	}
}

func TestDatetime(t *testing.T) {
	good := map[string]string{
		"2024-03-01T10:00Z":                   "2024-03-01T10:00:00.000Z",
		"2024-03-01T10:00+01:00":              "2024-03-01T09:00:00.000Z",
		"2024-03-01T10:00:00.123456789-02:30": "2024-03-01T12:30:00.123Z",
		"2025-01-06T06:00:46.150999999Z":      "2025-01-06T06:00:46.150Z",
	}
	for in, want := range good {
		tm, err := wire.ParseDatetime(in)
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if got := wire.FormatMillis(tm.UnixMilli()); got != want {
			t.Errorf("%s -> %s, want %s", in, got, want)
		}
	}
	for _, in := range []string{"2024-03-01T10:00:00", "2024-03-01 10:00:00Z", "2024-03-01T10:00:00+0100",
		"2024-03-01T10:00:00.1234567890Z", "2024-02-30T10:00:00Z", "2024-03-01T24:00:00Z", ""} {
		if _, err := wire.ParseDatetime(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

func TestValueText(t *testing.T) {
	cases := map[string]string{
		`"file"`:                `"file"`,
		`{"b":1,"a":[1,2]}`:     `{"a":[1,2],"b":1}`,
		`null`:                  `null`,
		`1.5`:                   `1.5`,
		`1e2`:                   `100.0`,
		`{"z":1,"a/b":2,"c":3}`: `{"c":3,"z":1,"a/b":2}`,
		`"a\u0000b"`:            `"a` + "\uFFFD" + `b"`,
		`["\u0000"]`:            `["\u0000"]`,
		`"<&>\u2028"`:           "\"<&>\u2028\"",
	}
	for in, want := range cases {
		v, err := jsonv.Parse([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if got := wire.ValueText(v); got != want {
			t.Errorf("ValueText(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestUpgradeV5(t *testing.T) {
	doc := `{"certname":"a","puppet_version":"4","report_format":4,"configuration_version":"1",
	"start_time":"2024-03-01T10:00:00Z","end_time":"2024-03-01T10:00:01Z","producer_timestamp":"2024-03-01T10:00:02Z",
	"transaction_uuid":"D2F3C9A0-1B2C-4D5E-8F90-1234567890AB","noop":false,"environment":"e","status":"changed","metrics":null,"logs":null,
	"resource_events":[
	 {"resource_type":"File","resource_title":"/a","file":"f","line":1,"containment_path":["Stage[main]","Foo"],"timestamp":"2024-03-01T10:00:00Z","status":"success","property":"ensure","new_value":"file","old_value":"absent","message":"m"},
	 {"resource_type":"File","resource_title":"/a","file":"f","line":1,"containment_path":["Stage[main]","Foo"],"timestamp":"2024-03-01T10:00:00Z","status":"success","property":"mode","new_value":"0644","old_value":"0600","message":"m2"},
	 {"resource_type":"Service","resource_title":"x","file":null,"line":null,"containment_path":null,"timestamp":"2024-03-01T10:00:00Z","status":"skipped","property":null,"new_value":null,"old_value":null,"message":null}]}`
	r, err := wire.Decode(5, mustParse(t, doc), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Events) != 3 {
		t.Fatalf("events = %d, want 3", len(r.Events))
	}
	if r.Events[2].Status != "skipped" || r.Events[2].NewValue != "null" {
		t.Errorf("skipped event = %+v", r.Events[2])
	}
	if r.CatalogUUID == nil || *r.CatalogUUID != "d2f3c9a0-1b2c-4d5e-8f90-1234567890ab" {
		t.Errorf("catalog_uuid = %v, want the transaction uuid lower-cased", r.CatalogUUID)
	}
	if *r.Events[0].ContainingClass != "Foo" {
		t.Errorf("containing class = %v", *r.Events[0].ContainingClass)
	}
	if _, err := wire.Decode(4, mustParse(t, doc), 0); err == nil {
		t.Error("version 4 accepted")
	}
}
