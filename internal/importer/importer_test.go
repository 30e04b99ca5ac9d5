package importer_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"reportdb"
	"reportdb/internal/importer"
	"reportdb/internal/testcorpus"
	"reportdb/jsonv"
)

// recorder is a Sink that remembers what it got and answers per certname.
type recorder struct {
	mu      sync.Mutex
	items   map[string]*importer.Item // by name
	answers map[string]error          // by file base name
}

func (r *recorder) Store(ctx context.Context, it *importer.Item) (reportdb.Outcome, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.items == nil {
		r.items = map[string]*importer.Item{}
	}
	r.items[it.Name] = it
	if err := r.answers[filepath.Base(it.Name)]; err != nil {
		return 0, err
	}
	return reportdb.Stored, nil
}

func wire8(t *testing.T, i int) *jsonv.Object {
	t.Helper()
	m, dir := testcorpus.LoadManifest(t)
	v, err := jsonv.Parse(testcorpus.ReadFile(t, filepath.Join(dir, m.Submissions[i].Wire8)))
	if err != nil {
		t.Fatal(err)
	}
	return v.(*jsonv.Object)
}

func without(o *jsonv.Object, keys ...string) *jsonv.Object {
	out := &jsonv.Object{}
	drop := map[string]bool{}
	for _, k := range keys {
		drop[k] = true
	}
	for i, k := range o.Keys {
		if !drop[k] {
			out.Set(k, o.Values[i])
		}
	}
	return out
}

