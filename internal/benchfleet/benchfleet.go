// Package benchfleet builds larger report sets for benchmarks by copying
// the shared corpus: copy k of a report gets certname "nKKK-<certname>"
// and all its times shifted by k hours, so every copy has its own hash
// and the copies keep the corpus's mix of events, statuses and sizes.
package benchfleet

import (
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"reportdb/internal/testcorpus"
)

var timeRE = regexp.MustCompile(`"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2}))"`)

// Report is one wire v8 payload with its certname.
type Report struct {
	Certname string
	Body     []byte
}

// Wire8 returns copies×149 distinct wire v8 reports.
func Wire8(tb testing.TB, copies int) []Report {
	tb.Helper()
	m, dir := testcorpus.LoadManifest(tb)
	var base []Report
	seen := map[string]bool{}
	for _, s := range m.Submissions {
		if seen[s.Wire8] {
			continue
		}
		seen[s.Wire8] = true
		base = append(base, Report{s.Certname, testcorpus.ReadFile(tb, filepath.Join(dir, s.Wire8))})
	}
	out := make([]Report, 0, copies*len(base))
	for k := 0; k < copies; k++ {
		shift := time.Duration(k) * time.Hour
		for _, r := range base {
			cn := fmt.Sprintf("n%03d-%s", k, r.Certname)
			body := bytes.Replace(r.Body, []byte(`"certname":"`+r.Certname+`"`), []byte(`"certname":"`+cn+`"`), 1)
			body = timeRE.ReplaceAllFunc(body, func(b []byte) []byte {
				t, err := time.Parse(time.RFC3339Nano, string(b[1:len(b)-1]))
				if err != nil {
					return b
				}
				return []byte(`"` + t.Add(shift).UTC().Format("2006-01-02T15:04:05.000Z") + `"`)
			})
			out = append(out, Report{cn, body})
		}
	}
	return out
}
