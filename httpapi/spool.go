package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"reportdb/jsonv"
)

// awaitQueued waits up to wait seconds (secondsToWaitForCompletion) for a
// spooled report to reach the database.
func (s *Server) awaitQueued(r *http.Request, hash string, wait float64) bool {
	ctx, cancel := context.WithTimeout(r.Context(), time.Duration(wait*float64(time.Second)))
	defer cancel()
	return s.committer.AwaitQueued(ctx, hash)
}

// queueDepth is PuppetDB's status queue_depth: the reports waiting in the
// spool for the database.
func (s *Server) queueDepth() jsonv.Number {
	if s.committer.Committer == nil {
		return "0"
	}
	st, _, _ := s.committer.SpoolStats()
	return jsonv.Number(strconv.Itoa(st.Records))
}
