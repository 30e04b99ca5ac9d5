package store

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Compactor is implemented by backends that keep rollups as delta rows
// (see schema/rollup.go): CompactRollups merges the deltas of the
// buckets written since the last run, and returns how many buckets it
// merged. Answers do not depend on it; the number of rows a count reads
// does.
type Compactor interface {
	CompactRollups(ctx context.Context) (int, error)
}

// DefaultCompactInterval is how often rollups are compacted (a bucket
// then holds at most the deltas of one interval's batches).
const DefaultCompactInterval = 30 * time.Second

// DefaultCompactIdle is how long ingest must have been idle (no batch
// written) before Compaction merges what the burst wrote: the counts read
// after a burst then sum merged rows, not one delta per batch, without
// waiting for the next interval.
const DefaultCompactIdle = time.Second

// RunCompaction compacts b's rollups every interval until ctx ends (a
// backend without rollups, or interval <= 0: nothing).
func RunCompaction(ctx context.Context, b Backend, interval time.Duration, log *slog.Logger) {
	(&Compaction{Interval: interval, Log: log}).Run(ctx, b)
}

// Compaction compacts a backend's rollups every Interval and, when Idle >
// 0, once ingest has been idle for Idle after a batch (Wrote).
type Compaction struct {
	Interval, Idle time.Duration
	Log            *slog.Logger
	once           sync.Once
	wrote          chan struct{}
}

func (c *Compaction) init() { c.once.Do(func() { c.wrote = make(chan struct{}, 1) }) }

// Wrote notes that a batch was written (it never blocks).
func (c *Compaction) Wrote() {
	c.init()
	select {
	case c.wrote <- struct{}{}:
	default:
	}
}

// Run compacts b's rollups until ctx ends (a backend without rollups, or
// Interval <= 0: nothing).
func (c *Compaction) Run(ctx context.Context, b Backend) {
	comp := b.Housekeeping().Compactor
	if comp == nil || c.Interval <= 0 {
		return
	}
	c.init()
	log := c.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	compact := func(why string) {
		start := time.Now()
		n, err := comp.CompactRollups(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Error("rollup compaction failed", "err", err)
		case n > 0:
			log.Debug("rollup compaction", "buckets", n, "after", why, "took", time.Since(start).Round(time.Millisecond))
		}
	}
	tick := time.NewTicker(c.Interval)
	defer tick.Stop()
	idle := time.NewTimer(c.Idle)
	idle.Stop()
	defer idle.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			compact("interval")
		case <-c.wrote:
			if c.Idle > 0 {
				idle.Reset(c.Idle) // each batch pushes it back
			}
		case <-idle.C:
			compact("idle")
		}
	}
}
