package main

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestImportPuppet7MatchesTerminus imports real Puppet 7.23 reports
// (testdata/puppet7/apply: Puppet's JSON, the YAML Puppet writes for the
// same runs, and the store-report body the real puppetdb terminus sent)
// and checks that the JSON and the YAML imports store the same events as
// the terminus body does. Only the report hash (imports use the report's
// end time as producer_timestamp) and receive times may differ, and File
// content values, which Puppet's JSON and YAML carry base64-encoded while
// the terminus saw them raw in memory.
func TestImportPuppet7MatchesTerminus(t *testing.T) {
	src := filepath.Join("..", "..", "testdata", "puppet7", "apply")
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	dirs := map[string]string{"json": t.TempDir(), "yaml": t.TempDir(), "wire": t.TempDir()}
	n := 0
	for _, e := range entries {
		name := e.Name()
		var kind string
		switch {
		case strings.HasSuffix(name, ".pdb-wire.json"):
			kind = "wire"
		case strings.HasSuffix(name, ".ivars.yaml"):
			continue // the same runs in the older tagged form: covered by puppetreport
		case strings.HasSuffix(name, ".yaml"):
			kind = "yaml"
		case strings.HasSuffix(name, ".json") && name != "run-info.json":
			kind = "json"
			n++
		default:
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dirs[kind], name), b)
	}
	if n < 7 {
		t.Fatalf("only %d Puppet JSON reports in %s", n, src)
	}
	events := map[string][]map[string]any{}
	for kind, dir := range dirs {
		data := t.TempDir()
		code, out, errOut := importRun(t, "--data-dir", data, dir)
		if code != 0 {
			t.Fatalf("import %s: exit %d\n%s\n%s", kind, code, out, errOut)
		}
		wantCounts(t, out, n, 0, 0, 0)
		rows := queryStore(t, data, "/pdb/query/v4/events", `["~","certname",""]`)
		sort.Slice(rows, func(i, j int) bool { return eventKey(rows[i]) < eventKey(rows[j]) })
		events[kind] = rows
	}
	if len(events["wire"]) == 0 {
		t.Fatal("the terminus bodies stored no events")
	}
	for _, kind := range []string{"json", "yaml"} {
		got, want := events[kind], events["wire"]
		if len(got) != len(want) {
			t.Fatalf("%s import: %d events, terminus path %d", kind, len(got), len(want))
		}
		decoded := 0
		for i := range got {
			for k, wv := range want[i] {
				if k == "report" || k == "report_receive_time" {
					continue
				}
				gv := got[i][k]
				if fmt.Sprint(gv) == fmt.Sprint(wv) {
					continue
				}
				if k == "new_value" && got[i]["property"] == "content" {
					if raw, err := base64.StdEncoding.DecodeString(fmt.Sprint(gv)); err == nil && string(raw) == fmt.Sprint(wv) {
						decoded++
						continue
					}
				}
				t.Errorf("%s import, event %s: %s = %v, terminus path %v", kind, eventKey(want[i]), k, gv, wv)
			}
		}
		if decoded == 0 {
			t.Errorf("%s import: expected base64 File content values (Puppet's serialisation), found none", kind)
		}
	}
}

func eventKey(r map[string]any) string {
	return fmt.Sprint(r["certname"], "|", r["timestamp"], "|", r["resource_type"], "|", r["resource_title"], "|", r["property"], "|", r["status"])
}
