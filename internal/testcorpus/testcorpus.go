// Package testcorpus locates and loads the shared report corpus and the
// conformance goldens (../shared beside the project) for tests.
package testcorpus

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"reportdb/jsonv"
)

// SharedDir returns the shared reference directory: $REPORTDB_SHARED, else
// ../shared beside the module root, else the copy in testdata/shared.
// Tests fail, never skip, when none is present: the corpus is part of the
// test contract.
func SharedDir(tb testing.TB) string {
	tb.Helper()
	if d := os.Getenv("REPORTDB_SHARED"); d != "" {
		return d
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	for _, d := range []string{filepath.Join(root, "..", "shared"), filepath.Join(root, "testdata", "shared")} {
		if _, err := os.Stat(filepath.Join(d, "corpus", "manifest.json")); err == nil {
			return d
		}
	}
	tb.Fatalf("shared corpus not found beside %s or in testdata/shared (set REPORTDB_SHARED)", root)
	return ""
}

// Submission is one entry of corpus/manifest.json.
type Submission struct {
	Certname          string `json:"certname"`
	Environment       string `json:"environment"`
	Format10          string `json:"format10"`
	Wire8             string `json:"wire8"`
	ProducerTimestamp string `json:"producer_timestamp"`
	Producer          string `json:"producer"`
	Kind              string `json:"kind"`
	Note              string `json:"note"`
}

// Manifest is corpus/manifest.json.
type Manifest struct {
	Reports     int          `json:"reports"`
	Submissions []Submission `json:"submissions"`
}

// LoadManifest reads the corpus manifest.
func LoadManifest(tb testing.TB) (Manifest, string) {
	tb.Helper()
	dir := filepath.Join(SharedDir(tb), "corpus")
	var m Manifest
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		tb.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		tb.Fatal(err)
	}
	return m, dir
}

// ReadFile reads a corpus file, gunzipping *.gz.
func ReadFile(tb testing.TB, path string) []byte {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if filepath.Ext(path) == ".gz" {
		zr, err := gzip.NewReader(f)
		if err != nil {
			tb.Fatal(err)
		}
		r = zr
	}
	b, err := io.ReadAll(r)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// Case is one conformance case (conformance/cases.jsonl).
type Case struct {
	ID                 string          `json:"id"`
	Endpoint           string          `json:"endpoint"`
	Method             string          `json:"method"`
	Path               string          `json:"path"`
	Request            CaseRequest     `json:"request"`
	Order              CaseOrder       `json:"order"`
	Error              bool            `json:"error"`
	BetterThanPuppetDB string          `json:"better_than_puppetdb"`
	Expect             CaseExpectation `json:"expect"`
}

// CaseRequest is the exact request of a case.
type CaseRequest struct {
	Method  string            `json:"method"`
	Target  string            `json:"target"`
	Headers map[string]string `json:"headers"`
	BodyRaw *string           `json:"body_raw"`
}

// CaseOrder says how result rows are compared.
type CaseOrder struct {
	Mode string   `json:"mode"`
	Keys []string `json:"keys"`
}

// CaseExpectation is the golden answer.
type CaseExpectation struct {
	Status      int             `json:"status"`
	ContentType string          `json:"content_type"`
	XRecords    *int            `json:"x_records"`
	BodyKind    string          `json:"body_kind"`
	Body        json.RawMessage `json:"body"`
}

// LoadCases reads conformance/cases.jsonl.
func LoadCases(tb testing.TB) []Case {
	tb.Helper()
	f, err := os.Open(filepath.Join(SharedDir(tb), "conformance", "cases.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []Case
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var c Case
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			tb.Fatal(err)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// JSON parses a JSON literal of a test (a query, say) with reportdb's
// order-preserving parser; "" is nil (no query). A bad literal fails the
// test.
func JSON(tb testing.TB, s string) any {
	tb.Helper()
	if s == "" {
		return nil
	}
	v, err := jsonv.Parse([]byte(s))
	if err != nil {
		tb.Fatalf("bad JSON %s: %v", s, err)
	}
	return v
}
