package postgres

import "time"

// Report ids encode the UTC day of the report's producer_timestamp:
//
//	id = (day + dayOffset) << 32 | (nextval('reports_seq') mod 2^32)
//
// so that resource_events can be range-partitioned by report_id, one
// partition per day, and any lookup or join by report id prunes to one
// partition (with correct planner estimates, unlike a second join key).
const (
	dayMs     = int64(24 * time.Hour / time.Millisecond)
	dayOffset = 100000 // keeps ids positive for dates back to year 1696
)

// dayIndex is the day number (floor) of Unix ms.
func dayIndex(ms int64) int64 {
	d := ms / dayMs
	if ms%dayMs < 0 {
		d--
	}
	return d
}

// idRange is the [lo, hi) range of report ids of a day.
func idRange(day int64) (lo, hi int64) {
	return (day + dayOffset) << 32, (day + dayOffset + 1) << 32
}

// idSQL computes a new id in SQL for a producer_timestamp expression.
func idSQL(ts string) string {
	return "((floor(" + ts + " / 86400000.0)::bigint + 100000) * 4294967296 + (nextval('reports_seq') % 4294967296))"
}
