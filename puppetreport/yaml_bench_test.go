package puppetreport_test

import (
	"path/filepath"
	"testing"

	"reportdb/puppetreport"
)

// benchYAML is a Puppet 7.23 to_yaml of a fleet report of about 150 KB
// (report format 12, 8.10.0 agent, unchanged run).
const benchYAML = "fleet-12-8.10.0-unchanged.yaml.gz"

// BenchmarkParseYAML: ParseYAML of a 150 KB report written by Puppet
// 7.23 (go test ./puppetreport -run '^$' -bench ParseYAML -benchmem).
func BenchmarkParseYAML(b *testing.B) {
	data := readMaybeGzip(b, filepath.Join(puppet723Dir, benchYAML))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := puppetreport.ParseYAML(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseYAMLGeneral: the same report through the YAML library's
// path, which ParseYAML takes for what the fast path does not read.
func BenchmarkParseYAMLGeneral(b *testing.B) {
	data := readMaybeGzip(b, filepath.Join(puppet723Dir, benchYAML))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := puppetreport.ParseYAMLGeneral(data, puppetreport.DefaultYAMLMaxBytes); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkConvertYAML: ParseYAML and Convert, what a report POSTed by
// the http report processor costs before it is stored.
func BenchmarkConvertYAML(b *testing.B) {
	data := readMaybeGzip(b, filepath.Join(puppet723Dir, benchYAML))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		doc, err := puppetreport.ParseYAML(data)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := puppetreport.Convert(doc, opts()); err != nil {
			b.Fatal(err)
		}
	}
}
