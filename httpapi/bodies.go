package httpapi

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"sync"
	"time"

	"reportdb"
	"reportdb/jsonv"
)

// BodyBudget bounds the bytes of request bodies being read and decoded at
// once, all requests together: the raw bytes of a query body and the
// decoded (gunzipped) bytes of a submission are charged as they arrive, so
// a client that stalls holds only what it has sent, and a crowd of large or
// compressed bodies waits its turn instead of growing the heap without
// bound. A request that cannot get its next bytes within Wait is refused
// with 503 and Retry-After.
type BodyBudget struct {
	max  int64
	wait time.Duration

	mu      sync.Mutex
	used    int64
	waiters []*budgetWaiter // FIFO: a large body is not starved by small ones
}

type budgetWaiter struct {
	n     int64
	ready chan struct{}
}

// NewBodyBudget returns a budget of max bytes; a request waits up to wait
// for room. max <= 0 means no budget (nil).
func NewBodyBudget(max int64, wait time.Duration) *BodyBudget {
	if max <= 0 {
		return nil
	}
	return &BodyBudget{max: max, wait: wait}
}

// Used is the bytes held now (for metrics and tests).
func (b *BodyBudget) Used() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// acquire takes n (<= b.max) bytes. A request that holds none yet waits
// up to b.wait, in turn; one that holds some already (a body still
// growing) takes them at once or not at all: waiting while holding is how
// two large bodies would each wait for the other's bytes.
func (b *BodyBudget) acquire(ctx context.Context, n int64, holding bool) (int64, error) {
	b.mu.Lock()
	if (holding || len(b.waiters) == 0) && b.used+n <= b.max {
		b.used += n
		b.mu.Unlock()
		return n, nil
	}
	if holding {
		b.mu.Unlock()
		return 0, b.busy()
	}
	w := &budgetWaiter{n: n, ready: make(chan struct{})}
	b.waiters = append(b.waiters, w)
	b.mu.Unlock()
	t := time.NewTimer(b.wait)
	defer t.Stop()
	select {
	case <-w.ready:
		return n, nil
	case <-t.C:
	case <-ctx.Done():
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-w.ready: // granted while timing out: keep it
		return n, nil
	default:
	}
	for i, x := range b.waiters {
		if x == w {
			b.waiters = append(b.waiters[:i], b.waiters[i+1:]...)
			break
		}
	}
	b.grantLocked() // a large waiter leaving may let smaller ones in
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	return 0, b.busy()
}

func (b *BodyBudget) busy() error {
	return &reportdb.Error{Code: reportdb.EUNAVAILABLE, RetryAfter: 1, Message: fmt.Sprintf(
		"The server is reading too many request bodies at once (max-inflight-body-bytes %d). Retry later.", b.max)}
}

func (b *BodyBudget) release(n int64) {
	if n <= 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	b.grantLocked()
	b.mu.Unlock()
}

func (b *BodyBudget) grantLocked() {
	for len(b.waiters) > 0 && b.used+b.waiters[0].n <= b.max {
		w := b.waiters[0]
		b.waiters = b.waiters[1:]
		b.used += w.n
		close(w.ready)
	}
}

// bodyLease is what one request holds of the budget; it is released when
// the request ends (Limit) or earlier, once the body is decoded.
type bodyLease struct {
	budget *BodyBudget
	mu     sync.Mutex
	held   int64
}

type leaseKey struct{}

// grow charges n more bytes and returns what it charged. What one request
// holds is clipped to the whole budget, so that a body the size limit
// allows is always read on an otherwise idle server (its old and new
// buffers, both alive while copying, are then counted as one).
func (l *bodyLease) grow(ctx context.Context, n int64) (int64, error) {
	if l == nil || l.budget == nil {
		return 0, nil
	}
	l.mu.Lock()
	held := l.held
	l.mu.Unlock()
	n = min(n, l.budget.max-held)
	if n <= 0 {
		return 0, nil
	}
	got, err := l.budget.acquire(ctx, n, held > 0)
	if err != nil {
		return 0, err
	}
	l.mu.Lock()
	l.held += got
	l.mu.Unlock()
	return got, nil
}

func (l *bodyLease) release() { l.giveBack(math.MaxInt64) }

func leaseOf(r *http.Request) *bodyLease {
	l, _ := r.Context().Value(leaseKey{}).(*bodyLease)
	return l
}

// releaseBody gives back what the request holds of the body budget: its
// body has been decoded into what the handler keeps.
func releaseBody(r *http.Request) { leaseOf(r).release() }

// bodyChunk is how much of a body is read (and charged) at a time.
const bodyChunk = 64 << 10

// readLimited reads at most limit+1 bytes of in, charging them to the
// request's lease as the buffer grows. The buffer at most doubles what has
// arrived, so a client that announces a large body and stalls holds little;
// hint (Content-Length, X-Uncompressed-Length), when within the limit,
// caps the last growth so that a body of announced size is not
// over-allocated.
func readLimited(ctx context.Context, lease *bodyLease, in io.Reader, limit, hint int64) ([]byte, error) {
	var buf []byte
	var charged int64
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) > limit {
				return buf, nil
			}
			next := max(2*int64(cap(buf)), bodyChunk)
			if hint > int64(len(buf)) && hint < next {
				next = hint + 1 // room to see EOF without growing again
			}
			next = min(next, limit+1)
			// the new buffer and the old one exist together while copying
			got, err := lease.grow(ctx, next)
			if err != nil {
				lease.giveBack(charged)
				return nil, err
			}
			nb := make([]byte, len(buf), next)
			copy(nb, buf)
			lease.giveBack(charged)
			charged = got
			buf = nb
		}
		n, err := in.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// bytesPerJSONValue is what one parsed JSON value costs (jsonv: the
// interface, its boxed value and its slot in the enclosing slice or
// object), strings aside.
const bytesPerJSONValue = 40

// chargeJSON refuses a JSON body of more than maxValues values and charges
// what parsing it will cost to the request's body budget, before it is
// parsed: a document of tiny values takes up to 35 times its size.
func chargeJSON(r *http.Request, body []byte, maxValues int, tooMany func(n int) error) error {
	n := jsonv.CountValues(body)
	if n > maxValues {
		return tooMany(n)
	}
	_, err := leaseOf(r).grow(r.Context(), int64(n)*bytesPerJSONValue)
	return err
}

// giveBack returns n of the lease's bytes (at most what it holds): an
// outgrown buffer, or everything once the body is decoded.
func (l *bodyLease) giveBack(n int64) {
	if l == nil || l.budget == nil || n <= 0 {
		return
	}
	l.mu.Lock()
	n = min(n, l.held)
	l.held -= n
	l.mu.Unlock()
	l.budget.release(n)
}
