package puppetreport_test

import (
	"path/filepath"
	"testing"

	"reportdb/jsonv"
	"reportdb/puppetreport"
)

// FuzzConvert checks that Convert never panics, returns no output with an
// error, and that every accepted report yields the 21 wire keys in terminus
// order as valid JSON. Seeds are kept small (a corpus report with events,
// an empty-metrics failed run, the test base report): large seeds make the
// fuzzer spend its time minimising.
func FuzzConvert(f *testing.F) {
	for _, name := range []string{"win-dc01.corp.example.com--03.json.gz", "qa-db01.example.org--02.json.gz"} {
		f.Add([]byte(jsonv.Compact(readJSON(f, filepath.Join(corpusDirOf(f), "format10", name)))))
	}
	f.Add([]byte(jsonv.Compact(baseReport(f))))
	f.Add([]byte(`{"host":"h","time":"2024-03-01T10:00:00Z","configuration_version":null,"report_format":"12","agent_version":"7","status":"failed","transaction_completed":false,"noop":true,"noop_pending":false,"environment":"e","metrics":{},"resource_statuses":{}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := jsonv.Parse(data)
		if err != nil {
			return
		}
		out, err := puppetreport.Convert(doc, opts())
		if err != nil {
			if out != nil {
				t.Fatal("output returned with an error")
			}
			return
		}
		if len(out.Keys) != len(puppetreport.WireKeys) {
			t.Fatalf("%d keys: %v", len(out.Keys), out.Keys)
		}
		for i, k := range puppetreport.WireKeys {
			if out.Keys[i] != k {
				t.Fatalf("key %d is %q, want %q", i, out.Keys[i], k)
			}
		}
		if _, err := jsonv.Parse([]byte(jsonv.Compact(out))); err != nil {
			t.Fatalf("output is not valid JSON: %v", err)
		}
	})
}
