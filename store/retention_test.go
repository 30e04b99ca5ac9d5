package store_test

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"reportdb/store"
)

type fakeBackend struct {
	store.Backend // only the methods below are used
	deletes       atomic.Int32
	maintains     atomic.Int32
	done          chan struct{}
}

func (f *fakeBackend) DeleteReportsBefore(context.Context, int64) (int64, error) {
	f.deletes.Add(1)
	return 0, nil
}

func (f *fakeBackend) Maintain(context.Context) ([]string, error) {
	if f.maintains.Add(1) == 2 {
		close(f.done)
	}
	return []string{"t"}, nil
}

// Maintenance runs every interval, also when retention is disabled, and
// after retention when it is enabled.
func TestRetentionRunsMaintenance(t *testing.T) {
	for _, ttl := range []time.Duration{0, time.Hour} {
		f := &fakeBackend{done: make(chan struct{})}
		ctx, cancel := context.WithCancel(context.Background())
		r := &store.Retention{Backend: f, TTL: ttl, Interval: 5 * time.Millisecond, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
		finished := make(chan struct{})
		go func() { r.Run(ctx); close(finished) }()
		select {
		case <-f.done:
		case <-time.After(10 * time.Second):
			t.Fatalf("ttl %v: maintenance did not run twice", ttl)
		}
		cancel()
		<-finished
		if ttl == 0 && f.deletes.Load() != 0 {
			t.Errorf("retention ran with ttl 0")
		}
		if ttl > 0 && f.deletes.Load() < 2 {
			t.Errorf("ttl %v: retention ran %d times before the second maintenance", ttl, f.deletes.Load())
		}
	}
}
