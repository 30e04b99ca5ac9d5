package store_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
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

func (f *fakeBackend) Housekeeping() store.Housekeeping {
	return store.Housekeeping{Maintainer: f}
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

// stepsBackend records two steps into its context's Steps, one of them
// twice, as a backend timing its retention does.
type stepsBackend struct{ store.Backend }

func (stepsBackend) Housekeeping() store.Housekeeping { return store.Housekeeping{} }

func (stepsBackend) DeleteReportsBefore(ctx context.Context, _ int64) (int64, error) {
	store.AddStep(ctx, "drop", 1500*time.Millisecond)
	store.AddStep(ctx, "batches", 20*time.Millisecond)
	store.AddStep(ctx, "batches", 30*time.Millisecond)
	return 7, nil
}

// A run that deleted something says in its log line where the time went:
// its steps in the order they ran, repeated steps added up and counted.
func TestRetentionLogsSteps(t *testing.T) {
	var buf bytes.Buffer
	r := &store.Retention{Backend: stepsBackend{}, TTL: time.Hour, Log: slog.New(slog.NewTextHandler(&buf, nil))}
	if n, err := r.RunOnce(context.Background()); err != nil || n != 7 {
		t.Fatalf("RunOnce: %d, %v", n, err)
	}
	if want := `steps="drop=1.5s batches×2=50ms"`; !strings.Contains(buf.String(), want) {
		t.Errorf("log line %q lacks %s", buf.String(), want)
	}
}

// AddStep without Steps in the context (a caller other than RunOnce)
// does nothing, and an empty Steps renders as "".
func TestStepsWithoutRun(t *testing.T) {
	store.AddStep(context.Background(), "x", time.Second)
	var s store.Steps
	if got := s.String(); got != "" {
		t.Errorf("empty steps render as %q", got)
	}
	ctx := store.WithSteps(context.Background(), &s)
	store.TimeStep(ctx, "y")()
	if got := s.String(); !strings.HasPrefix(got, "y=") {
		t.Errorf("timed step renders as %q", got)
	}
}
