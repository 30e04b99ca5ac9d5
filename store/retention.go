package store

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"time"
)

// ErrBusy is returned by DeleteReportsBefore when another instance is
// running retention right now (PostgreSQL); the run is simply skipped.
var ErrBusy = errors.New("retention is running in another instance")

// Maintainer is a backend's periodic housekeeping (the PostgreSQL backend
// VACUUMs closed day partitions; Housekeeping.Maintainer). Maintain
// returns what it worked on.
type Maintainer interface {
	Maintain(ctx context.Context) ([]string, error)
}

// Retention deletes reports older than TTL (PuppetDB's report-ttl) every
// Interval, starting one interval after Run is called (as PuppetDB's
// garbage collection does), then runs the backend's maintenance, if it has
// any (also when retention is disabled).
type Retention struct {
	Backend  Backend
	TTL      time.Duration // <= 0 disables retention
	Interval time.Duration
	Now      func() time.Time
	Log      *slog.Logger
	// OnRun, when set, is told about each run (for metrics).
	OnRun func(deleted int64, d time.Duration, err error)
	// NodeTTL expires the nodes without a report for that long
	// (PuppetDB's node-ttl); <= 0: nodes never expire.
	NodeTTL time.Duration
	// PurgeTTL deletes the nodes deactivated or expired that long ago,
	// with their reports (node-purge-ttl), at most PurgeBatch a run
	// (node-purge-gc-batch-limit); <= 0: never.
	PurgeTTL   time.Duration
	PurgeBatch int
}

// Run loops until ctx ends.
func (r *Retention) Run(ctx context.Context) {
	maintains := r.Backend.Housekeeping().Maintainer != nil
	nodes := r.NodeTTL > 0 || (r.PurgeTTL > 0 && r.PurgeBatch > 0)
	if r.Interval <= 0 || (r.TTL <= 0 && !maintains && !nodes) {
		return
	}
	Every(ctx, r.Interval, func() {
		r.Nodes(ctx)
		if r.TTL > 0 {
			r.RunOnce(ctx)
		}
		r.Maintain(ctx)
	})
}

// Every calls fn each interval, the first time one interval from now,
// until ctx ends.
func Every(ctx context.Context, interval time.Duration, fn func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			fn()
		}
	}
}

// RunOnce deletes what has expired now.
func (r *Retention) RunOnce(ctx context.Context) (int64, error) {
	start := time.Now()
	cutoff := r.now().Add(-r.TTL).UnixMilli()
	var steps Steps
	n, err := r.Backend.DeleteReportsBefore(WithSteps(ctx, &steps), cutoff)
	if r.OnRun != nil {
		r.OnRun(n, time.Since(start), err)
	}
	switch {
	case errors.Is(err, ErrBusy):
		r.Log.Debug("retention skipped: running elsewhere")
	case err != nil:
		r.Log.Error("retention failed", "err", err, "steps", steps.String())
	default:
		args := []any{"deleted_reports", n, "cutoff", time.UnixMilli(cutoff).UTC().Format(time.RFC3339), "took", time.Since(start).Round(time.Millisecond)}
		if n > 0 {
			// where the time went, when there was something to delete
			args = append(args, "steps", steps.String())
		}
		r.Log.Info("retention", args...)
	}
	return n, err
}

// now is Now, or the clock.
func (r *Retention) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Nodes expires the nodes without a recent report and purges those
// inactive for longer than PurgeTTL, as PuppetDB's garbage collection
// does (auto-expire-nodes!, purge-nodes!).
func (r *Retention) Nodes(ctx context.Context) {
	t := r.now()
	if r.NodeTTL > 0 {
		expired, err := r.Backend.ExpireNodes(ctx, t.Add(-r.NodeTTL).UnixMilli(), t.UnixMilli())
		switch {
		case errors.Is(err, ErrBusy):
		case err != nil:
			r.Log.Error("node expiry failed", "err", err)
		case len(expired) > 0:
			r.Log.Info("expired nodes without a report", "nodes", len(expired), "certnames", firstNames(expired), "node_ttl", r.NodeTTL)
		}
	}
	if r.PurgeTTL > 0 && r.PurgeBatch > 0 {
		purged, err := r.Backend.PurgeNodes(ctx, t.Add(-r.PurgeTTL).UnixMilli(), r.PurgeBatch)
		switch {
		case errors.Is(err, ErrBusy):
		case err != nil:
			r.Log.Error("node purge failed", "err", err)
		case len(purged) > 0:
			r.Log.Info("purged inactive nodes", "nodes", len(purged), "certnames", firstNames(purged), "node_purge_ttl", r.PurgeTTL)
		}
	}
}

// firstNames is names for a log line: the first few, then how many more.
func firstNames(names []string) string {
	const show = 10
	if len(names) <= show {
		return strings.Join(names, ",")
	}
	return strings.Join(names[:show], ",") + ",… (" + strconv.Itoa(len(names)-show) + " more)"
}

// Maintain runs the backend's housekeeping, if it has any.
func (r *Retention) Maintain(ctx context.Context) {
	m := r.Backend.Housekeeping().Maintainer
	if m == nil {
		return
	}
	start := time.Now()
	did, err := m.Maintain(ctx)
	if err != nil {
		r.Log.Error("maintenance failed", "err", err)
		return
	}
	if len(did) > 0 {
		r.Log.Info("maintenance", "vacuumed", did, "took", time.Since(start).Round(time.Millisecond))
	}
}
