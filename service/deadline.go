package service

import (
	"context"
	"errors"
	"strconv"
	"time"

	"reportdb"
)

// Deadline bounds a query on ctx by the server's limit and by the
// client's timeout (0: none): the context ends at the earlier of the two.
// When it is the client's, its cause is the error that says so (see
// TimedOut).
func Deadline(ctx context.Context, limit, client time.Duration) (context.Context, context.CancelFunc) {
	if client <= 0 || client >= limit {
		return context.WithTimeout(ctx, limit)
	}
	secs := strconv.FormatFloat(client.Seconds(), 'f', -1, 64)
	return context.WithTimeoutCause(ctx, client, &reportdb.Error{Code: reportdb.ETIMEOUT,
		Message: "The query was cancelled because it ran longer than its timeout parameter (" + secs + " seconds)"})
}

// TimedOut is err, the error a query on ctx ended with, unless ctx ended at
// the client's timeout: then any failure but one of the query's own (a 400)
// came from the cancellation, and is answered as that timeout. PuppetDB
// answers 500 there ("Query <id> exceeded timeout"); reportdb answers as
// for its own --query-timeout, 503 (ETIMEOUT): the request was valid and
// the server did not finish it in the time allowed, which is neither the
// client's fault (4xx) nor a failure of the server's (500) nor a gateway's
// (504). Prometheus's query API answers its own timeout parameter the same
// way. No Retry-After: the same query with the same timeout would most
// likely be cut again.
func TimedOut(ctx context.Context, err error) error {
	if err == nil || !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return err
	}
	cause, ok := context.Cause(ctx).(*reportdb.Error)
	if !ok {
		return err // the server's own limit: ErrorOf's message
	}
	var e *reportdb.Error
	if errors.As(err, &e) && !errors.Is(err, context.DeadlineExceeded) && e.Code != reportdb.ETIMEOUT && e.Code != reportdb.EUNAVAILABLE {
		return err
	}
	return cause
}
