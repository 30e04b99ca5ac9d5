// Package importer loads reports that operators already have into reportdb
// (or any PuppetDB-compatible server): Puppet's own report files (JSON
// report_format 10-12 and the YAML of Puppet's reportdir), PuppetDB
// "store report" wire payloads (versions 5-8, bare or in the
// {"command","version","payload"} envelope) and PuppetDB export archives
// (puppet db export, /pdb/admin/v1/archive).
//
// Every report goes through the same path as one submitted over HTTP:
// puppetreport.Convert for Puppet's formats, then wire.Decode, then a Sink
// (the group-commit ingest.Committer, or POST /pdb/cmd/v1 of a server).
//
// The pipeline: the named paths are walked first (so the totals of files
// and bytes are known); one goroutine reads each file as a stream, detects
// its format from a peeked prefix and hands its reports (JSON lines, archive
// entries, whole small files) to Config.Workers goroutines through a bounded
// channel; they parse, decode and store concurrently, which is what lets the
// committer batch them, and the reader waits while they are busy, so memory
// stays bounded whatever the size of the files (see stream.go). A rejected
// or unreadable file or line is counted and listed, never fatal.
package importer

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"reportdb"
	"reportdb/jsonv"
	"reportdb/wire"
)

// Item is one report on its way to a Sink: the wire payload as found (or as
// converted from Puppet's format) and its decoded, validated form.
type Item struct {
	Name    string // file path, "archive:entry" or "file:line", for messages
	Version int    // "store report" command version of Payload (5-8)
	Payload *jsonv.Object
	Report  *reportdb.Report
}

// Sink stores validated reports.
type Sink interface {
	// Store stores one report and returns reportdb.Stored or
	// reportdb.Duplicate. A *Rejection error means the destination refused
	// the report as invalid; any other error is a failure (I/O, server
	// unavailable, ...).
	Store(ctx context.Context, it *Item) (reportdb.Outcome, error)
}

// Rejection is an error that says the report itself is unacceptable.
type Rejection struct{ Reason string }

func (r *Rejection) Error() string { return r.Reason }

func reject(format string, args ...any) error {
	return &Rejection{Reason: fmt.Sprintf(format, args...)}
}

// Config configures Run.
type Config struct {
	Sink Sink
	// Workers is the number of goroutines reading, decoding and storing
	// files concurrently (at least 1).
	Workers int
	// Producer is the producer given to Puppet reports (which carry none);
	// nil gives null.
	Producer *string
	// Now is the clock for receive times and elapsed time (time.Now).
	Now func() time.Time
	// Progress, when set, is updated while the import runs.
	Progress Progress
	// MaxListed bounds the rejected/failed entries kept with their reason
	// (the counts are always complete); 0 keeps them all.
	MaxListed int
	// ReportTTL is the retention of the server that will hold the
	// reports (its --report-ttl): the reports older than that, which its
	// next retention run deletes, are counted. 0: not counted.
	ReportTTL time.Duration
}

// Problem is a rejected or failed file (or report inside a file).
type Problem struct {
	Name   string
	Reason string
}

// Summary is the result of an import.
type Summary struct {
	Files      int64 // files and archive entries processed
	FilesTotal int64
	Stored     int64
	Duplicates int64
	Rejected   int64
	Failed     int64
	// Skipped counts archive entries that are not reports, by kind
	// ("catalogs", "facts", ...).
	Skipped     map[string]int64
	RejectedFor []Problem // the first MaxListed, in file order
	FailedFor   []Problem
	Elapsed     time.Duration
	Interrupted bool
	// Expiring counts the reports stored (or already stored) whose
	// producer_timestamp is older than ReportTTL before the import began.
	Expiring  int64
	ReportTTL time.Duration // Config.ReportTTL
}

// Reports is the number of reports stored or found already stored.
func (s *Summary) Reports() int64 { return s.Stored + s.Duplicates }

// OK reports whether nothing was rejected or failed.
func (s *Summary) OK() bool { return s.Rejected == 0 && s.Failed == 0 && !s.Interrupted }

// job is one unit of work for a worker: one JSON line, a whole file or an
// archive entry, already read.
type job struct {
	seq     int    // order of discovery, to list problems in file order
	name    string // for messages
	data    []byte // the content
	line    bool   // data is one line of a JSON-lines file (counted with its file)
	whole   bool   // data is a whole file (counted as a file when done)
	version int    // wire version for bare payloads (archive metadata); 0: detect
	pos     int64  // run.bytesRead once it was read
}

