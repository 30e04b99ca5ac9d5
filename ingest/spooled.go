package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"reportdb"
	"reportdb/spool"
	"reportdb/store"
)

// spooler holds what the Committer needs to spool reports the database
// cannot take (see UseSpool).
type spooler struct {
	sp      *spool.Spool
	log     *slog.Logger
	kick    chan struct{}
	mu      sync.Mutex
	waiters map[string]chan struct{} // hash -> closed once delivered
	fails   map[string]int           // hash -> deliveries refused with the database up
	// Discarded counts spooled reports given up on (dead letters).
	discarded int64
	// first: every report goes to the spool (AcknowledgeFromSpool)
	first bool
	// failing: the last delivery attempt stored nothing (the database
	// does not take reports)
	failing atomic.Bool
}

// DeliveryBatchBytes bounds the spooled records delivered in one batch
// (besides max-batch), so that the batches of large reports, and the
// server's memory, stay small: with acknowledge spool on the medium
// benchmark fleet the server's peak RSS was 88-89 MB with batches of 256
// reports and 52 MB with 64. At least one record goes in a
// batch, however large.
var DeliveryBatchBytes int64 = 256 << 10

// SpoolTidyAfter is how long the spool stays empty before the delivery
// loop truncates its delivered log (spool.Tidy): under a steady load the
// spool empties after most deliveries, and emptying the log each time
// cost two fsyncs while Appends waited.
var SpoolTidyAfter = time.Second

// MaxDeliveryAttempts is how often a spooled report the database refuses
// while it is up (not a connection problem) is retried before it is moved
// to the spool's discard directory.
const MaxDeliveryAttempts = 3

// UseSpool makes the committer write a report to sp, instead of failing
// it, when the database cannot take it (unreachable, failing, disk full),
// and deliver spooled reports to the database in order once it is back.
// While the spool holds reports, new reports go to the spool too, so that
// they reach the database in arrival order. Call before the first Submit.
func (c *Committer) UseSpool(sp *spool.Spool, log *slog.Logger) {
	if log == nil {
		log = slog.Default()
	}
	c.spool = &spooler{sp: sp, log: log, kick: make(chan struct{}, 1), waiters: map[string]chan struct{}{}, fails: map[string]int{}}
	if st := sp.Stats(); st.Records > 0 {
		log.Info("spooled reports found; delivering them once the database takes them", "reports", st.Records, "bytes", st.Bytes, "dir", sp.Dir())
	}
	if sp.Dropped > 0 {
		log.Warn("spool: cut a torn record at its end (written during a crash, never acknowledged)", "bytes", sp.Dropped, "dir", sp.Dir())
	}
	c.wg.Add(1)
	go c.deliver()
}

// AcknowledgeFromSpool makes every report go to the spool first: Submit
// answers Queued once the report is fsynced there, and the spool is
// delivered to the database in batches of up to maxBatch, as PuppetDB
// acknowledges a command once it is queued on its own disk. A batch then
// holds what arrived while the last one was written, not only what the
// clients waiting for their acknowledgement sent (3-4 reports for 8
// clients). The price: an acknowledged report
// is on this instance's disk, not yet queryable, until it is delivered,
// and a report the database refuses is retried and then discarded
// (MaxDeliveryAttempts) instead of failing its submission. Call after
// UseSpool, before the first Submit.
func (c *Committer) AcknowledgeFromSpool() {
	if c.spool == nil {
		panic("ingest: AcknowledgeFromSpool without UseSpool")
	}
	c.spool.first = true
}

// SpoolStats describes the spool's backlog (ok false without a spool).
func (c *Committer) SpoolStats() (st spool.Stats, maxBytes int64, ok bool) {
	if c.spool == nil {
		return spool.Stats{}, 0, false
	}
	return c.spool.sp.Stats(), c.spool.sp.MaxBytes(), true
}

