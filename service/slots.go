package service

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"reportdb"
)

// Slots bound the queries running at once (max-concurrent-queries): a
// query beyond them waits up to the queue wait for one, then fails with
// 503 and Retry-After. The HTTP API's queries and the dashboard's share
// one Slots.
type Slots struct {
	all, small chan struct{}
	max        int
	wait       time.Duration
}

// SmallQuerySlots are kept, beyond max-concurrent-queries, for small
// queries, so that a crowd of heavy queries, each of which may run up to
// the query timeout, cannot keep a node's page or a certname lookup
// waiting behind it.
const SmallQuerySlots = 1

// NewSlots returns max slots with the given queue wait; nil (no limit)
// when max is not positive.
func NewSlots(max int, wait time.Duration) *Slots {
	if max <= 0 {
		return nil
	}
	return &Slots{all: make(chan struct{}, max), small: make(chan struct{}, SmallQuerySlots), max: max, wait: wait}
}

// Acquire takes a slot (a small query may also take the one kept for
// small queries), waiting up to the queue wait; release gives it back.
// The error is the busy answer (EUNAVAILABLE) or ctx's.
func (s *Slots) Acquire(ctx context.Context, small bool) (release func(), err error) {
	if s == nil {
		return func() {}, nil
	}
	var smallCh chan struct{}
	if small {
		smallCh = s.small
	}
	held := s.all
	select {
	case s.all <- struct{}{}:
	case smallCh <- struct{}{}:
		held = smallCh
	default:
		t := time.NewTimer(s.wait)
		defer t.Stop()
		select {
		case s.all <- struct{}{}:
		case smallCh <- struct{}{}:
			held = smallCh
		case <-t.C:
			return nil, &reportdb.Error{Code: reportdb.EUNAVAILABLE, RetryAfter: 1, Message: fmt.Sprintf(
				"Too many queries are running (max-concurrent-queries %d); none finished within %v (query-queue-wait). Retry later.", s.max, s.wait)}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return func() { <-held }, nil
}

// Limit is q with each query holding one of slots while it runs (for
// QueryStream, until its reader returns).
func Limit(q Querier, slots *Slots) Querier {
	if slots == nil {
		return q
	}
	return limited{q, slots}
}

type limited struct {
	q     Querier
	slots *Slots
}

func (l limited) Query(ctx context.Context, req Request, fn func(row json.RawMessage) error) (int, error) {
	release, err := l.slots.Acquire(ctx, false)
	if err != nil {
		return -1, result(err)
	}
	defer release()
	return l.q.Query(ctx, req, fn)
}

func (l limited) QueryStream(ctx context.Context, req Request, fn func(body io.Reader) error) (int, error) {
	release, err := l.slots.Acquire(ctx, false)
	if err != nil {
		return -1, result(err)
	}
	defer release()
	return l.q.QueryStream(ctx, req, fn)
}
