package store

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Steps records how long the named steps of one run took (retention's:
// dropping day partitions, the batches of the cutoff day, the keys, ...),
// so that a run's log line says where its time went. A backend adds to the
// Steps of its context with AddStep; RunOnce puts one there and logs it.
type Steps struct {
	mu    sync.Mutex
	names []string
	took  map[string]time.Duration
	count map[string]int
}

type stepsKey struct{}

// WithSteps returns ctx carrying s.
func WithSteps(ctx context.Context, s *Steps) context.Context {
	return context.WithValue(ctx, stepsKey{}, s)
}

// AddStep adds d to the step called name of the Steps ctx carries (steps
// with one name add up, and count how often they ran); without Steps it
// does nothing.
func AddStep(ctx context.Context, name string, d time.Duration) {
	s, _ := ctx.Value(stepsKey{}).(*Steps)
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.took == nil {
		s.took, s.count = map[string]time.Duration{}, map[string]int{}
	}
	if _, ok := s.took[name]; !ok {
		s.names = append(s.names, name)
	}
	s.took[name] += d
	s.count[name]++
}

// TimeStep returns a function that, called, adds the time since TimeStep
// was called to the step called name: defer store.TimeStep(ctx, "x")().
func TimeStep(ctx context.Context, name string) func() {
	start := time.Now()
	return func() { AddStep(ctx, name, time.Since(start)) }
}

// String renders the steps in the order they first ran, as
// "name=1.2s name×3=40ms" (×N when a step ran N > 1 times); "" for none.
func (s *Steps) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for i, name := range s.names {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(name)
		if n := s.count[name]; n > 1 {
			b.WriteString("×" + strconv.Itoa(n))
		}
		b.WriteString("=" + roundStep(s.took[name]).String())
	}
	return b.String()
}

// roundStep rounds d to a precision readable in a log line: milliseconds
// under a minute, tenths of a second above.
func roundStep(d time.Duration) time.Duration {
	if d >= time.Minute {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}