// Submit stores one report and returns once it is durable (or failed):
// Stored or Duplicate once committed to the database, Queued once written
// to the spool (with UseSpool).
func (c *Committer) Submit(ctx context.Context, r *reportdb.Report) (reportdb.Outcome, error) {
	s := c.spool
	if s == nil {
		return c.submitDirect(ctx, r)
	}
	if s.first {
		c.closeMu.RLock()
		defer c.closeMu.RUnlock()
		if c.closed {
			return 0, ErrClosed
		}
		return c.enqueue(r)
	}
	if s.sp.Len() == 0 {
		o, err := c.submitDirect(ctx, r)
		next := c.afterFailure(err)
		if next == retryOnce {
			// the database answers again: the failure was the moment
			// it went away or came back (a pooled connection that a
			// restart closed fails once); one more try before the
			// report itself is blamed
			o, err = c.submitDirect(ctx, r)
			next = c.afterFailure(err)
		}
		if next != spoolIt {
			return o, err
		}
		s.log.Warn("the database cannot take reports; spooling them", "err", err, "dir", s.sp.Dir())
	}
	return c.enqueue(r)
}

// DeliverSpool waits until the spool is delivered, the delivery fails
// (the database does not take reports: the spool keeps them for the next
// start) or ctx ends, and returns how many reports the spool still
// holds. serve calls it at shutdown, once no submission can arrive, so
// that a stopped instance leaves nothing behind while the database is up.
func (c *Committer) DeliverSpool(ctx context.Context) int {
	s := c.spool
	if s == nil {
		return 0
	}
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		n := s.sp.Len()
		if n == 0 || s.failing.Load() {
			return n
		}
		select {
		case <-ctx.Done():
			return s.sp.Len()
		case <-t.C:
		}
	}
}

// AwaitQueued waits until the spooled report with this hash has been
// delivered to the database (true) or ctx ends (false).
func (c *Committer) AwaitQueued(ctx context.Context, hash string) bool {
	s := c.spool
	if s == nil {
		return true
	}
	s.mu.Lock()
	ch := s.waiters[hash]
	s.mu.Unlock()
	if ch == nil {
		return true
	}
	select {
	case <-ch:
		return true
	case <-ctx.Done():
		return false
	}
}

// What a submission does after its direct attempt (afterFailure).
type nextStep int

const (
	returnIt  nextStep = iota // stored, or the error is the client's answer
	retryOnce                 // the database answers now: try once more
	spoolIt                   // the database cannot take it: spool it
)

// afterFailure decides what follows a direct submission that ended with
// err: a refusal of the report itself (and shutdown) goes back to the
// client; a failure in the database is spooled when the database is
// unreachable or out of disk space, or when it is transient
// (store.IsTransient: the backend retried the batch already, and the
// spool stores the report once it passes), and is worth one more try when
// the database answers again (asked once: a health check waits up to 5 s
// when the database's host does not answer).
func (c *Committer) afterFailure(err error) nextStep {
	if err == nil || errors.Is(err, ErrClosed) {
		return returnIt
	}
	if store.IsTransient(err) {
		return spoolIt
	}
	code := reportdb.ErrorCode(err)
	switch code {
	case reportdb.EINTERNAL, reportdb.EUNAVAILABLE, reportdb.ENOSPACE:
	default:
		return returnIt
	}
	if DiskFull(err) || !c.databaseUp() {
		return spoolIt
	}
	if code == reportdb.ENOSPACE {
		return returnIt
	}
	return retryOnce
}

// spoolable tells whether a failed submission should go to the spool
// (afterFailure).
func (c *Committer) spoolable(err error) bool { return c.afterFailure(err) == spoolIt }

// DiskFull tells whether err says a disk is full (ENOSPC, SQLite's
// SQLITE_FULL, PostgreSQL's disk_full 53100).
func DiskFull(err error) bool {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, spool.ErrNoSpace) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "database or disk is full") || strings.Contains(msg, "SQLITE_FULL") ||
		strings.Contains(msg, "(SQLSTATE 53100)") || strings.Contains(msg, "no space left on device")
}

// databaseUp tells whether the database answers within 5 seconds.
func (c *Committer) databaseUp() bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return c.backend.Ping(ctx) == nil
}