// TestDetect: the format of each file is found from its content, bare
// payloads get the version their keys say, and what is not a report is
// rejected with a reason.
func TestDetect(t *testing.T) {
	v8 := wire8(t, 0)
	v7 := without(wire8(t, 1), "producer", "noop_pending", "corrective_change", "job_id")
	v6 := without(v7, "catalog_uuid", "code_id", "cached_catalog_status")
	// v6 resources/events without the v7+ corrective_change
	for _, r := range mustArray(v6, "resources") {
		ro := r.(*jsonv.Object)
		*ro = *without(ro, "corrective_change")
		var evs []any
		for _, e := range mustArray(ro, "events") {
			evs = append(evs, without(e.(*jsonv.Object), "corrective_change", "name"))
		}
		if evs == nil {
			evs = []any{}
		}
		ro.Set("events", evs)
	}
	m, dir := testcorpus.LoadManifest(t)
	format10 := testcorpus.ReadFile(t, filepath.Join(dir, m.Submissions[3].Format10))
	envelope7 := &jsonv.Object{Keys: []string{"command", "version", "payload"}, Values: []any{"store_report", jsonv.Number("7"), v7}}

	cases := []struct {
		name    string
		content []byte
		version int    // wanted version of the stored item; 0 when rejected
		reason  string // wanted rejection
	}{
		{"v8.json", []byte(jsonv.Pretty(v8)), 8, ""},
		{"v7.json", []byte(jsonv.Compact(v7)), 7, ""},
		{"v6.json", []byte(jsonv.Compact(v6)), 6, ""},
		{"envelope.json", []byte(jsonv.Compact(envelope7)), 7, ""},
		{"puppet.json", format10, 8, ""},
		{"bom.json", append([]byte("\xef\xbb\xbf\n  "), format10...), 8, ""},
		{"array.json", []byte(`[{"certname": "x"}]`), 0, "not a report: a JSON array"},
		{"string.json", []byte(`"report"`), 0, "not a report: neither JSON nor a Puppet YAML report"},
		{"empty-object.json", []byte(`{}`), 0, "not a report: a JSON object with keys none"},
		{"envelope-version.json", []byte(`{"command": "store report", "version": "8", "payload": {}}`), 0, "the command version must be an integer"},
		{"envelope-payload.json", []byte(`{"command": "store report", "version": 8, "payload": []}`), 0, "the command payload must be a JSON object"},
		{"yaml-not-report.yaml", []byte("hello: world\n"), 0, "Invalid Puppet YAML report"},
		{"missing-key.json", []byte(jsonv.Compact(without(v8, "environment"))), 0, "Invalid report: environment: missing required key"},
	}
	in := t.TempDir()
	for _, c := range cases {
		if err := os.WriteFile(filepath.Join(in, c.name), c.content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rec := &recorder{}
	sum := importer.Run(context.Background(), importer.Config{Sink: rec, Workers: 3}, []string{in})
	reasons := map[string]string{}
	for _, p := range sum.RejectedFor {
		reasons[filepath.Base(p.Name)] = p.Reason
	}
	for _, c := range cases {
		it := rec.items[filepath.Join(in, c.name)]
		switch {
		case c.version != 0 && it == nil:
			t.Errorf("%s: not stored (%s)", c.name, reasons[c.name])
		case c.version != 0 && it.Version != c.version:
			t.Errorf("%s: stored as version %d, want %d", c.name, it.Version, c.version)
		case c.version == 0 && it != nil:
			t.Errorf("%s: stored, want rejected with %q", c.name, c.reason)
		case c.version == 0 && !strings.Contains(reasons[c.name], c.reason):
			t.Errorf("%s: rejected with %q, want %q", c.name, reasons[c.name], c.reason)
		}
	}
	if sum.Files != int64(len(cases)) || sum.FilesTotal != int64(len(cases)) {
		t.Errorf("files %d/%d, want %d", sum.Files, sum.FilesTotal, len(cases))
	}
	// rejections are listed in file order whatever the worker order
	names := make([]string, len(sum.RejectedFor))
	for i, p := range sum.RejectedFor {
		names[i] = p.Name
	}
	if !sort.StringsAreSorted(names) {
		t.Errorf("rejections not in file order: %v", names)
	}
}

func mustArray(o *jsonv.Object, k string) []any {
	v, _ := o.Get(k)
	a, _ := v.([]any)
	return a
}

// TestSinkErrors: a Rejection from the sink is a rejection, any other
// error a failure; neither stops the other files.
func TestSinkErrors(t *testing.T) {
	in := t.TempDir()
	for i := 0; i < 6; i++ {
		os.WriteFile(filepath.Join(in, fmt.Sprintf("r%d.json", i)), []byte(jsonv.Compact(wire8(t, i))), 0o644)
	}
	rec := &recorder{answers: map[string]error{
		"r1.json": &importer.Rejection{Reason: "no thanks"},
		"r4.json": errors.New("disk on fire"),
	}}
	sum := importer.Run(context.Background(), importer.Config{Sink: rec, Workers: 2}, []string{in})
	if sum.Stored != 4 || sum.Rejected != 1 || sum.Failed != 1 || sum.OK() {
		t.Fatalf("summary %+v", sum)
	}
	if sum.RejectedFor[0].Reason != "no thanks" || sum.FailedFor[0].Reason != "disk on fire" {
		t.Errorf("reasons: %+v %+v", sum.RejectedFor, sum.FailedFor)
	}
	var out bytes.Buffer
	sum.Write(&out, importer.ToDatabase)
	for _, want := range []string{"read 4 reports from 6 files in ", "  stored:      4\n", "rejected (1):\n  " + filepath.Join(in, "r1.json") + ": no thanks\n",
		"failed (1):\n  " + filepath.Join(in, "r4.json") + ": disk on fire\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, out.String())
		}
	}
}

// TestInterrupted: a cancelled import stops and says so.
func TestInterrupted(t *testing.T) {
	in := t.TempDir()
	for i := 0; i < 5; i++ {
		o := wire8(t, i)
		os.WriteFile(filepath.Join(in, strings.Repeat("x", i+1)+".json"), []byte(jsonv.Compact(o)), 0o644)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	sum := importer.Run(ctx, importer.Config{Sink: &recorder{}, Workers: 1}, []string{in})
	if !sum.Interrupted || sum.OK() || sum.Stored != 0 {
		t.Fatalf("summary %+v", sum)
	}
	var out bytes.Buffer
	sum.Write(&out, importer.ToDatabase)
	if !strings.Contains(out.String(), "interrupted: 0 of 5 files processed") {
		t.Errorf("summary:\n%s", out.String())
	}
}

func TestProgressLine(t *testing.T) {
	var out bytes.Buffer
	p := importer.NewLineProgress(&out, time.Second)
	p.Update(importer.Stats{FilesTotal: 10000}) // the call at the start says nothing
	// the ETA comes from the bytes read (here 12% after 1 s: 7.3 s left),
	// or from the files when their sizes are unknown
	p.Update(importer.Stats{FilesDone: 1, FilesTotal: 1, Stored: 900, Duplicates: 50, BytesDone: 12e6, BytesTotal: 100e6, Elapsed: time.Second})
	p.Update(importer.Stats{FilesDone: 9000, FilesTotal: 10000, Stored: 8000, Rejected: 3, Failed: 1, Elapsed: 20 * time.Second})
	want := "read 950 reports, 1/1 files, 12.0 MB/100.0 MB (12%), 950 reports/s, 12.0 MB/s, ETA 7.3s\n" +
		"read 8000 reports, 9000/10000 files, 0.0 MB/0.0 MB, 400 reports/s, 0.0 MB/s, ETA 2.2s, 3 rejected, 1 failed\n"
	if out.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), want)
	}
}
