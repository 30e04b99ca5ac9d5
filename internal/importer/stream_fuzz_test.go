package importer_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"testing"

	"reportdb/internal/importer"
)

// FuzzStreamFile: whatever a file holds, the streaming reader neither
// panics nor loses track: every file (and archive entry) is counted once,
// and the same content gzipped gives the same counts.
func FuzzStreamFile(f *testing.F) {
	f.Add([]byte(`{"certname":"a","report_format":12}` + "\n" + `{"certname":"b"}`))
	f.Add([]byte("{\n  \"certname\": \"x\"\n}\n"))
	f.Add([]byte("\xef\xbb\xbf{}\n\n\n[1]\r\n{\"a\":1}"))
	f.Add([]byte("--- !ruby/object:Puppet::Transaction::Report\nhost: x\n"))
	f.Add([]byte("{}\n"))
	f.Add([]byte(""))
	f.Add([]byte("\x1f\x8b\x08\x00garbage"))
	f.Fuzz(func(t *testing.T, content []byte) {
		dir := t.TempDir()
		plain := filepath.Join(dir, "plain")
		os.WriteFile(plain, content, 0o644)
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write(content)
		zw.Close()
		zipped := filepath.Join(dir, "zipped")
		os.WriteFile(zipped, gz.Bytes(), 0o644)

		var sums [2]*importer.Summary
		for i, p := range []string{plain, zipped} {
			s := importer.Run(context.Background(), importer.Config{Sink: &recorder{}, Workers: 2}, []string{p})
			if s.Files != s.FilesTotal || s.FilesTotal < 1 {
				t.Fatalf("%s: %d of %d files counted", filepath.Base(p), s.Files, s.FilesTotal)
			}
			if s.Failed != 0 {
				t.Fatalf("%s: failures %+v", filepath.Base(p), s.FailedFor)
			}
			sums[i] = s
		}
		a, b := sums[0], sums[1]
		if bytes.HasPrefix(content, []byte{0x1f, 0x8b}) {
			return // gzip inside gzip: the inner one is not undone twice
		}
		if a.Stored != b.Stored || a.Rejected != b.Rejected || a.FilesTotal != b.FilesTotal {
			t.Fatalf("plain: %d stored, %d rejected, %d files; gzipped: %d, %d, %d",
				a.Stored, a.Rejected, a.FilesTotal, b.Stored, b.Rejected, b.FilesTotal)
		}
	})
}