type problem struct {
	seq int
	Problem
}

// run is the state of one Run.
type run struct {
	cfg        Config
	start      time.Time
	filesTotal atomic.Int64
	files      atomic.Int64
	stored     atomic.Int64
	duplicates atomic.Int64
	rejected   atomic.Int64
	failed     atomic.Int64
	expiring   atomic.Int64
	expireAt   int64        // Unix ms: reports older are counted in expiring (0: none)
	bytesTotal atomic.Int64 // size of the files found by the walk
	bytesRead  atomic.Int64 // bytes read from them (compressed for gzip)
	bytesDone  atomic.Int64 // bytesRead when the last record handled was read
	sent       bool         // the reader (producer goroutine only) sent a job of the current file

	mu       sync.Mutex
	skipped  map[string]int64
	rejects  []problem
	failures []problem
}

// Run imports the files, directories and archives named by paths.
func Run(ctx context.Context, cfg Config, paths []string) *Summary {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Workers < 1 {
		cfg.Workers = 1
	}
	r := &run{cfg: cfg, start: cfg.Now(), skipped: map[string]int64{}}
	if cfg.ReportTTL > 0 {
		r.expireAt = r.start.Add(-cfg.ReportTTL).UnixMilli()
	}

	files := r.walk(paths)
	r.filesTotal.Add(int64(len(files)))
	for _, f := range files {
		r.bytesTotal.Add(f.size)
	}

	stopProgress := r.startProgress()

	// The workers are the buffer: the channel only keeps them busy.
	jobs := make(chan job, min(2*cfg.Workers, 256))
	var wg sync.WaitGroup
	for i := 0; i < cfg.Workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				if ctx.Err() != nil {
					continue // drain: interrupted
				}
				r.process(ctx, j)
			}
		}()
	}
	r.produce(ctx, files, jobs)
	close(jobs)
	wg.Wait()
	stopProgress()

	return r.summary(ctx.Err() != nil)
}

// fileRef is a file found by the walk, or a path that could not be used.
type fileRef struct {
	seq  int
	path string
	size int64
	err  error
}

// walk expands the paths into the list of files, in order: directories
// recursively (lexical order, hidden entries skipped), files as named.
func (r *run) walk(paths []string) []fileRef {
	var out []fileRef
	add := func(p string, err error) {
		var size int64
		if err == nil {
			if st, serr := os.Stat(p); serr == nil {
				size = st.Size()
			}
		}
		out = append(out, fileRef{seq: len(out), path: p, size: size, err: err})
	}
	for _, root := range paths {
		st, err := os.Stat(root)
		if err != nil {
			add(root, err)
			continue
		}
		if !st.IsDir() {
			add(root, nil)
			continue
		}
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				add(p, err)
				if d != nil && d.IsDir() && p != root {
					return fs.SkipDir
				}
				return nil
			}
			if p != root && strings.HasPrefix(d.Name(), ".") {
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			switch {
			case d.IsDir():
			case d.Type().IsRegular():
				add(p, nil)
			case d.Type()&fs.ModeSymlink != 0:
				if st, err := os.Stat(p); err != nil {
					add(p, err)
				} else if st.Mode().IsRegular() {
					add(p, nil)
				}
			}
			return nil
		})
	}
	return out
}

// produce reads the files one after the other as streams (streamFile) and
// hands their reports to the workers.
func (r *run) produce(ctx context.Context, files []fileRef, jobs chan<- job) {
	seq := 0
	next := func() int { seq++; return seq }
	for _, f := range files {
		if ctx.Err() != nil {
			return
		}
		if f.err != nil {
			r.fail(next(), f.path, describeIOError(f.err))
			r.files.Add(1)
			continue
		}
		if sent := r.streamFile(ctx, f.path, next, jobs); !sent {
			r.advance(r.bytesRead.Load()) // nothing of it is in flight
		}
	}
}

// process handles one JSON line, file or archive entry.
func (r *run) process(ctx context.Context, j job) {
	defer r.advance(j.pos)
	if !j.line {
		defer r.files.Add(1)
	}
	var units []unit
	if j.line {
		units = []unit{lineUnit(j.name, j.data, j.version, r.cfg.Producer)}
	} else {
		units = detect(j.name, j.data, j.version, r.cfg.Producer)
	}
	j.data = nil // parsed: not kept while the reports are stored
	for i := range units {
		if ctx.Err() != nil {
			return
		}
		r.handle(ctx, j.seq, &units[i])
	}
}

