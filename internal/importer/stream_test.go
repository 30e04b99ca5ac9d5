package importer_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"reportdb"
	"reportdb/internal/importer"
	"reportdb/jsonv"
)

var streamMB = flag.Int("import-stream-mb", 128, "uncompressed size of the JSON-lines file TestStreamBoundedMemory imports (e.g. 3000 for the size of fleet.py's large fleet)")

// countingSink counts the reports it is given and, like the committer,
// keeps them a little while (the workers wait for it).
type countingSink struct {
	n     atomic.Int64
	certs sync.Map
}

func (c *countingSink) Store(ctx context.Context, it *importer.Item) (reportdb.Outcome, error) {
	if it.Report == nil || it.Report.Certname == "" {
		return 0, fmt.Errorf("%s: no decoded report", it.Name)
	}
	c.certs.Store(it.Report.Certname, true)
	c.n.Add(1)
	return reportdb.Stored, nil
}

// writeJSONLines writes a gzipped JSON-lines file of about size bytes
// (uncompressed) made of the corpus's reports with distinct certnames, and
// returns the number of lines.
func writeJSONLines(t *testing.T, path string, size int64) int {
	t.Helper()
	var lines [][]byte
	for i := 0; i < 6; i++ {
		lines = append(lines, []byte(jsonv.Compact(wire8(t, i))))
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
	var written int64
	n := 0
	for written < size {
		l := lines[n%len(lines)]
		// a distinct certname per line: "certname":"x" -> "certname":"nodeN.x"
		l = bytes.Replace(l, []byte(`"certname":"`), []byte(fmt.Sprintf(`"certname":"node%d.`, n)), 1)
		zw.Write(l)
		zw.Write([]byte{'\n'})
		written += int64(len(l) + 1)
		n++
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestStreamBoundedMemory imports a gzipped JSON-lines file whose content
// is far larger than the heap the import may use: the reports are read line
// by line, with back-pressure, so the peak heap stays bounded whatever the
// size of the file. (The previous importer read and gunzipped the whole file
// and parsed every line before storing any: several times the file's size.)
// -import-stream-mb sets the size (default 128 MB; the bound is 48 MB).
func TestStreamBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: generates and imports a large file")
	}
	size := int64(*streamMB) << 20
	const bound = 48 << 20
	path := filepath.Join(t.TempDir(), "fleet.jsonl.gz")
	want := writeJSONLines(t, path, size)
	st, _ := os.Stat(path)
	t.Logf("%d lines, %d MB uncompressed, %d MB gzipped", want, size>>20, st.Size()>>20)

	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	sink := &countingSink{}
	var progress []importer.Stats
	var pmu sync.Mutex
	sum := importer.Run(context.Background(), importer.Config{Sink: sink, Workers: 8,
		Progress: progressFunc(func(s importer.Stats) { pmu.Lock(); progress = append(progress, s); pmu.Unlock() })}, []string{path})
	close(stop)
	<-sampled

	if !sum.OK() || sum.Stored != int64(want) || sink.n.Load() != int64(want) {
		t.Fatalf("stored %d (sink %d) of %d lines: %+v", sum.Stored, sink.n.Load(), want, sum)
	}
	used := peak.Load() - min(peak.Load(), base.HeapInuse)
	t.Logf("peak heap in use during the import: %d MB above the %d MB before", used>>20, base.HeapInuse>>20)
	if used > bound {
		t.Errorf("peak heap %d MB above the start, want < %d MB for a %d MB file", used>>20, bound>>20, size>>20)
	}
	last := progress[len(progress)-1]
	if last.BytesTotal != st.Size() || last.BytesDone != st.Size() || last.Reports() != int64(want) {
		t.Errorf("final progress %+v, want %d of %d bytes and %d reports", last, st.Size(), st.Size(), want)
	}
}

type progressFunc func(importer.Stats)

func (f progressFunc) Interval() time.Duration { return 20 * time.Millisecond }
func (f progressFunc) Update(s importer.Stats) { f(s) }
func (f progressFunc) Done(s importer.Stats)   { f(s) }

// TestStreamLines: JSON lines are streamed, with every bad line rejected
// as file:line with its reason and the others imported; blank lines count
// in the numbering; a gzip stream cut short rejects the rest of the file,
// not the lines before.
func TestStreamLines(t *testing.T) {
	dir := t.TempDir()
	good := func(i int) string { return jsonv.Compact(wire8(t, i)) }
	content := strings.Join([]string{
		good(0),
		"",
		`{"certname": "broken"`,
		good(1),
		`[1, 2]`,
		`{}`,
		"   ",
		good(2),
	}, "\n") // no final newline
	os.WriteFile(filepath.Join(dir, "a.jsonl"), []byte("\xef\xbb\xbf"+content), 0o644) // with a byte order mark

	// the same lines gzipped, then cut in the middle
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	for i := 0; i < 6; i++ {
		zw.Write([]byte(good(i) + "\n"))
	}
	zw.Close()
	cut := gz.Bytes()[:gz.Len()*2/3]
	os.WriteFile(filepath.Join(dir, "b.jsonl.gz"), cut, 0o644)
	// one report on one line, with a final newline: a file of its own
	os.WriteFile(filepath.Join(dir, "c.json"), []byte(good(3)+"\n\n"), 0o644)

	sink := &recorder{}
	sum := importer.Run(context.Background(), importer.Config{Sink: sink, Workers: 3}, []string{dir})
	reasons := map[string]string{}
	for _, p := range sum.RejectedFor {
		reasons[strings.TrimPrefix(p.Name, dir+"/")] = p.Reason
	}
	for name, want := range map[string]string{
		"a.jsonl:3":  "not valid JSON",
		"a.jsonl:5":  "not a report: a JSON array",
		"a.jsonl:6":  "not a report: a JSON object with keys none",
		"b.jsonl.gz": "not valid gzip",
	} {
		got := ""
		for n, r := range reasons {
			if strings.HasPrefix(n, name) {
				got = r
			}
		}
		if !strings.Contains(got, want) {
			t.Errorf("%s: rejected with %q, want %q (all: %v)", name, got, want, reasons)
		}
	}
	for _, name := range []string{"a.jsonl:1", "a.jsonl:4", "a.jsonl:8", "c.json"} {
		if sink.items[filepath.Join(dir, name)] == nil {
			t.Errorf("%s not stored; stored: %v", name, keys(sink.items))
		}
	}
	var fromB int
	for n := range sink.items {
		if strings.Contains(n, "b.jsonl.gz:") {
			fromB++
		}
	}
	if fromB == 0 || fromB >= 6 {
		t.Errorf("%d lines of the cut gzip stored, want those before the cut", fromB)
	}
	if sum.Rejected != 4 || sum.Files != 3 || sum.FilesTotal != 3 {
		t.Errorf("summary %+v", sum)
	}
}

func keys(m map[string]*importer.Item) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
