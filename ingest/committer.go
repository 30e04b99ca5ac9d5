// Package ingest turns decoded reports into durable rows. Its Committer
// implements group commit: reports submitted concurrently share one
// database transaction (each in its own savepoint), and every submitter is
// answered only after that transaction has committed. One commit (and one
// fsync) thus serves many reports, which is what lets ingest outrun a
// transaction per report while never acknowledging a report that is not
// durable.
package ingest

import (
	"context"
	"errors"
	"sync"

	"reportdb"
	"reportdb/store"
)

// ErrClosed is returned for submissions after Close.
var ErrClosed = &reportdb.Error{Code: reportdb.EUNAVAILABLE, Message: "reportdb is shutting down; the report was not stored"}

// Committer batches reports into shared transactions.
type Committer struct {
	backend  store.Backend
	maxBatch int
	reqs     chan *request
	quit     chan struct{}
	wg       sync.WaitGroup
	closeMu  sync.RWMutex
	closed   bool
	// OnBatch, when set, is called after each commit with the batch size
	// (for metrics).
	OnBatch func(n int, err error)
	// OnStored, when set, is called with each report the batch stored
	// (not duplicates), after the commit and before its submitter is
	// answered (the fleet metrics).
	OnStored func(r *reportdb.Report)
	spool    *spooler // see UseSpool
}

type request struct {
	ctx    context.Context
	report *reportdb.Report
	done   chan result
}

type result struct {
	outcome reportdb.Outcome
	err     error
}

// NewCommitter starts a committer writing to backend with at most maxBatch
// reports per transaction. A backend that can write several batches at
// once says how many through a Writers() int method (PostgreSQL); others
// get one writer (SQLite has a single writer anyway).
func NewCommitter(backend store.Backend, maxBatch int) *Committer {
	return NewCommitterWriters(backend, maxBatch, 0)
}

// NewCommitterWriters is NewCommitter with an explicit number of
// concurrent writers (0: the backend's choice).
func NewCommitterWriters(backend store.Backend, maxBatch, writers int) *Committer {
	if maxBatch < 1 {
		maxBatch = 1
	}
	if writers <= 0 {
		writers = 1
		if w := backend.Housekeeping().Writers; w > 1 {
			writers = w
		}
	}
	c := &Committer{backend: backend, maxBatch: maxBatch, reqs: make(chan *request, maxBatch), quit: make(chan struct{})}
	for i := 0; i < writers; i++ {
		c.wg.Add(1)
		go c.loop()
	}
	return c
}

// submitDirect stores one report in the database and returns once it is
// durable (or failed).
func (c *Committer) submitDirect(ctx context.Context, r *reportdb.Report) (reportdb.Outcome, error) {
	c.closeMu.RLock()
	if c.closed {
		c.closeMu.RUnlock()
		return 0, ErrClosed
	}
	req := &request{ctx: ctx, report: r, done: make(chan result, 1)}
	select {
	case c.reqs <- req:
		c.closeMu.RUnlock()
	case <-ctx.Done():
		c.closeMu.RUnlock()
		return 0, ctx.Err()
	}
	// Once queued, the report will be committed or fail; wait for the
	// answer even if the client goes away, so that an acknowledgement is
	// never sent for something that is not stored and vice versa.
	res := <-req.done
	return res.outcome, res.err
}

// Close stops accepting reports, commits those already queued and waits.
func (c *Committer) Close() {
	c.closeMu.Lock()
	if c.closed {
		c.closeMu.Unlock()
		return
	}
	c.closed = true
	close(c.quit)
	c.closeMu.Unlock()
	c.wg.Wait()
}

func (c *Committer) loop() {
	defer c.wg.Done()
	batch := make([]*request, 0, c.maxBatch)
	for {
		select {
		case req := <-c.reqs:
			batch = append(batch[:0], req)
		case <-c.quit:
			// drain what is already queued
			for {
				select {
				case req := <-c.reqs:
					c.commit([]*request{req})
				default:
					return
				}
			}
		}
	fill:
		for len(batch) < c.maxBatch {
			select {
			case req := <-c.reqs:
				batch = append(batch, req)
			default:
				break fill
			}
		}
		c.commit(batch)
	}
}

func (c *Committer) commit(batch []*request) {
	reports := make([]*reportdb.Report, len(batch))
	for i, r := range batch {
		reports[i] = r.report
	}
	// The transaction is not tied to any one client's context: a client
	// hanging up must not roll back the reports of the others.
	outcomes, errs, err := c.backend.StoreReports(context.Background(), reports)
	if c.OnBatch != nil {
		c.OnBatch(len(batch), err)
	}
	for i, r := range batch {
		switch {
		case err != nil:
			r.done <- result{err: storeError(err)}
		case errs[i] != nil:
			r.done <- result{err: storeError(errs[i])}
		default:
			if c.OnStored != nil && outcomes[i] == reportdb.Stored {
				c.OnStored(r.report)
			}
			r.done <- result{outcome: outcomes[i]}
		}
	}
}

func storeError(err error) error {
	var e *reportdb.Error
	if errors.As(err, &e) {
		return e
	}
	return &reportdb.Error{Code: reportdb.EINTERNAL, Message: "storing the report failed", Err: err}
}
