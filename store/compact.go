package store

import (
	"context"
	"log/slog"
	"time"
)

// Compactor is implemented by backends that keep rollups as delta rows
// (see query/sqlgen/rollup.go): CompactRollups merges the deltas of the
// buckets written since the last run, and returns how many buckets it
// merged. Answers do not depend on it; the number of rows a count reads
// does.
type Compactor interface {
	CompactRollups(ctx context.Context) (int, error)
}

// DefaultCompactInterval is how often rollups are compacted (a bucket
// then holds at most the deltas of one interval's batches).
const DefaultCompactInterval = 30 * time.Second

// RunCompaction compacts b's rollups every interval until ctx ends (a
// backend without rollups, or interval <= 0: nothing).
func RunCompaction(ctx context.Context, b Backend, interval time.Duration, log *slog.Logger) {
	c, ok := b.(Compactor)
	if !ok || interval <= 0 {
		return
	}
	every(ctx, interval, func() {
		start := time.Now()
		n, err := c.CompactRollups(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Error("rollup compaction failed", "err", err)
		case n > 0:
			log.Debug("rollup compaction", "buckets", n, "took", time.Since(start).Round(time.Millisecond))
		}
	})
}