// handle validates and stores one report.
func (r *run) handle(ctx context.Context, seq int, u *unit) {
	if u.err != nil {
		r.reject(seq, u.name, u.err.Error())
		return
	}
	rep, err := wire.Decode(u.version, u.payload, r.cfg.Now().UnixMilli())
	if err != nil {
		r.reject(seq, u.name, reportdb.ErrorMessage(err)) // "Invalid report: <path>: ..."
		return
	}
	payload := u.payload
	u.payload = nil // the sink may drop it once it has no use for it
	out, err := r.cfg.Sink.Store(ctx, &Item{Name: u.name, Version: u.version, Payload: payload, Report: rep})
	if err != nil {
		if ctx.Err() != nil {
			return // interrupted: neither stored nor a problem of the file
		}
		var rej *Rejection
		if errors.As(err, &rej) {
			r.reject(seq, u.name, rej.Reason)
		} else {
			r.fail(seq, u.name, err.Error())
		}
		return
	}
	if out == reportdb.Duplicate {
		r.duplicates.Add(1)
	} else {
		r.stored.Add(1)
	}
	if r.expireAt != 0 && rep.ProducerTimestamp < r.expireAt {
		r.expiring.Add(1)
	}
}

// advance moves the bytes done (what progress shows) to pos if it is
// further: the input up to a record counts as done once the record is.
func (r *run) advance(pos int64) {
	for {
		cur := r.bytesDone.Load()
		if pos <= cur || r.bytesDone.CompareAndSwap(cur, pos) {
			return
		}
	}
}

func (r *run) reject(seq int, name, reason string) {
	r.rejected.Add(1)
	r.mu.Lock()
	r.rejects = append(r.rejects, problem{seq, Problem{name, reason}})
	r.mu.Unlock()
}

func (r *run) fail(seq int, name, reason string) {
	r.failed.Add(1)
	r.mu.Lock()
	r.failures = append(r.failures, problem{seq, Problem{name, reason}})
	r.mu.Unlock()
}

func (r *run) skip(kind string) {
	r.mu.Lock()
	r.skipped[kind]++
	r.mu.Unlock()
}

// stats is a snapshot for progress reports.
func (r *run) stats() Stats {
	return Stats{
		FilesDone:  r.files.Load(),
		FilesTotal: r.filesTotal.Load(),
		Stored:     r.stored.Load(),
		Duplicates: r.duplicates.Load(),
		Rejected:   r.rejected.Load(),
		Failed:     r.failed.Load(),
		BytesDone:  min(r.bytesDone.Load(), r.bytesRead.Load()),
		BytesTotal: r.bytesTotal.Load(),
		Elapsed:    r.cfg.Now().Sub(r.start),
	}
}

func (r *run) startProgress() (stop func()) {
	p := r.cfg.Progress
	if p == nil {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(p.Interval())
		defer t.Stop()
		p.Update(r.stats())
		for {
			select {
			case <-t.C:
				p.Update(r.stats())
			case <-done:
				return
			}
		}
	}()
	return func() {
		close(done)
		<-finished
		p.Done(r.stats())
	}
}

func (r *run) summary(interrupted bool) *Summary {
	s := &Summary{
		Files:       r.files.Load(),
		FilesTotal:  r.filesTotal.Load(),
		Stored:      r.stored.Load(),
		Duplicates:  r.duplicates.Load(),
		Rejected:    r.rejected.Load(),
		Failed:      r.failed.Load(),
		Skipped:     r.skipped,
		Elapsed:     r.cfg.Now().Sub(r.start),
		Interrupted: interrupted,
		Expiring:    r.expiring.Load(),
		ReportTTL:   r.cfg.ReportTTL,
	}
	s.RejectedFor = ordered(r.rejects, r.cfg.MaxListed)
	s.FailedFor = ordered(r.failures, r.cfg.MaxListed)
	return s
}

// ordered sorts problems into file order (workers finish out of order) and
// keeps the first max (all when max is 0).
func ordered(ps []problem, max int) []Problem {
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].seq < ps[j].seq })
	if max > 0 && len(ps) > max {
		ps = ps[:max]
	}
	out := make([]Problem, len(ps))
	for i, p := range ps {
		out[i] = p.Problem
	}
	return out
}
