package store

import "reportdb"

// EventCounts are a report's events by status, stored with the report so
// that event counts summarised by certname need not read the events.
type EventCounts struct {
	Success, Failure, Noop, Skipped, Total int32
}

// CountEvents counts a report's events by status.
func CountEvents(r *reportdb.Report) EventCounts {
	var c EventCounts
	for i := range r.Events {
		switch r.Events[i].Status {
		case "success":
			c.Success++
		case "failure":
			c.Failure++
		case "noop":
			c.Noop++
		case "skipped":
			c.Skipped++
		}
	}
	c.Total = int32(len(r.Events))
	return c
}
