package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"reportdb/internal/testcorpus"
	"reportdb/jsonv"
	"reportdb/sqlite"
	"reportdb/storetest"
)

// importRun runs `reportdb import args...` in-process.
func importRun(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(append([]string{"import", "--progress", "none"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

// summaryCount reads "  <label>:  N" from an import summary.
func summaryCount(t *testing.T, summary, label string) int {
	t.Helper()
	m := regexp.MustCompile(`(?m)^  ` + label + `:\s+(\d+)`).FindStringSubmatch(summary)
	if m == nil {
		t.Fatalf("no %q line in the summary:\n%s", label, summary)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// wantCounts checks the summary's counts; -1 skips a count.
func wantCounts(t *testing.T, summary string, stored, duplicates, rejected, failed int) {
	t.Helper()
	for _, c := range []struct {
		label string
		want  int
	}{{"stored", stored}, {"duplicates", duplicates}, {"rejected", rejected}, {"failed", failed}} {
		if c.want < 0 {
			continue
		}
		if got := summaryCount(t, summary, c.label); got != c.want {
			t.Errorf("%s: got %d, want %d\n%s", c.label, got, c.want, summary)
		}
	}
}

// queryStore runs a v4 query against the embedded database in dataDir
// (after the import closed it) and returns the rows.
func queryStore(t *testing.T, dataDir, path, query string) []map[string]any {
	t.Helper()
	db, err := sqlite.Open(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	h, closeFn := storetest.NewHandler(db, 0)
	defer closeFn()
	return getRows(t, h, path, query)
}

func getRows(t *testing.T, h http.Handler, path, query string) []map[string]any {
	t.Helper()
	req := httptest.NewRequest("GET", path+"?"+url.Values{"query": {query}}.Encode(), nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("GET %s %s: %d %s", path, query, rec.Code, rec.Body.String())
	}
	var rows []map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &rows); err != nil {
		t.Fatal(err)
	}
	return rows
}

const (
	countQuery = `["extract",[["function","count"]],["=","type","any"]]`
	eventCount = `["extract",[["function","count"]],["~","certname",""]]`
)

func storedCount(t *testing.T, dataDir string) int {
	t.Helper()
	rows := queryStore(t, dataDir, "/pdb/query/v4/reports", countQuery)
	return int(rows[0]["count"].(float64))
}

func corpusDir(t *testing.T) string {
	return filepath.Join(testcorpus.SharedDir(t), "corpus")
}

// corpusDoc reads one corpus file (gunzipped) and parses it.
func corpusDoc(t *testing.T, rel string) *jsonv.Object {
	t.Helper()
	v, err := jsonv.Parse(testcorpus.ReadFile(t, filepath.Join(corpusDir(t), rel)))
	if err != nil {
		t.Fatal(err)
	}
	return v.(*jsonv.Object)
}

func gz(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestImportCorpus imports the corpus trees (149 gzipped reports each) into
// an embedded store. Format-10 reports get producer_timestamp = end_time,
// the wire v8 files keep the manifest's producer_timestamp: the hash
// includes producer_timestamp, so the two trees are 149 + 149 distinct
// reports; a second import of either tree is all duplicates.
func TestImportCorpus(t *testing.T) {
	// compaction beside the batches (SQLite: one writer) fails no store
	defer func(d time.Duration) { importCompactInterval = d }(importCompactInterval)
	importCompactInterval = time.Millisecond
	dataDir := t.TempDir()
	f10 := filepath.Join(corpusDir(t), "format10")
	w8 := filepath.Join(corpusDir(t), "wire8")
	steps := []struct {
		name                        string
		args                        []string
		stored, duplicates, inStore int
	}{
		{"format10", []string{f10}, 149, 0, 149},
		{"format10 again", []string{f10}, 0, 149, 149},
		{"wire8", []string{w8}, 149, 0, 298},
		{"both again", []string{f10, w8}, 0, 298, 298},
	}
	for _, s := range steps {
		code, out, stderr := importRun(t, append([]string{"--data-dir", dataDir, "--producer", "import.example.com"}, s.args...)...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", s.name, code, out, stderr)
		}
		wantCounts(t, out, s.stored, s.duplicates, 0, 0)
		if got := storedCount(t, dataDir); got != s.inStore {
			t.Errorf("%s: %d reports stored, want %d", s.name, got, s.inStore)
		}
	}

	// The imported Puppet reports carry their end time as producer_timestamp
	// and --producer as producer; the wire v8 ones what they said.
	rows := queryStore(t, dataDir, "/pdb/query/v4/reports",
		`["extract",["certname","end_time","producer_timestamp","producer"],["=","type","any"]]`)
	var f10Rows, wireRows int
	for _, r := range rows {
		if r["producer"] == "import.example.com" {
			f10Rows++
			if r["producer_timestamp"] != r["end_time"] {
				t.Errorf("format 10 report of %v: producer_timestamp %v, end_time %v", r["certname"], r["producer_timestamp"], r["end_time"])
			}
		} else {
			wireRows++
		}
	}
	if f10Rows != 149 || wireRows != 149 {
		t.Errorf("%d reports with the --producer, %d without; want 149 each", f10Rows, wireRows)
	}
}

// TestImportRejects: good files are stored whatever their name; every bad
// one is listed with its reason; the exit status is 1.
func TestImportRejects(t *testing.T) {
	m, _ := testcorpus.LoadManifest(t)
	sub := m.Submissions
	dir := t.TempDir()

	envelope := &jsonv.Object{Keys: []string{"command", "version", "payload"},
		Values: []any{"store report", jsonv.Number("8"), corpusDoc(t, sub[2].Wire8)}}
	unknownKey := corpusDoc(t, sub[4].Wire8)
	unknownKey.Set("bogus", jsonv.Number("1"))
	badStatus := corpusDoc(t, sub[5].Format10)
	badStatus.Set("status", "weird")
	v3 := &jsonv.Object{Keys: []string{"command", "version", "payload"},
		Values: []any{"store report", jsonv.Number("3"), corpusDoc(t, sub[6].Wire8)}}

	files := []struct {
		name    string
		content []byte
		reason  string // "" when the file must be stored
	}{
		{"good-format10.json", testcorpus.ReadFile(t, filepath.Join(corpusDir(t), sub[0].Format10)), ""},
		{"good-wire8.json.gz", gz(t, testcorpus.ReadFile(t, filepath.Join(corpusDir(t), sub[1].Wire8))), ""},
		{"envelope.json", []byte(jsonv.Pretty(envelope)), ""},
		{"sub/no-extension", gz(t, testcorpus.ReadFile(t, filepath.Join(corpusDir(t), sub[3].Wire8))), ""},
		{"broken.json", []byte(`{"certname": "x", `), "not valid JSON"},
		{"facts.json", []byte(`{"certname": "x", "values": {}}`), `not a report: a JSON object with keys "certname", "values"`},
		{"unknown-key.json", []byte(jsonv.Compact(unknownKey)), "Invalid report: bogus: unknown key"},
		{"bad-status.json", []byte(jsonv.Compact(badStatus)), "Invalid Puppet report: status:"},
		{"replace-facts.json", []byte(`{"command": "replace facts", "version": 5, "payload": {}}`), `not a report: a "replace facts" command`},
		{"v3.json", []byte(jsonv.Compact(v3)), "store report version 3 is not supported"},
		{"empty.json", nil, "empty file"},
		{"bad.json.gz", []byte("\x1f\x8bnot gzip at all"), "not valid gzip"},
		{"notes.txt", []byte("just some notes\n"), "not a report: neither JSON nor a Puppet YAML report"},
	}
	wantStored, wantRejected := 0, 0
	for _, f := range files {
		writeFile(t, filepath.Join(dir, f.name), f.content)
		if f.reason == "" {
			wantStored++
		} else {
			wantRejected++
		}
	}
	// a dangling symlink cannot be read: a failure, not a rejection
	if err := os.Symlink(filepath.Join(dir, "nowhere"), filepath.Join(dir, "dangling.json")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, ".hidden", "ignored.json"), []byte("not even looked at"))

	dataDir := t.TempDir()
	code, out, stderr := importRun(t, "--data-dir", dataDir, dir)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out, stderr)
	}
	wantCounts(t, out, wantStored, 0, wantRejected, 1)
	if got := storedCount(t, dataDir); got != wantStored {
		t.Errorf("%d reports stored, want %d", got, wantStored)
	}
	for _, f := range files {
		line := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(filepath.Join(dir, f.name)) + `: (.*)$`).FindStringSubmatch(out)
		switch {
		case f.reason == "" && line != nil:
			t.Errorf("%s listed: %s", f.name, line[0])
		case f.reason != "" && line == nil:
			t.Errorf("%s not listed in the summary:\n%s", f.name, out)
		case f.reason != "" && !strings.Contains(line[1], f.reason):
			t.Errorf("%s: reason %q, want it to contain %q", f.name, line[1], f.reason)
		}
	}
	if !strings.Contains(out, filepath.Join(dir, "dangling.json")+": ") || !strings.Contains(out, "failed (1):") {
		t.Errorf("the dangling symlink is not listed as failed:\n%s", out)
	}
	if strings.Contains(out, "ignored.json") {
		t.Errorf("a file in a hidden directory was read:\n%s", out)
	}

	// --list bounds the listing, not the counts
	code, out, _ = importRun(t, "--data-dir", dataDir, "--list", "2", dir)
	if code != 1 || !strings.Contains(out, fmt.Sprintf("rejected (%d):", wantRejected)) ||
		!strings.Contains(out, fmt.Sprintf("  ... and %d more", wantRejected-2)) {
		t.Errorf("--list 2: exit %d\n%s", code, out)
	}
	wantCounts(t, out, 0, wantStored, wantRejected, 1)
}

// TestImportJSONLines: fleet.py's .jsonl(.gz), one report per line; a bad
// line is rejected by its line number.
func TestImportJSONLines(t *testing.T) {
	m, _ := testcorpus.LoadManifest(t)
	var b bytes.Buffer
	for i := 0; i < 4; i++ {
		if i == 2 {
			b.WriteString("{\"certname\": \"broken\"\n")
			continue
		}
		b.WriteString(jsonv.Compact(corpusDoc(t, m.Submissions[i].Wire8)) + "\n")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "fleet.jsonl.gz")
	writeFile(t, path, gz(t, b.Bytes()))
	dataDir := t.TempDir()
	code, out, _ := importRun(t, "--data-dir", dataDir, path)
	if code != 1 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	wantCounts(t, out, 3, 0, 1, 0)
	if !strings.Contains(out, path+":3: not valid JSON") {
		t.Errorf("line 3 not rejected by number:\n%s", out)
	}
}

// exportShape turns a terminus wire v8 report into what PuppetDB 7's
// export writes (reports-query->wire-v8 of the stored report): "type" is
// present and a skipped resource carries the skipped event PuppetDB
// stored for it.
func exportShape(o *jsonv.Object) *jsonv.Object {
	if !o.Has("type") {
		o.Set("type", "agent")
	}
	res, _ := o.Get("resources")
	for _, r := range res.([]any) {
		ro := r.(*jsonv.Object)
		if skipped, _ := ro.Get("skipped"); skipped == true {
			ts, _ := ro.Get("timestamp")
			ro.Set("events", []any{&jsonv.Object{
				Keys:   []string{"status", "timestamp", "property", "new_value", "old_value", "message", "corrective_change", "name"},
				Values: []any{"skipped", ts, nil, nil, nil, nil, false, nil},
			}})
		}
	}
	return o
}

// v5Shape turns a wire v8 report into store report v5, as the exports of
// PuppetDB 3/4 hold it: resources flattened into resource_events, the keys
// of versions 6-8 removed.
func v5Shape(o *jsonv.Object) *jsonv.Object {
	out := &jsonv.Object{}
	drop := map[string]bool{"producer": true, "noop_pending": true, "corrective_change": true, "job_id": true,
		"catalog_uuid": true, "code_id": true, "cached_catalog_status": true, "type": true, "resources": true}
	for i, k := range o.Keys {
		if !drop[k] {
			out.Set(k, o.Values[i])
		}
	}
	var flat []any
	res, _ := o.Get("resources")
	for _, r := range res.([]any) {
		ro := r.(*jsonv.Object)
		get := func(k string) any { v, _ := ro.Get(k); return v }
		base := func(e *jsonv.Object) *jsonv.Object {
			for _, k := range []string{"resource_type", "resource_title", "file", "line", "containment_path"} {
				e.Set(k, get(k))
			}
			return e
		}
		if get("skipped") == true {
			flat = append(flat, base(&jsonv.Object{Keys: []string{"status", "timestamp", "property", "new_value", "old_value", "message"},
				Values: []any{"skipped", get("timestamp"), nil, nil, nil, nil}}))
			continue
		}
		evs, _ := get("events").([]any)
		for _, e := range evs {
			eo := e.(*jsonv.Object)
			ev := &jsonv.Object{}
			for _, k := range []string{"status", "timestamp", "property", "new_value", "old_value", "message"} {
				v, _ := eo.Get(k)
				ev.Set(k, v)
			}
			flat = append(flat, base(ev))
		}
	}
	if flat == nil {
		flat = []any{}
	}
	out.Set("resource_events", flat)
	return out
}

// writeExportArchive writes a PuppetDB export archive as PuppetDB 7's
// export does (puppetlabs.puppetdb.export): puppetdb-bak/export-metadata.json
// first, then one pretty-printed JSON file per entity in reports/,
// catalogs/, facts/, catalog_inputs/ and configure_expiration/.
func writeExportArchive(t *testing.T, path string, storeReportVersion int, reports []*jsonv.Object, others map[string]int) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	add := func(name string, content []byte) {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write(content)
	}
	meta := fmt.Sprintf(`{
  "timestamp" : "2026-11-22T01:00:00.000Z",
  "command_versions" : {
    "replace_catalog" : 9,
    "store_report" : %d,
    "replace_facts" : 5,
    "configure_expiration" : 1,
    "replace_catalog_inputs" : 1
  }
}`, storeReportVersion)
	add("puppetdb-bak/export-metadata.json", []byte(meta))
	hashName := func(certname, ts string) string {
		sum := sha1.Sum([]byte(ts))
		return certname + "-" + hex.EncodeToString(sum[:]) + ".json"
	}
	for _, r := range reports {
		cn, _ := r.Get("certname")
		ts, _ := r.Get("producer_timestamp")
		add("puppetdb-bak/reports/"+hashName(cn.(string), ts.(string)), jsonv.AppendPretty(nil, r))
	}
	for kind, n := range others {
		for i := 0; i < n; i++ {
			cn := fmt.Sprintf("node%d.example.com", i)
			var body string
			switch kind {
			case "facts":
				body = fmt.Sprintf(`{"certname": %q, "environment": "production", "producer_timestamp": "2026-11-22T00:00:00.000Z", "producer": "puppet", "values": {"os": {"family": "Debian"}}}`, cn)
			case "catalogs":
				body = fmt.Sprintf(`{"certname": %q, "version": "1", "environment": "production", "transaction_uuid": null, "catalog_uuid": null, "code_id": null, "job_id": null, "producer_timestamp": "2026-11-22T00:00:00.000Z", "producer": "puppet", "edges": [], "resources": []}`, cn)
			default:
				body = fmt.Sprintf(`{"certname": %q}`, cn)
			}
			name := hashName(cn, "2026-11-22T00:00:00.000Z")
			if kind == "facts" {
				name = cn + ".json"
			}
			add("puppetdb-bak/"+kind+"/"+name, []byte(body))
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, buf.Bytes())
}

// TestImportExportArchive: the reports of a PuppetDB export archive are
// imported (v8 as PuppetDB 7 writes them, v5 as PuppetDB 3/4 did), the
// other entries are skipped and counted. The archive's reports are the
// corpus's wire v8 reports, so importing the wire8 tree afterwards finds
// them all stored (the report hash survives the export).
func TestImportExportArchive(t *testing.T) {
	m, _ := testcorpus.LoadManifest(t)
	seen := map[string]bool{}
	var v8, v5 []*jsonv.Object
	for _, s := range m.Submissions {
		if seen[s.Wire8] {
			continue // the corpus's duplicate submission
		}
		seen[s.Wire8] = true
		v8 = append(v8, exportShape(corpusDoc(t, s.Wire8)))
		v5 = append(v5, v5Shape(corpusDoc(t, s.Wire8)))
	}
	others := map[string]int{"catalogs": 3, "facts": 4, "catalog_inputs": 2, "configure_expiration": 1}
	const skipped = "skipped archive entries: 2 catalog_inputs, 3 catalogs, 1 configure_expiration, 4 facts"
	for _, c := range []struct {
		name    string
		file    string
		version int
		reports []*jsonv.Object
	}{
		{"puppetdb 7 (store report v8)", "export.tar.gz", 8, v8},
		{"puppetdb 4 (store report v5), named by content only", "old-backup.bin", 5, v5},
	} {
		t.Run(c.name, func(t *testing.T) {
			archive := filepath.Join(t.TempDir(), c.file)
			writeExportArchive(t, archive, c.version, c.reports, others)
			dataDir := t.TempDir()
			code, out, stderr := importRun(t, "--data-dir", dataDir, archive)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
			}
			wantCounts(t, out, 149, 0, 0, 0)
			if !strings.Contains(out, skipped) {
				t.Errorf("summary lacks %q:\n%s", skipped, out)
			}
			if !strings.Contains(out, "from 150 files") { // the archive and its 149 reports
				t.Errorf("file count:\n%s", out)
			}
			code, out, _ = importRun(t, "--data-dir", dataDir, filepath.Join(corpusDir(t), "wire8"))
			if code != 0 {
				t.Fatalf("wire8 after the archive: exit %d\n%s", code, out)
			}
			wantCounts(t, out, 0, 149, 0, 0)
			// events survive: the stored events equal those of the wire8 reports
			events := queryStore(t, dataDir, "/pdb/query/v4/events", eventCount)
			ref := t.TempDir()
			importRun(t, "--data-dir", ref, filepath.Join(corpusDir(t), "wire8"))
			want := queryStore(t, ref, "/pdb/query/v4/events", eventCount)
			if events[0]["count"] != want[0]["count"] {
				t.Errorf("%v events stored from the archive, %v from the wire8 tree", events[0]["count"], want[0]["count"])
			}
		})
	}

	t.Run("unsupported version", func(t *testing.T) {
		archive := filepath.Join(t.TempDir(), "export.tar.gz")
		writeExportArchive(t, archive, 3, v8[:2], nil)
		code, out, _ := importRun(t, "--data-dir", t.TempDir(), archive)
		if code != 1 {
			t.Fatalf("exit %d\n%s", code, out)
		}
		wantCounts(t, out, 0, 0, 2, 0)
		if !strings.Contains(out, "store report version 3; versions 5 to 8 can be imported") {
			t.Errorf("reason:\n%s", out)
		}
	})
	t.Run("truncated", func(t *testing.T) {
		archive := filepath.Join(t.TempDir(), "export.tar.gz")
		writeExportArchive(t, archive, 8, v8[:20], nil)
		data, _ := os.ReadFile(archive)
		writeFile(t, archive, data[:len(data)/2])
		code, out, _ := importRun(t, "--data-dir", t.TempDir(), archive)
		if code != 1 || !strings.Contains(out, "corrupt archive") && !strings.Contains(out, "not valid gzip") {
			t.Fatalf("exit %d\n%s", code, out)
		}
		if summaryCount(t, out, "stored") == 0 {
			t.Errorf("nothing stored before the damage:\n%s", out)
		}
	})
}

// TestImportYAML imports Puppet's reportdir layout
// (<certname>/<YYYYMMDDHHMM>.yaml) through puppetreport.ParseYAML.
func TestImportYAML(t *testing.T) {
	sample, err := os.ReadFile(filepath.Join(testcorpus.SharedDir(t), "clients", "samples", "puppet-report-yaml", "yaml01.example.com-202611212344.yaml"))
	if os.IsNotExist(err) {
		sample, err = os.ReadFile("/work/shared/clients/samples/puppet-report-yaml/yaml01.example.com-202611212344.yaml")
	}
	if err != nil {
		t.Fatal(err)
	}
	reportdir := t.TempDir()
	writeFile(t, filepath.Join(reportdir, "yaml01.example.com", "202611212344.yaml"), sample)
	writeFile(t, filepath.Join(reportdir, "yaml02.example.com", "202611212345.yaml"),
		bytes.ReplaceAll(sample, []byte("host: yaml01.example.com"), []byte("host: yaml02.example.com")))
	writeFile(t, filepath.Join(reportdir, "broken.example.com", "202611212346.yaml"), []byte("--- !ruby/object:Puppet::Transaction::Report\nhost: [\n"))
	writeFile(t, filepath.Join(reportdir, "other.example.com", "202611212347.yaml"), []byte("--- !ruby/object:Puppet::Node::Facts\nname: other\n"))

	dataDir := t.TempDir()
	code, out, _ := importRun(t, "--data-dir", dataDir, reportdir)
	if code != 1 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	wantCounts(t, out, 2, 0, 2, 0)
	for _, f := range []string{"broken.example.com/202611212346.yaml: Invalid Puppet YAML report", "other.example.com/202611212347.yaml: Invalid Puppet YAML report"} {
		if !strings.Contains(out, f) {
			t.Errorf("summary lacks %q:\n%s", f, out)
		}
	}
	rows := queryStore(t, dataDir, "/pdb/query/v4/reports", `["extract",["certname","status","end_time","producer_timestamp"],["=","type","any"]]`)
	if len(rows) != 2 {
		t.Fatalf("rows: %v", rows)
	}
	for _, r := range rows {
		if r["status"] != "failed" || r["producer_timestamp"] != r["end_time"] {
			t.Errorf("stored: %v", r)
		}
	}
	code, out, _ = importRun(t, "--data-dir", dataDir, filepath.Join(reportdir, "yaml01.example.com"))
	if code != 0 {
		t.Fatalf("re-import: exit %d\n%s", code, out)
	}
	wantCounts(t, out, 0, 1, 0, 0)
}

// TestImportServer sends reports to a reportdb API over HTTP: they arrive,
// a 400 is a rejection with the server's message, a 503 is retried, and an
// unreachable server is a failure after the retries.
func TestImportServer(t *testing.T) {
	m, dir := testcorpus.LoadManifest(t)
	const rejectCert = "db01.prod.example.com"
	const flakyCert = "web01.prod.example.com"
	seen := map[string]bool{}
	files := map[string]string{} // wire8 file -> certname
	for _, s := range m.Submissions {
		files[s.Wire8] = s.Certname
	}
	in := t.TempDir()
	var wantRejected, wantFlaky, wantAccepted int
	for f, cn := range files {
		writeFile(t, filepath.Join(in, f), testcorpus.ReadFile(t, filepath.Join(dir, f)))
		switch cn {
		case rejectCert:
			wantRejected++
		case flakyCert:
			wantFlaky++
			wantAccepted++
		default:
			wantAccepted++
		}
	}
	// three Puppet reports too, converted to v8 on the way
	var f10 int
	for _, s := range m.Submissions {
		if s.Certname == "mon01.example.com" && !seen[s.Format10] && f10 < 3 {
			seen[s.Format10] = true
			f10++
			writeFile(t, filepath.Join(in, s.Format10), testcorpus.ReadFile(t, filepath.Join(dir, s.Format10)))
		}
	}
	wantAccepted += f10
	if wantRejected == 0 || wantFlaky == 0 || f10 != 3 {
		t.Fatalf("corpus: %d reports of %s, %d of %s, %d format 10", wantRejected, rejectCert, wantFlaky, flakyCert, f10)
	}

	db, err := sqlite.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	api := storetest.NewServer(t, db)
	var mu sync.Mutex
	attempts := map[string]int{}
	var retried, gzipped, requests int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		sum := sha1.Sum(body)
		mu.Lock()
		requests++
		if r.Header.Get("Content-Encoding") == "gzip" {
			gzipped++
		}
		attempts[string(sum[:])]++
		first := attempts[string(sum[:])] == 1
		mu.Unlock()
		switch r.URL.Query().Get("certname") {
		case rejectCert:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			msg, _ := json.Marshal(map[string]string{"error": `Command "store report" for certname "` + rejectCert + `" is invalid. Go away.`})
			w.Write(msg)
			return
		case flakyCert:
			if first {
				mu.Lock()
				retried++
				mu.Unlock()
				http.Error(w, "busy", http.StatusServiceUnavailable)
				return
			}
		}
		api.ServeHTTP(w, r)
	}))
	defer srv.Close()

	code, out, stderr := importRun(t, "--server", srv.URL, "--connections", "3", "--retry-delay", "1ms", in)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (rejections)\n%s\n%s", code, out, stderr)
	}
	if got := summaryCount(t, out, "accepted"); got != wantAccepted {
		t.Errorf("accepted %d, want %d\n%s", got, wantAccepted, out)
	}
	wantCounts(t, out, -1, -1, wantRejected, 0)
	if !strings.Contains(out, "rejected by the server (400): Command \"store report\" for certname \""+rejectCert+"\" is invalid. Go away.") {
		t.Errorf("the server's message is not shown:\n%s", out)
	}
	if retried != wantFlaky {
		t.Errorf("%d requests answered 503, want %d", retried, wantFlaky)
	}
	if gzipped != requests {
		t.Errorf("%d of %d requests gzipped", gzipped, requests)
	}
	rows := getRows(t, api, "/pdb/query/v4/reports", countQuery)
	if got := int(rows[0]["count"].(float64)); got != wantAccepted {
		t.Errorf("%d reports arrived, want %d", got, wantAccepted)
	}

	t.Run("unreachable", func(t *testing.T) {
		dead := httptest.NewServer(http.NotFoundHandler())
		deadURL := dead.URL
		dead.Close()
		one := t.TempDir()
		for _, s := range m.Submissions[:2] {
			writeFile(t, filepath.Join(one, s.Wire8), testcorpus.ReadFile(t, filepath.Join(dir, s.Wire8)))
		}
		code, out, _ := importRun(t, "--server", deadURL, "--retries", "2", "--retry-delay", "1ms", one)
		if code != 1 {
			t.Fatalf("exit %d\n%s", code, out)
		}
		wantCounts(t, out, -1, -1, 0, 2)
		if !strings.Contains(out, "(after 3 attempts)") {
			t.Errorf("retries not reported:\n%s", out)
		}
	})
}

