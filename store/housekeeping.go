package store

import (
	"context"
	"time"
)

// Housekeeping is the work a backend does besides storing and reading,
// returned once by Backend.Housekeeping: a nil or zero field is work it
// has none of. One value, rather than an optional interface per kind of
// work found by type assertions, so that what a backend does in the
// background is read in one place, and a wrapper forwards it whole.
type Housekeeping struct {
	// Compactor merges the rollups' deltas (Compaction, and the end of
	// an import).
	Compactor Compactor
	// Maintainer runs the database's own upkeep after retention
	// (Retention.Maintain).
	Maintainer Maintainer
	// Writers is how many batches the backend writes at once (0: one).
	Writers int
	// Analyze sets when table statistics are refreshed after ingest
	// (rows written, or a fraction of a table, at most once per
	// interval); nil where the database keeps its own.
	Analyze func(rows int64, fraction float64, every time.Duration)
	// AfterLoad are the steps a bulk load (reportdb import) ends with,
	// after the rollups are compacted, in order; none where the database
	// needs none.
	AfterLoad []LoadStep
}

// LoadStep is one step at the end of a bulk load.
type LoadStep struct {
	// What names the step in an error ("VACUUM (ANALYZE)").
	What string
	// Run does it, and says what it did ("" for nothing).
	Run func(ctx context.Context) (string, error)
}
