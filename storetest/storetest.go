// Package storetest is the contract suite every storage backend runs: the
// shared PuppetDB conformance goldens replayed through the real HTTP API,
// and the storage semantics (duplicates, latest report, isolation of a
// failing report in a batch, retention). A behaviour difference between
// backends is a failing test here.
package storetest

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"reportdb/engine"
	"reportdb/httpapi"
	"reportdb/ingest"
	"reportdb/internal/conformance"
	"reportdb/internal/testcorpus"
)

// Opener returns a new, empty backend for one test; the suite closes it.
type Opener func(t *testing.T) engine.Backend

// NewServer builds the HTTP API over backend.
func NewServer(t *testing.T, backend engine.Backend) http.Handler {
	return NewServerWithLimit(t, backend, 0)
}

// NewServerWithLimit builds the HTTP API with a body size limit (0: default).
func NewServerWithLimit(t *testing.T, backend engine.Backend, maxBody int64) http.Handler {
	h, closeFn := NewHandler(backend, maxBody)
	t.Cleanup(closeFn)
	return h
}

// NewHandler builds the HTTP API over backend; call the returned function
// to stop its committer.
func NewHandler(backend engine.Backend, maxBody int64) (http.Handler, func()) {
	c := ingest.NewCommitter(backend, 64)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	return httpapi.New(httpapi.Config{MaxBodyBytes: maxBody}, backend, c, log), c.Close
}

// Run runs the whole contract suite.
func Run(t *testing.T, open Opener) {
	t.Run("Conformance", func(t *testing.T) { RunConformance(t, open, conformance.LoadCorpus) })
	t.Run("ConformanceFormat10", func(t *testing.T) { RunConformance(t, open, conformance.LoadCorpusFormat10) })
	t.Run("Format10Equivalence", func(t *testing.T) { RunFormat10Equivalence(t, open) })
	t.Run("Storage", func(t *testing.T) { RunStorage(t, open) })
	t.Run("DayRollup", func(t *testing.T) { RunDayRollup(t, open) })
	t.Run("LatestOfNode", func(t *testing.T) { RunLatestOfNode(t, open) })
	t.Run("DistinctCounts", func(t *testing.T) { RunDistinctCounts(t, open) })
	t.Run("LongValues", func(t *testing.T) { RunLongValues(t, open) })
	t.Run("QueryLimits", func(t *testing.T) { RunQueryLimits(t, open) })
	t.Run("QueryTimeout", func(t *testing.T) { RunQueryTimeout(t, open) })
	t.Run("NodeLifecycle", func(t *testing.T) { RunNodeLifecycle(t, open) })
}

// Served reports whether a conformance case group (the "endpoint" field of
// cases.jsonl) is one of the API's routes (httpapi.Endpoints); every case
// of those must pass.
func Served(endpoint string) bool { return slices.Contains(httpapi.Endpoints(), endpoint) }

// RunConformance loads the corpus with load and replays every case of the
// served endpoints.
func RunConformance(t *testing.T, open Opener, load func(testing.TB, http.Handler)) {
	backend := open(t)
	h := NewServer(t, backend)
	load(t, h)
	cases := testcorpus.LoadCases(t)
	if len(cases) < 300 {
		t.Fatalf("only %d conformance cases loaded", len(cases))
	}
	ran := 0
	defer func() {
		if ran < 300 {
			t.Errorf("only %d conformance cases ran", ran)
		}
	}()
	for _, c := range cases {
		if !Served(c.Endpoint) {
			continue
		}
		ran++
		t.Run(c.ID, func(t *testing.T) {
			resp := conformance.Do(h, c)
			if problems := conformance.Compare(c, resp); len(problems) > 0 {
				t.Errorf("%s %s\n  %s", c.Request.Method, c.Request.Target, strings.Join(problems, "\n  "))
			}
		})
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return c
}
