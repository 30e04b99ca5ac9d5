package wire

import (
	"math/rand"
	"testing"
	"time"
)

// TestAppendMillisLikeTime: the digit-by-digit rendering is the one of
// time.Time.AppendFormat, for the edges of its range, leap days, negative
// times and random instants over years 0-9999.
func TestAppendMillisLikeTime(t *testing.T) {
	want := func(ms int64) string {
		return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
	}
	cases := []int64{0, -1, 1, 999, -999, -1000, 86399999, 86400000, -86400000, -86400001,
		951782400000, 951868799999, 4107542400000, 1768478400123, -62167219200000, -62167219200001,
		253402300799999, 253402300800000, -62135596800000, 1 << 62, -(1 << 62)}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 200000; i++ {
		cases = append(cases, rng.Int63n(253402300800000+62167219200000)-62167219200000)
	}
	for _, ms := range cases {
		if got := string(AppendMillis(nil, ms)); got != want(ms) {
			t.Fatalf("%d: got %s, want %s", ms, got, want(ms))
		}
	}
}

func BenchmarkAppendMillis(b *testing.B) {
	buf := make([]byte, 0, 64)
	for i := 0; i < b.N; i++ {
		buf = AppendMillis(buf[:0], 1768478400123+int64(i))
	}
}
