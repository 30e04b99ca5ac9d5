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
	// Statements asks the backend to add its own waits and statements as
	// steps too (the slow-query log's breakdown of a request): "conn
	// wait" for a free connection of its pool, "sql" for running a
	// statement (until its last row is read, so a
	// query's rows streamed to a slow client count there). A backend
	// without such hooks (SQLite) adds none.
	Statements bool

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
	if s, _ := ctx.Value(stepsKey{}).(*Steps); s != nil {
		s.Add(name, d)
	}
}

// StatementSteps returns the Steps of ctx when they ask for the backend's
// statements (Steps.Statements), else nil.
func StatementSteps(ctx context.Context) *Steps {
	if s, _ := ctx.Value(stepsKey{}).(*Steps); s != nil && s.Statements {
		return s
	}
	return nil
}

// Add adds d to the step called name (see AddStep).
func (s *Steps) Add(name string, d time.Duration) {
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

// Step returns the time the step called name took in all, and how often
// it ran (0 if never).
func (s *Steps) Step(name string) (took time.Duration, count int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.steps {
		if st.name == name {
			return st.took, st.count
		}
	}
	return 0, 0
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