func (c *Committer) enqueue(r *reportdb.Report) (reportdb.Outcome, error) {
	s := c.spool
	payload := encodeRecord(r)
	s.mu.Lock()
	if s.waiters[r.Hash] == nil {
		s.waiters[r.Hash] = make(chan struct{})
	}
	s.mu.Unlock()
	if err := s.sp.Append(payload); err != nil {
		switch {
		case errors.Is(err, spool.ErrFull):
			msg := "The database is unavailable and the spool of reports waiting for it is full (%d bytes, spool-max-bytes); the report was not stored, retry later"
			if s.first && !s.failing.Load() {
				msg = "The spool of reports waiting for the database is full (%d bytes, spool-max-bytes): reports arrive faster than the database takes them; the report was not stored, retry later"
			}
			return 0, &reportdb.Error{Code: reportdb.EUNAVAILABLE, RetryAfter: 60, Message: fmt.Sprintf(msg, s.sp.MaxBytes())}
		case errors.Is(err, spool.ErrNoSpace):
			return 0, &reportdb.Error{Code: reportdb.ENOSPACE, RetryAfter: 60, Err: err, Message: fmt.Sprintf(
				"No space left on the disk: the database cannot take the report and the spool (%s) cannot hold it; the report was not stored, retry later", s.sp.Dir())}
		}
		return 0, &reportdb.Error{Code: reportdb.EINTERNAL, Message: "spooling the report failed", Err: err}
	}
	select {
	case s.kick <- struct{}{}:
	default:
	}
	return reportdb.Queued, nil
}

// deliver writes spooled reports to the database, oldest first, until the
// committer closes.
func (c *Committer) deliver() {
	defer c.wg.Done()
	s := c.spool
	const minBackoff, maxBackoff = 200 * time.Millisecond, 5 * time.Second
	backoff := minBackoff
	failing := false
	wait := func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-c.quit:
			return false
		case <-t.C:
			return true
		}
	}
	tidy := time.NewTimer(time.Hour)
	defer tidy.Stop()
	for {
		if s.sp.Len() == 0 {
			// empty the delivered log once no report came for a while
			tidy.Reset(SpoolTidyAfter)
			select {
			case <-c.quit:
				return
			case <-s.kick:
				continue
			case <-tidy.C:
				if err := s.sp.Tidy(); err != nil {
					s.log.Warn("spool: emptying the delivered log failed", "err", err)
				}
				select {
				case <-c.quit:
					return
				case <-s.kick:
				}
				continue
			}
		}
		select {
		case <-c.quit:
			return
		default:
		}
		recs, err := s.sp.PeekBytes(c.maxBatch, DeliveryBatchBytes)
		if err != nil || len(recs) == 0 {
			s.log.Error("spool: reading failed", "err", err)
			if !wait(maxBackoff) {
				return
			}
			continue
		}
		reports := make([]*reportdb.Report, 0, len(recs))
		for _, rec := range recs {
			r, err := decodeRecord(rec.Payload)
			if err != nil {
				// cannot happen for records this code wrote (their CRC
				// held): discarded by deliverBatch
				r = nil
			}
			reports = append(reports, r)
		}
		n, err := c.deliverBatch(recs, reports)
		var refused *refusedError
		isRefused := errors.As(err, &refused)
		s.failing.Store(n == 0 && !isRefused)
		if n > 0 {
			if failing {
				s.log.Info("the database takes reports again; delivering the spool")
			}
			failing, backoff = false, minBackoff
			if s.sp.Len() == 0 && !s.first {
				s.log.Info("spool drained")
			}
			continue
		}
		switch {
		case isRefused:
			s.log.Warn("spool: the database refused the oldest spooled report; retrying it before it is discarded", "hash", refused.hash, "err", refused.err, "attempts", MaxDeliveryAttempts)
		case err != nil && !failing:
			failing = true
			st := s.sp.Stats()
			s.log.Warn("spool: the database does not take reports yet; retrying", "err", err, "spooled", st.Records)
		}
		if !wait(backoff) {
			return
		}
		if backoff *= 2; backoff > maxBackoff {
			backoff = maxBackoff
		}
	}
}

