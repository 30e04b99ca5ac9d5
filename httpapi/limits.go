package httpapi

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"reportdb"
	"reportdb/service"
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
	// Slots, when set, are the query slots instead of
	// MaxConcurrentQueries and QueueWait: shared with the queries of
	// readers in the process (service.Limit), such as the dashboard.
	Slots *service.Slots
	// MaxQueryBodyBytes bounds POST query bodies (DefaultMaxQueryBodyBytes
	// when 0); a larger one gets 413, an announced one before it is read.
	MaxQueryBodyBytes int64
	// Bodies, when set, is the budget of body bytes being read at once:
	// query bodies here, submissions' decoded bodies in the API's handlers
	// (through the request's context).
	Bodies *BodyBudget
	// WriteTimeout, when set, bounds how long a query's answer may take
	// to write from the moment it has its slot: a client that stops
	// reading would otherwise hold the slot (and its database connection)
	// for as long as it keeps the connection open. Set it a little above
	// the query timeout, which already ends a query that streams longer.
	WriteTimeout time.Duration
	// OnRejected, when set, is told about each refused query (metrics).
	OnRejected func(reason string)
}

// DefaultMaxQueryBodyBytes bounds POST query bodies: a query is a few
// kilobytes, and a long "in" list of certnames a few hundred.
const DefaultMaxQueryBodyBytes = 16 << 20

// Limit wraps h with the limits. A query's body is read (within its size
// limit and the body budget) before it waits for a query slot, so a client
// that sends its body slowly holds no slot; a submission's body is read by
// its handler under the same budget, before it is handed to a writer.
func Limit(h http.Handler, l Limits) http.Handler {
	if l.MaxQueryBodyBytes <= 0 {
		l.MaxQueryBodyBytes = DefaultMaxQueryBodyBytes
	}
	slots := l.Slots
	if slots == nil {
		slots = service.NewSlots(l.MaxConcurrentQueries, l.QueueWait)
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
		if l.Bodies != nil {
			lease := &bodyLease{budget: l.Bodies}
			defer lease.release()
			r = withContext(r, context.WithValue(r.Context(), leaseKey{}, lease))
		}
		if !isQueryPath(r.URL.Path) {
			h.ServeHTTP(w, r)
			return
		}
		var body []byte
		if r.Body != nil && r.Body != http.NoBody {
			tooLarge := fmt.Sprintf("The request body exceeds the limit of %d bytes", l.MaxQueryBodyBytes)
			if r.ContentLength > l.MaxQueryBodyBytes {
				reject(w, http.StatusRequestEntityTooLarge, false, "body_too_large", tooLarge)
				return
			}
			var err error
			body, err = readLimited(r.Context(), leaseOf(r), r.Body, l.MaxQueryBodyBytes, r.ContentLength)
			switch {
			case reportdb.ErrorCode(err) == reportdb.EUNAVAILABLE:
				reject(w, http.StatusServiceUnavailable, true, "body_budget", reportdb.ErrorMessage(err))
				return
			case err != nil:
				reject(w, http.StatusBadRequest, false, "body_read", "Could not read the request body: "+err.Error())
				return
			case int64(len(body)) > l.MaxQueryBodyBytes:
				reject(w, http.StatusRequestEntityTooLarge, false, "body_too_large", tooLarge)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
		}
		if slots == nil {
			h.ServeHTTP(w, r)
			return
		}
		release, err := slots.Acquire(r.Context(), isSmallQuery(r, body))
		if reportdb.ErrorCode(err) == reportdb.EUNAVAILABLE {
			reject(w, http.StatusServiceUnavailable, true, "busy", reportdb.ErrorMessage(err))
			return
		} else if err != nil {
			return // the client went away
		}
		defer release()
		if l.WriteTimeout > 0 {
			// a writer without a deadline (a test's recorder) needs none
			_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(l.WriteTimeout))
		}
		h.ServeHTTP(w, r)
	})
}

// SmallQuerySlots are kept, beyond max-concurrent-queries, for small
// queries (isSmallQuery).
const SmallQuerySlots = service.SmallQuerySlots

// smallPaths are the endpoints whose answer is bounded by the size of the
// fleet or of one report, whatever their filter: nodes and environments
// (one row per node or environment) and one report's documents.
var smallPaths = []*regexp.Regexp{
	regexp.MustCompile(`^/pdb/query/v4/(nodes|environments)(/[^/]+)?$`),
	regexp.MustCompile(`^/pdb/query/v4/reports/[^/]+/(logs|metrics|events)$`),
}

// isSmallQuery tells a query whose cost is bounded by the fleet's size:
// an endpoint of smallPaths whose query (in the URL or the body) has no
// subquery, which could read any entity.
func isSmallQuery(r *http.Request, body []byte) bool {
	if !slices.ContainsFunc(smallPaths, func(re *regexp.Regexp) bool { return re.MatchString(r.URL.Path) }) {
		return false
	}
	q, err := url.QueryUnescape(r.URL.RawQuery)
	if err != nil {
		q = r.URL.RawQuery
	}
	// the body is JSON as sent (not URL-encoded), searched where it lies;
	// a JSON escape (\u0073elect_…) could hide an operator, so any counts
	return !slices.ContainsFunc(subqueryMarks, func(m string) bool {
		return strings.Contains(q, m) || bytes.Contains(body, []byte(m))
	})
}

// subqueryMarks are the texts of a query that can read another entity
// (select_<entity>, subquery, from), and the JSON escape that could spell
// one of them otherwise.
var subqueryMarks = []string{"select_", "subquery", `"from"`, `\u`}

// withContext is r.WithContext for a middleware inside Instrument: the
// instrumentation follows the request it made by identity (reqState.req),
// so the copy takes its place there.
func withContext(r *http.Request, ctx context.Context) *http.Request {
	r2 := r.WithContext(ctx)
	if st, ok := ctx.Value(reqStateKey{}).(*reqState); ok && st.req == r {
		st.req = r2
	}
	return r2
}

// isQueryPath tells the query endpoints (v4 and v3) from submissions,
// status and metrics.
func isQueryPath(p string) bool {
	return strings.HasPrefix(p, "/pdb/query/") || strings.HasPrefix(p, "/v3/")
}
