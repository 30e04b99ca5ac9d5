package httpapi

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Limits are the HTTP budgets applied in front of the API (see Limit).
type Limits struct {
	// MaxURLBytes bounds the request target (path and query string);
	// longer gets 414.
	MaxURLBytes int
	// MaxConcurrentQueries bounds the queries running at once; a query
	// beyond it waits up to QueueWait for a slot, then gets 503 with
	// Retry-After. Submissions, status and metrics are not limited.
	MaxConcurrentQueries int
	QueueWait            time.Duration
	// OnRejected, when set, is told about each refused query (metrics).
	OnRejected func(reason string)
}

// Limit wraps h with the limits.
func Limit(h http.Handler, l Limits) http.Handler {
	var slots chan struct{}
	if l.MaxConcurrentQueries > 0 {
		slots = make(chan struct{}, l.MaxConcurrentQueries)
	}
	reject := func(w http.ResponseWriter, status int, retry bool, reason, msg string) {
		if l.OnRejected != nil {
			l.OnRejected(reason)
		}
		w.Header().Set("Content-Type", ctText)
		if retry {
			w.Header().Set("Retry-After", "1")
		}
		w.WriteHeader(status)
		w.Write([]byte(msg))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if l.MaxURLBytes > 0 && len(r.RequestURI) > l.MaxURLBytes {
			reject(w, http.StatusRequestURITooLong, false, "url_too_long", fmt.Sprintf(
				"The request URL is %d bytes long; the limit is %d bytes (max-url-bytes). Send long queries with POST and a JSON body.", len(r.RequestURI), l.MaxURLBytes))
			return
		}
		if slots == nil || !isQueryPath(r.URL.Path) {
			h.ServeHTTP(w, r)
			return
		}
		select {
		case slots <- struct{}{}:
		default:
			t := time.NewTimer(l.QueueWait)
			select {
			case slots <- struct{}{}:
				t.Stop()
			case <-t.C:
				reject(w, http.StatusServiceUnavailable, true, "busy", fmt.Sprintf(
					"Too many queries are running (max-concurrent-queries %d); none finished within %v (query-queue-wait). Retry later.", l.MaxConcurrentQueries, l.QueueWait))
				return
			case <-r.Context().Done():
				t.Stop()
				return
			}
		}
		defer func() { <-slots }()
		h.ServeHTTP(w, r)
	})
}

// isQueryPath tells the query endpoints (v4 and v3) from submissions,
// status and metrics.
func isQueryPath(p string) bool {
	return strings.HasPrefix(p, "/pdb/query/") || strings.HasPrefix(p, "/v3/")
}
