package httpapi

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"reportdb"
	"reportdb/jsonv"
	"reportdb/service"
)

// The timeout parameter of PuppetDB 8 (PDB-4937): how many seconds a query
// may run, read as OpenVoxDB's parse-timeout does
// (src/puppetlabs/puppetdb/http/query.clj): digits, or digits with a
// decimal part (".5" too); 0 means no limit of the client's. The deadline
// is the smaller of it and --query-timeout, which a client can shorten but
// never lengthen (OpenVoxDB: min of the timeout and query-timeout-max).

// parseTimeout reads a timeout parameter; 0 is no limit of the client's.
//
// PuppetDB takes a number in a POSTed body as it is: 0 or a negative one
// becomes a deadline already past, and the query fails with a 500. Here a
// number follows the rule of the text, 0 no limit and a negative one the
// 400 of the text.
func parseTimeout(p *param) (time.Duration, error) {
	text := p.Str
	if p.IsJSON {
		switch v := p.JSON.(type) {
		case jsonv.Number:
			secs, err := strconv.ParseFloat(string(v), 64)
			if err != nil && !errors.Is(err, strconv.ErrRange) || secs < 0 {
				return 0, timeoutError(string(v))
			}
			return seconds(secs), nil
		case string:
			text = v
		case nil:
			return 0, timeoutError("null")
		default:
			// as Java prints the Clojure value (MessageFormat)
			return 0, timeoutError(jsonv.Clojure(v))
		}
	}
	whole, frac, dot := strings.Cut(text, ".")
	if !asciiDigits(whole) || !asciiDigits(frac) || (dot && frac == "") || (!dot && whole == "") {
		return 0, timeoutError(text)
	}
	// only digits: ParseFloat fails at most with ErrRange, for a number
	// too large (+Inf), an unlimited wait, which the server's bounds
	secs, _ := strconv.ParseFloat(text, 64)
	return seconds(secs), nil
}

// seconds converts a non-negative number of seconds: 0 stays 0 (no
// limit), a positive one below a nanosecond is one, and one beyond what a
// Duration holds is the largest.
func seconds(secs float64) time.Duration {
	switch {
	case secs == 0:
		return 0
	case secs >= float64(math.MaxInt64)/float64(time.Second):
		return time.Duration(math.MaxInt64)
	}
	return max(time.Duration(secs*float64(time.Second)), 1)
}

func asciiDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func timeoutError(x string) error {
	return reportdb.Errorf(reportdb.EINVALID, "Query timeout must be non-negative number, not %s", x)
}

// queryContextFor is queryContext with the client's timeout (0: none)
// (service.Deadline).
func (s *Server) queryContextFor(r *http.Request, timeout time.Duration) (context.Context, context.CancelFunc) {
	return service.Deadline(r.Context(), s.cfg.QueryTimeout, timeout)
}

// timedOut is service.TimedOut: the client's timeout answered as such.
func timedOut(ctx context.Context, err error) error { return service.TimedOut(ctx, err) }
