package fleet

import (
	"encoding/json"
	"os"

	"reportdb/jsonv"
	"testing"
)

func runTimeStd(metrics []byte) (float64, bool) {
	var ms []struct {
		Category string  `json:"category"`
		Name     string  `json:"name"`
		Value    float64 `json:"value"`
	}
	if json.Unmarshal(metrics, &ms) != nil {
		return 0, false
	}
	for _, m := range ms {
		if m.Category == "time" && m.Name == "total" {
			return m.Value, true
		}
	}
	return 0, false
}

func BenchmarkRunTime(b *testing.B) {
	m, err := os.ReadFile("testdata/metrics.json")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("encoding/json", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			runTimeStd(m)
		}
	})
	b.Run("runTime", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			runTime(m)
		}
	})
}

func TestRunTime(t *testing.T) {
	m, err := os.ReadFile("testdata/metrics.json")
	if err != nil {
		t.Fatal(err)
	}
	want, wantOK := runTimeStd(m)
	if got, ok := runTime(m); !wantOK || got != want || !ok {
		t.Fatalf("runTime = %v %v, encoding/json %v %v", got, ok, want, wantOK)
	}
	for _, c := range []struct {
		in    string
		v     float64
		found bool
	}{
		{`[]`, 0, false},
		{`[{"name": "total", "value": 12.5, "category": "time"}]`, 12.5, true},
		{` [ {"category":"time","name":"total","value":-1e3} ] `, -1000, true},
		{`[{"name": "total", "value": 1, "category": "resources"}, {"name": "total", "value": 2, "category": "time"}, {"name": "total", "value": 3, "category": "time"}]`, 2, true},
		{`[{"name": "total", "value": "7", "category": "time"}]`, 0, false},
		{`[{"name": "tot\u0061l", "value": 4, "category": "time", "x": {"a": [1, "b\"", null]}}]`, 4, true},
		{`[{"name": "total", "value": 1, "category": "time", "name": "other"}]`, 0, false},
		{`[{"name": 5, "value": 1, "category": "time"}]`, 0, false},
		{`{"name": "total"}`, 0, false},
		{`[{"name": "total", "value": 1, "category": "time"}`, 0, false},
	} {
		v, found := runTime([]byte(c.in))
		if v != c.v || found != c.found {
			t.Errorf("%s: %v %v, want %v %v", c.in, v, found, c.v, c.found)
		}
		if pv, pf := parseRunTime([]byte(c.in)); pv != v || pf != found {
			t.Errorf("%s: scan %v %v, parse %v %v", c.in, v, found, pv, pf)
		}
	}
}

// FuzzRunTime: wherever the scan decides, on valid JSON, it answers as
// the parse.
func FuzzRunTime(f *testing.F) {
	if m, err := os.ReadFile("testdata/metrics.json"); err == nil {
		f.Add(m)
	}
	f.Add([]byte(`[{"name": "total", "value": 12.5, "category": "time"}, {"a": [{"b": "c\\"d"}]}]`))
	f.Add([]byte(`[{"name": "tot\u0061l", "value": 1e2, "category": "time"}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := jsonv.Parse(b); err != nil {
			return
		}
		v, found, ok := scanRunTime(b)
		if !ok {
			return
		}
		pv, pf := parseRunTime(b)
		if v != pv || found != pf {
			t.Fatalf("%q: scan %v %v, parse %v %v", b, v, found, pv, pf)
		}
	})
}
