package puppetreport_test

import (
	"path/filepath"
	"strings"
	"testing"

	"reportdb/jsonv"
	"reportdb/puppetreport"
)

// puppet723Dir holds reports written by Puppet 7.23's own report class from
// the corpus and a bench fleet (formats 10 to 12, agents 5.5 to 8):
// regenerate them with `ruby puppetreport/testdata/puppet723/gen.rb`.
const puppet723Dir = "testdata/puppet723"

// TestPuppet723Reports: every report Puppet 7.23 writes (to_data_hash JSON
// and to_yaml) of every format is accepted, and its JSON and YAML forms
// convert to the same wire document.
func TestPuppet723Reports(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(puppet723Dir, "*.json.gz"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no reports in %s (%v)", puppet723Dir, err)
	}
	formats := map[string]int{}
	format10ServerUsed := 0
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".json.gz")
		doc, err := jsonv.Parse(readMaybeGzip(t, path))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		fromJSON, err := puppetreport.Convert(doc, opts())
		if err != nil {
			t.Errorf("%s (JSON): refused: %v", name, err)
			continue
		}
		rf := jsonv.Compact(at(doc, "report_format"))
		formats[rf]++
		if _, ok := doc.(*jsonv.Object).Get("server_used"); ok && rf == "10" {
			format10ServerUsed++
		}
		ydoc, err := puppetreport.ParseYAML(readMaybeGzip(t, filepath.Join(puppet723Dir, name+".yaml.gz")))
		if err != nil {
			t.Errorf("%s (YAML): refused: %v", name, err)
			continue
		}
		fromYAML, err := puppetreport.Convert(ydoc, opts())
		if err != nil {
			t.Errorf("%s (YAML): refused: %v", name, err)
			continue
		}
		if a, b := jsonv.Compact(fromJSON), jsonv.Compact(fromYAML); a != b {
			t.Errorf("%s: the YAML converts to\n%.300s\nthe JSON to\n%.300s", name, b, a)
		}
	}
	for _, f := range []string{"10", "11", "12"} {
		if formats[f] == 0 {
			t.Errorf("no report of format %s (%v)", f, formats)
		}
	}
	if format10ServerUsed == 0 {
		t.Error("no format 10 report with server_used (what Puppet 7 writes for an older agent)")
	}
}
