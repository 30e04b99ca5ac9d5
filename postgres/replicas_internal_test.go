package postgres

import (
	"testing"
	"time"
)

// TestLagOf: a replica's lag is how long ago the primary first wrote past
// what it replayed; caught up is no lag however old the last write.
func TestLagOf(t *testing.T) {
	t0 := time.Unix(1000, 0)
	rs := &replicaSet{samples: []walSample{{t0, 100}, {t0.Add(time.Second), 200}, {t0.Add(3 * time.Second), 300}}}
	now := t0.Add(10 * time.Second)
	for _, c := range []struct {
		replayed uint64
		want     time.Duration
	}{
		{300, 0},               // everything the primary wrote
		{400, 0},               // past the last sample
		{250, 7 * time.Second}, // first passed at t0+3s
		{200, 7 * time.Second}, // 200 replayed: 300 is missing
		{150, 9 * time.Second}, // missing 200 (t0+1s)
		{50, 10 * time.Second}, // missing everything kept
	} {
		if got := rs.lagOf(c.replayed, now); got != c.want {
			t.Errorf("replayed %d: lag %v, want %v", c.replayed, got, c.want)
		}
	}
}