// refusedError: the database is up and refused the spooled report at the
// head; it is retried, then discarded (MaxDeliveryAttempts).
type refusedError struct {
	hash string
	err  error
}

func (e *refusedError) Error() string { return "the database refused the report: " + e.err.Error() }
func (e *refusedError) Unwrap() error { return e.err }

// deliverBatch stores the leading records it can and removes them from the
// spool; it returns how many were removed.
func (c *Committer) deliverBatch(recs []spool.Record, reports []*reportdb.Report) (int, error) {
	s := c.spool
	// a record that does not decode ends the batch; it is discarded below
	good := len(reports)
	for i, r := range reports {
		if r == nil {
			good = i
			break
		}
	}
	done := 0
	if good > 0 {
		outcomes, errs, err := c.backend.StoreReports(context.Background(), reports[:good])
		if c.OnBatch != nil {
			c.OnBatch(good, err)
		}
		if err != nil {
			return 0, err
		}
		// every report this batch stored is observed (as reports stored
		// directly are), those after a refused one too: they stay in the
		// spool and come back as duplicates, which are not observed
		for i := 0; i < good; i++ {
			if c.OnStored != nil && errs[i] == nil && outcomes[i] == reportdb.Stored {
				c.OnStored(reports[i])
			}
		}
		for done < good && errs[done] == nil {
			done++
		}
		if done < good {
			if e := errs[done]; !c.spoolable(e) {
				// the database is up and refuses this report
				h := reports[done].Hash
				s.mu.Lock()
				s.fails[h]++
				n := s.fails[h]
				s.mu.Unlock()
				if n >= MaxDeliveryAttempts {
					c.discard(recs[done], reports[done], e)
					done++
				}
			}
			if done == 0 {
				if !c.spoolable(errs[0]) {
					return 0, &refusedError{hash: reports[0].Hash, err: errs[0]}
				}
				return 0, errs[0]
			}
		}
	} else {
		c.discard(recs[0], nil, errors.New("the spooled record does not decode"))
		done = 1
	}
	if err := s.sp.Commit(recs[:done]); err != nil {
		s.log.Error("spool: recording the delivery failed (the reports will be delivered again, as duplicates)", "err", err)
		return 0, err
	}
	s.mu.Lock()
	for _, r := range reports[:done] {
		if r == nil {
			continue
		}
		if ch := s.waiters[r.Hash]; ch != nil {
			close(ch)
			delete(s.waiters, r.Hash)
		}
		delete(s.fails, r.Hash)
	}
	s.mu.Unlock()
	return done, nil
}

// discard moves a record the database keeps refusing to the spool's
// discard directory (PuppetDB's dead-letter office) and logs it.
func (c *Committer) discard(rec spool.Record, r *reportdb.Report, cause error) {
	s := c.spool
	s.mu.Lock()
	s.discarded++
	s.mu.Unlock()
	dir := filepath.Join(s.sp.Dir(), "discard")
	// the report as JSON, for a person to read; a record that does not
	// decode as it was spooled
	content, ext := rec.Payload, "json"
	if r != nil {
		if b, err := json.Marshal(r); err == nil {
			content = b
		}
	} else if len(content) == 0 || content[0] != '{' {
		ext = "record"
	}
	name := fmt.Sprintf("%d-%d.%s", rec.Time.UnixNano(), rec.Offset, ext)
	attrs := []any{"err", cause, "file", filepath.Join(dir, name)}
	if r != nil {
		attrs = append(attrs, "certname", r.Certname, "hash", r.Hash)
	}
	if err := os.MkdirAll(dir, 0o750); err == nil {
		err = os.WriteFile(filepath.Join(dir, name), content, 0o640)
		if err != nil {
			attrs = append(attrs, "write_err", err)
		}
	}
	s.log.Error("spool: the database refused a spooled report; moved to the discard directory", attrs...)
}

// SpoolDiscarded is the number of spooled reports given up on.
func (c *Committer) SpoolDiscarded() int64 {
	if c.spool == nil {
		return 0
	}
	c.spool.mu.Lock()
	defer c.spool.mu.Unlock()
	return c.spool.discarded
}