// TestImportProgressLines: without a terminal, progress is plain lines on
// stderr.
func TestImportProgressLines(t *testing.T) {
	var out, errb bytes.Buffer
	code := run([]string{"import", "--data-dir", t.TempDir(), "--progress-interval", "3ms",
		filepath.Join(corpusDir(t), "format10"), filepath.Join(corpusDir(t), "wire8")}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	lineRE := regexp.MustCompile(`^read \d+ reports, (\d+)/298 files, [\d.]+ MB/[\d.]+ MB \(\d+%\), \d+ reports/s, [\d.]+ MB/s, ETA (\S+)$`)
	var lines int
	for _, l := range strings.Split(errb.String(), "\n") {
		if lineRE.MatchString(l) {
			lines++
		}
	}
	if lines == 0 {
		t.Errorf("no progress lines on stderr:\n%s", errb.String())
	}
	if strings.Contains(errb.String(), "\r") || strings.Contains(errb.String(), "\x1b[") {
		t.Errorf("terminal control codes without a terminal:\n%q", errb.String())
	}
	if !strings.HasPrefix(out.String(), "read 298 reports from 298 files in ") {
		t.Errorf("summary: %s", out.String())
	}
}

func TestImportUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "no PATH to import given"},
		{[]string{"--progress", "fancy", "x"}, 2, "--progress must be"},
		{[]string{"--server", "ftp://host", "x"}, 2, "--server must be an http"},
		{[]string{"--server", "http://host", "--dry-run", "x"}, 2, "exclude each other"},
		{[]string{"--cert", "c.pem", "x"}, 2, "--cert and --key go together"},
		{[]string{"--bogus"}, 2, "flag provided but not defined"},
		{[]string{"-h"}, 0, "producer_timestamp"},
	} {
		var out, errb bytes.Buffer
		code := run(append([]string{"import"}, c.args...), &out, &errb)
		if code != c.code || !strings.Contains(errb.String(), c.want) {
			t.Errorf("import %v: exit %d, stderr:\n%s\nwant exit %d and %q", c.args, code, errb.String(), c.code, c.want)
		}
	}
}

// TestImportDryRun validates without storing.
func TestImportDryRun(t *testing.T) {
	dataDir := t.TempDir()
	code, out, _ := importRun(t, "--dry-run", "--data-dir", dataDir, filepath.Join(corpusDir(t), "format10"))
	if code != 0 || !strings.Contains(out, "valid:       149 (dry run") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if entries, _ := os.ReadDir(dataDir); len(entries) != 0 {
		t.Errorf("dry run wrote to the data dir: %v", entries)
	}
}
