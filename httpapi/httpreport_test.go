package httpapi_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"reportdb/httpapi"
)

// puppet7Dir holds real Puppet 7.23 reports: Puppet's JSON, the YAML
// Puppet writes for the same report and the store-report body the real
// puppetdb terminus built from it (see its README.md).
const puppet7Dir = "../testdata/puppet7"

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// rows GETs a query endpoint and decodes its JSON array.
func rows(t *testing.T, h http.Handler, path string, params url.Values) []map[string]any {
	t.Helper()
	r := do(t, h, "GET", path+"?"+params.Encode(), nil, nil)
	if r.code != 200 {
		t.Fatalf("%s: %d %s", path, r.code, r.body)
	}
	var out []map[string]any
	if err := json.Unmarshal([]byte(r.body), &out); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return out
}

func eventsOf(t *testing.T, h http.Handler, certname string) []map[string]any {
	return rows(t, h, "/pdb/query/v4/events", url.Values{
		"query":    {`["=","certname",` + strconvQuote(certname) + `]`},
		"order_by": {`[{"field":"timestamp"},{"field":"resource_title"},{"field":"property"},{"field":"status"},{"field":"message"}]`},
	})
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// TestHTTPReportMatchesCommand: every real Puppet report, submitted as
// Puppet's JSON and as Puppet's YAML to POST /reports/upload (with the
// producer_timestamp and producer of the terminus's body), stores the same
// report (same hash) with the same events, logs and metrics as the body
// the real puppetdb terminus built for it, submitted to /pdb/cmd/v1.
//
// The one expected difference: the terminus ran in process (puppet apply)
// and saw File content checksums as raw "{sha256}..." strings, while
// Puppet's JSON and YAML carry them base64-encoded (they are binary
// strings), so the stored new_value is their base64. Exactly those
// new_values are decoded before comparing, and counted.
func TestHTTPReportMatchesCommand(t *testing.T) {
	wires, _ := filepath.Glob(filepath.Join(puppet7Dir, "*", "*.pdb-wire.json"))
	if len(wires) != 8 {
		t.Fatalf("%d .pdb-wire.json files in %s, want 8", len(wires), puppet7Dir)
	}
	wantB64 := map[string]int{"web01-run2": 3, "app01-run2": 1, "db01-run3-noop": 1}
	for _, wf := range wires {
		base := strings.TrimSuffix(wf, ".pdb-wire.json")
		name := filepath.Base(filepath.Dir(base)) + "/" + filepath.Base(base)
		t.Run(name, func(t *testing.T) {
			wireBody := readFile(t, wf)
			var wire struct {
				Certname          string  `json:"certname"`
				ProducerTimestamp string  `json:"producer_timestamp"`
				Producer          *string `json:"producer"`
			}
			if err := json.Unmarshal(wireBody, &wire); err != nil {
				t.Fatal(err)
			}
			cmd := newServer(t)
			if r := do(t, cmd, "POST", "/pdb/cmd/v1?command=store_report&version=8&certname="+url.QueryEscape(wire.Certname),
				wireBody, map[string]string{"Content-Type": "application/json"}); r.code != 200 {
				t.Fatalf("command: %d %s", r.code, r.body)
			}
			want := eventsOf(t, cmd, wire.Certname)
			if len(want) == 0 && !strings.Contains(base, "db01-run2") {
				t.Fatalf("no events stored from %s", wf)
			}
			wantReport := rows(t, cmd, "/pdb/query/v4/reports", url.Values{"query": {`["=","certname",` + strconvQuote(wire.Certname) + `]`}})
			if len(wantReport) != 1 {
				t.Fatalf("%d reports", len(wantReport))
			}
			hash := wantReport[0]["hash"].(string)

			for _, sub := range []struct{ ct, file string }{
				{"application/json", base + ".json"},
				{"application/x-yaml", base + ".yaml"},
			} {
				h := newServer(t)
				headers := map[string]string{"Content-Type": sub.ct, "X-Producer-Timestamp": wire.ProducerTimestamp,
					"Accept": "*/*"}
				if wire.Producer != nil {
					headers["X-Producer"] = *wire.Producer
				}
				r := do(t, h, "POST", "/reports/upload", readFile(t, sub.file), headers)
				if r.code != 200 || r.body != "[]" || r.ct != "application/json;charset=utf-8" {
					t.Fatalf("%s: %d %s %s", sub.ct, r.code, r.ct, r.body)
				}
				got := eventsOf(t, h, wire.Certname)
				if len(got) != len(want) {
					t.Fatalf("%s: %d events, want %d", sub.ct, len(got), len(want))
				}
				decoded := 0
				for i := range got {
					g, w := got[i], want[i]
					if g["report"] != hash {
						t.Errorf("%s: event %d report %v, want %s", sub.ct, i, g["report"], hash)
					}
					for _, k := range []string{"report_receive_time"} {
						delete(g, k)
						delete(w, k)
					}
					if gv, wv := g["new_value"], w["new_value"]; gv != wv && g["property"] == "content" {
						if dec, err := base64.StdEncoding.DecodeString(gv.(string)); err == nil && string(dec) == wv {
							g["new_value"] = wv
							decoded++
						}
					}
					if !reflect.DeepEqual(g, w) {
						t.Errorf("%s: event %d differs:\n got %v\nwant %v", sub.ct, i, g, w)
					}
				}
				if decoded != wantB64[filepath.Base(base)] {
					t.Errorf("%s: %d base64 content new_values, want %d", sub.ct, decoded, wantB64[filepath.Base(base)])
				}
				gotReport := rows(t, h, "/pdb/query/v4/reports", url.Values{"query": {`["=","hash",` + strconvQuote(hash) + `]`}})
				if len(gotReport) != 1 {
					t.Fatalf("%s: report %s not found (%d rows)", sub.ct, hash, len(gotReport))
				}
				g, w := gotReport[0], wantReport[0]
				for _, k := range []string{"receive_time", "resource_events"} { // events compared above
					delete(g, k)
					delete(w, k)
				}
				if !reflect.DeepEqual(g, w) {
					t.Errorf("%s: report row differs:\n got %v\nwant %v", sub.ct, g, w)
				}
				for _, sr := range []string{"logs", "metrics"} {
					a := do(t, h, "GET", "/pdb/query/v4/reports/"+hash+"/"+sr, nil, nil)
					b := do(t, cmd, "GET", "/pdb/query/v4/reports/"+hash+"/"+sr, nil, nil)
					if a.code != 200 || a.body != b.body {
						t.Errorf("%s: /reports/<hash>/%s differs: %d %.200s\nwant %d %.200s", sub.ct, sr, a.code, a.body, b.code, b.body)
					}
				}
			}
		})
	}
}

// TestHTTPReportYAMLSample stores the real store-processor YAML of a failed
// run and checks its events.
func TestHTTPReportYAMLSample(t *testing.T) {
	h := newServer(t)
	body := readFile(t, filepath.Join(puppet7Dir, "yaml", "yaml01.example.com-202611212344.yaml"))
	// what Puppet's http processor sends (Net::HTTP adds Accept: */*)
	r := do(t, h, "POST", "/reports/upload?producer_timestamp=2026-11-21T23:44:46.001Z", body, map[string]string{
		"Content-Type": "application/x-yaml", "Accept": "*/*", "User-Agent": "Puppet/7.23.0 Ruby/3.1.2-p20 (x86_64-linux-gnu)",
		"X-Puppet-Version": "7.23.0", "Accept-Encoding": "gzip;q=1.0,deflate;q=0.6,identity;q=0.3"})
	if r.code != 200 || r.body != "[]" {
		t.Fatalf("%d %s", r.code, r.body)
	}
	ev := eventsOf(t, h, "yaml01.example.com")
	byTitle := map[string]map[string]any{}
	for _, e := range ev {
		byTitle[e["resource_title"].(string)] = e
	}
	if len(ev) != 4 || len(byTitle) != 4 {
		t.Fatalf("%d events: %v", len(ev), ev)
	}
	for title, want := range map[string]map[string]any{
		"hello from yaml": {"status": "success", "resource_type": "Notify", "property": "message",
			"old_value": "absent", "new_value": "hello from yaml", "message": "defined 'message' as 'hello from yaml'",
			"timestamp": "2026-11-21T23:44:45.574Z", "file": "/etc/puppetlabs/code/site.pp", "line": 2.0},
		"failing-step": {"status": "failure", "resource_type": "Exec", "property": "returns",
			"old_value": "notrun", "new_value": `["0"]`,
			"message":   "change from 'notrun' to ['0'] failed: '/bin/false' returned 1 instead of one of [0]",
			"timestamp": "2026-11-21T23:44:45.585Z", "containing_class": "Demo", "line": 4.0,
			"containment_path": []any{"Stage[main]", "Demo", "Exec[failing-step]"}},
		"/srv/after-fail": {"status": "skipped", "resource_type": "File", "property": nil, "old_value": nil,
			"new_value": nil, "timestamp": "2026-11-21T23:44:45.586Z"},
		"/srv/noop-me": {"status": "noop", "resource_type": "File", "property": "ensure", "old_value": "absent",
			"new_value": "file", "message": "current_value 'absent', should be 'file' (noop)"},
	} {
		e := byTitle[title]
		for k, v := range want {
			if !reflect.DeepEqual(e[k], v) {
				t.Errorf("%s: %s = %#v, want %#v", title, k, e[k], v)
			}
		}
		for k, v := range map[string]any{"certname": "yaml01.example.com", "environment": "production",
			"configuration_version": "1795304685", "run_start_time": "2026-11-21T23:44:45.567Z",
			"run_end_time": "2026-11-21T23:44:45.591Z", "report_receive_time": nil} {
			if k == "report_receive_time" {
				if e[k] == nil {
					t.Errorf("%s: no report_receive_time", title)
				}
				continue
			}
			if e[k] != v {
				t.Errorf("%s: %s = %#v, want %#v", title, k, e[k], v)
			}
		}
	}
	rep := rows(t, h, "/pdb/query/v4/reports", url.Values{"query": {`["=","certname","yaml01.example.com"]`}})
	if len(rep) != 1 || rep[0]["status"] != "failed" || rep[0]["producer_timestamp"] != "2026-11-21T23:44:46.001Z" ||
		rep[0]["noop_pending"] != true || rep[0]["transaction_uuid"] != "fdb90771-2a83-4e8e-b078-bc5798def5ce" {
		t.Errorf("report row %v", rep)
	}

	// puppet-summary's path, another YAML media type with parameters
	h2 := newServer(t)
	if r := do(t, h2, "POST", "/upload", body, map[string]string{"Content-Type": "text/yaml; charset=utf-8"}); r.code != 200 {
		t.Fatalf("/upload: %d %s", r.code, r.body)
	}
	if n := reportCount(t, h2); n != 100000+4 {
		t.Errorf("/upload stored %d", n)
	}
}

// TestHTTPReportRejects: bad submissions get a 4xx with a message and store
// nothing.
func TestHTTPReportRejects(t *testing.T) {
	sample := string(readFile(t, filepath.Join(puppet7Dir, "yaml", "yaml01.example.com-202611212344.yaml")))
	const hdr = "--- !ruby/object:Puppet::Transaction::Report\n"
	var bomb strings.Builder
	bomb.WriteString(hdr + "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i <= 9; i++ {
		bomb.WriteString("a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [" +
			strings.Repeat("*a"+string(rune('0'+i-1))+", ", 8) + "*a" + string(rune('0'+i-1)) + "]\n")
	}
	yamlCT := map[string]string{"Content-Type": "application/x-yaml"}
	cases := []struct {
		name, method, path, body string
		headers                  map[string]string
		code                     int
		want                     string
	}{
		{"malformed YAML", "POST", "/reports/upload", "host: [unclosed\n", yamlCT, 400,
			"The report is not a valid Puppet YAML report: not valid YAML"},
		{"not a report", "POST", "/reports/upload", "- just\n- a list\n", yamlCT, 400,
			"The report is not a valid Puppet YAML report: not a Puppet report: the YAML document is a sequence"},
		{"other class", "POST", "/reports/upload", "--- !ruby/object:Puppet::Node::Facts\nname: x\nvalues: {}\n", yamlCT, 400,
			"not a Puppet report: the YAML document is a mapping tagged !ruby/object:Puppet::Node::Facts"},
		{"unknown ruby tag", "POST", "/reports/upload",
			strings.Replace(sample, "      desired_value: file\n", "      desired_value: !ruby/object:Gem::Requirement\n        requirements: []\n", 1), yamlCT, 400,
			`resource_statuses["File[/srv/noop-me]"].events[0].desired_value: unsupported YAML tag !ruby/object:Gem::Requirement`},
		{"alias bomb", "POST", "/reports/upload", bomb.String(), yamlCT, 400, "more than 256 alias expansions"},
		{"invalid report", "POST", "/reports/upload", strings.Replace(sample, "status: failed\n", "status: broken\n", 1), yamlCT, 400,
			`status: must be one of failed, changed, unchanged; got "broken"`},
		{"bad producer_timestamp", "POST", "/reports/upload?producer_timestamp=yesterday", sample, yamlCT, 400,
			`producer_timestamp "yesterday" is not a valid date-time`},
		{"malformed JSON", "POST", "/upload", `{"host":`, map[string]string{"Content-Type": "application/json"}, 400,
			"The report is not valid JSON"},
		{"YAML sent as JSON", "POST", "/reports/upload", sample, map[string]string{"Content-Type": "application/json"}, 400,
			"The report is not valid JSON"},
		{"wrong content type", "POST", "/reports/upload", sample, map[string]string{"Content-Type": "text/plain"}, 415,
			"content type text/plain not supported: send Puppet's YAML report (application/x-yaml"},
		{"no content type", "POST", "/upload", sample, nil, 415, "a request without Content-Type not supported"},
		{"GET", "GET", "/reports/upload", "", nil, 405, ""},
		{"Accept", "POST", "/reports/upload", sample, map[string]string{"Content-Type": "application/x-yaml", "Accept": "text/yaml"}, 406,
			"must accept application/json"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newServer(t)
			r := do(t, h, c.method, c.path, []byte(c.body), c.headers)
			if r.code != c.code || !strings.Contains(r.body, c.want) {
				t.Errorf("got %d %q, want %d ...%s...", r.code, r.body, c.code, c.want)
			}
			if n := reportCount(t, h); n != 0 {
				t.Errorf("stored %d", n)
			}
		})
	}
}

func TestHTTPReportYAMLLimit(t *testing.T) {
	h := newServer(t)
	big := append([]byte("--- !ruby/object:Puppet::Transaction::Report\nhost: x\npad: \""), bytes.Repeat([]byte("a"), httpapi.MaxYAMLBytes)...)
	big = append(big, '"', '\n')
	r := do(t, h, "POST", "/reports/upload", big, map[string]string{"Content-Type": "application/x-yaml"})
	if r.code != 413 || !strings.Contains(r.body, "YAML reports are limited") {
		t.Fatalf("oversized YAML: %d %.100s", r.code, r.body)
	}
}
