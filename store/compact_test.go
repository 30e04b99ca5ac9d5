package store_test

import (
	"context"
	"testing"
	"time"

	"reportdb/store"
)

type fakeCompactor struct {
	store.Backend // only CompactRollups is used
	runs          chan struct{}
}

func (f *fakeCompactor) Housekeeping() store.Housekeeping {
	return store.Housekeeping{Compactor: f}
}

func (f *fakeCompactor) CompactRollups(context.Context) (int, error) {
	f.runs <- struct{}{}
	return 1, nil
}

// TestCompactionWhenIdle: a batch followed by Idle without another one
// compacts the rollups without waiting for the interval; nothing written,
// nothing compacted before the interval.
func TestCompactionWhenIdle(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := &fakeCompactor{runs: make(chan struct{}, 16)}
	c := &store.Compaction{Interval: time.Hour, Idle: 20 * time.Millisecond}
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx, f) }()

	select {
	case <-f.runs:
		t.Fatal("compacted with nothing written, before the interval")
	case <-time.After(100 * time.Millisecond):
	}
	for i := 0; i < 3; i++ {
		c.Wrote()
	}
	select {
	case <-f.runs:
	case <-time.After(10 * time.Second):
		t.Fatal("no compaction after ingest went idle")
	}
	// one burst, one compaction
	select {
	case <-f.runs:
		t.Fatal("a second compaction for the same burst")
	case <-time.After(100 * time.Millisecond):
	}
	c.Wrote()
	select {
	case <-f.runs:
	case <-time.After(10 * time.Second):
		t.Fatal("no compaction after the second burst")
	}
	cancel()
	<-done
}
