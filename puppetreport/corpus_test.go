package puppetreport_test

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reportdb/internal/testcorpus"
	"reportdb/jsonv"
	"reportdb/puppetreport"
)

func corpusDirOf(t testing.TB) string { return filepath.Join(testcorpus.SharedDir(t), "corpus") }

func samplesDirOf(t testing.TB) string {
	return filepath.Join(testcorpus.SharedDir(t), "clients", "samples", "puppet-report-format12")
}

// readJSON reads and parses a JSON file, gunzipping *.gz.
func readJSON(t testing.TB, path string) any {
	t.Helper()
	v, err := jsonv.Parse(readMaybeGzip(t, path))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

type submission struct {
	Format10          string `json:"format10"`
	Wire8             string `json:"wire8"`
	ProducerTimestamp string `json:"producer_timestamp"`
	Producer          string `json:"producer"`
}

func TestCorpus(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(corpusDirOf(t), "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var manifest struct {
		SubmissionsCount int          `json:"submissions_count"`
		Submissions      []submission `json:"submissions"`
	}
	if err := json.Unmarshal(raw, &manifest); err != nil {
		t.Fatal(err)
	}
	if len(manifest.Submissions) != 150 || manifest.SubmissionsCount != 150 {
		t.Fatalf("manifest has %d submissions (count %d), want 150", len(manifest.Submissions), manifest.SubmissionsCount)
	}
	for i, sub := range manifest.Submissions {
		producer := sub.Producer
		got, err := puppetreport.Convert(readJSON(t, filepath.Join(corpusDirOf(t), sub.Format10)),
			puppetreport.Options{ProducerTimestamp: sub.ProducerTimestamp, Producer: &producer})
		if err != nil {
			t.Errorf("submission %d %s: %v", i, sub.Format10, err)
			continue
		}
		want := readJSON(t, filepath.Join(corpusDirOf(t), sub.Wire8))
		assertSameJSON(t, sub.Wire8, got, want)
	}
}

// assertSameJSON compares compact renderings (key order and number text
// included) and points at the first difference.
func assertSameJSON(t *testing.T, name string, got, want any) {
	t.Helper()
	g, w := jsonv.Compact(got), jsonv.Compact(want)
	if g == w {
		return
	}
	i := 0
	for i < len(g) && i < len(w) && g[i] == w[i] {
		i++
	}
	lo := max(0, i-120)
	t.Errorf("%s differs at byte %d:\n got: ...%s\nwant: ...%s", name, i, g[lo:min(len(g), i+80)], w[lo:min(len(w), i+80)])
}

func TestFormat12Samples(t *testing.T) {
	wire := readJSON(t, filepath.Join(samplesDirOf(t), "web01-run2.pdb-wire.json")).(*jsonv.Object)
	pt, _ := wire.Get("producer_timestamp")
	pr, _ := wire.Get("producer")
	opt := puppetreport.Options{ProducerTimestamp: pt.(string)}
	if s, ok := pr.(string); ok {
		opt.Producer = &s
	}
	got, err := puppetreport.Convert(readJSON(t, filepath.Join(samplesDirOf(t), "web01-run2.json")), opt)
	if err != nil {
		t.Fatal(err)
	}
	// The .pdb-wire.json was built by the terminus from the in-memory report
	// (puppet apply), where File content checksums are binary strings; Puppet's
	// JSON writes those as base64, so from the JSON (what an agent sends) the
	// terminus itself gets base64 text. Accept exactly those differences.
	if n := undoBase64NewValues(got, wire); n != 3 {
		t.Errorf("%d base64-encoded new_values, want 3", n)
	}
	assertSameJSON(t, "web01-run2", got, wire)

	for _, name := range []string{"app01-run2.json", "db01-run3-noop.json"} {
		doc := readJSON(t, filepath.Join(samplesDirOf(t), name))
		out, err := puppetreport.Convert(doc, opt)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if rf, _ := out.Get("report_format"); rf != jsonv.Number("12") {
			t.Errorf("%s: report_format %v, want 12", name, rf)
		}
	}
}

// undoBase64NewValues replaces each event new_value of got that differs
// from want's but base64-decodes to it by the decoded text, and counts them.
func undoBase64NewValues(got, want *jsonv.Object) int {
	n := 0
	gr, _ := got.Get("resources")
	wr, _ := want.Get("resources")
	ga, wa := gr.([]any), wr.([]any)
	for i := 0; i < len(ga) && i < len(wa); i++ {
		ge, _ := ga[i].(*jsonv.Object).Get("events")
		we, _ := wa[i].(*jsonv.Object).Get("events")
		gea, wea := ge.([]any), we.([]any)
		for j := 0; j < len(gea) && j < len(wea); j++ {
			g, w := gea[j].(*jsonv.Object), wea[j].(*jsonv.Object)
			gv, _ := g.Get("new_value")
			wv, _ := w.Get("new_value")
			if gv == wv {
				continue
			}
			if dec, err := base64.StdEncoding.DecodeString(gv.(string)); err == nil && string(dec) == wv {
				g.Set("new_value", wv)
				n++
			}
		}
	}
	return n
}

func TestWireKeyOrder(t *testing.T) {
	out, err := puppetreport.Convert(baseReport(t), opts())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(out.Keys, ",") != strings.Join(puppetreport.WireKeys, ",") || len(out.Keys) != 21 {
		t.Fatalf("keys %v", out.Keys)
	}
}
