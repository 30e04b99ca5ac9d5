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
	steps []step // in the order they first ran (a run has a dozen or so)
}

type step struct {
	name  string
	took  time.Duration
	count int
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
	for i := range s.steps {
		if s.steps[i].name == name {
			s.steps[i].took += d
			s.steps[i].count++
			return
		}
	}
	s.steps = append(s.steps, step{name: name, took: d, count: 1})
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
	for i, st := range s.steps {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(st.name)
		if st.count > 1 {
			b.WriteString("×" + strconv.Itoa(st.count))
		}
		b.WriteString("=" + roundStep(st.took).String())
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
