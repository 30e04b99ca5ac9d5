package wire_test

import (
	"path/filepath"
	"testing"

	"reportdb/internal/testcorpus"
	"reportdb/jsonv"
	"reportdb/wire"
)

// BenchmarkDecode measures the per-report CPU of ingest before storage:
// JSON parse, validation, normalisation, event derivation, blob rendering
// and hashing, over the corpus's wire v8 reports.
func BenchmarkDecode(b *testing.B) {
	m, dir := testcorpus.LoadManifest(b)
	var bodies [][]byte
	total := 0
	for _, s := range m.Submissions {
		body := testcorpus.ReadFile(b, filepath.Join(dir, s.Wire8))
		bodies = append(bodies, body)
		total += len(body)
	}
	b.SetBytes(int64(total / len(bodies)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		body := bodies[i%len(bodies)]
		v, err := jsonv.Parse(body)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := wire.Decode(8, v, 0); err != nil {
			b.Fatal(err)
		}
	}
}
