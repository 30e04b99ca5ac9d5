// Package spool is a durable, append-only FIFO of records on local disk:
// reportdb's equivalent of PuppetDB's on-disk command queue, used while the
// database cannot take reports, and for every report with acknowledge
// spool.
//
// The spool is one file, spool.log, of records
//
//	[4 bytes length][4 bytes CRC-32C of time+payload][8 bytes append time, Unix ns][payload]
//
// (little-endian), and a head file, spool.head, holding the offset of the
// first record not yet delivered (8 bytes offset, 4 bytes CRC-32C).
// Append writes a record and fsyncs before it returns, so a record whose
// Append returned is durable; Appends running at once share an fsync.
// Records are delivered in order: Peek reads from the head, Commit
// advances it. The head written by Commit is not fsynced: a crash leaves
// an older head, one of this log's record boundaries, and the records
// after it are delivered again (at-least-once; reportdb's report hash
// turns a re-delivery into a duplicate), which costs less than an fsync
// per delivery while Appends wait for the lock. The log is emptied
// (truncated, with a durable head of 0) once it is delivered and either
// large (compactAt) or idle (Tidy); a log that is never empty long enough
// is rewritten without its delivered part (compactAt). A torn
// record at the end of the log (a crash during Append, never acknowledged)
// fails its CRC and is cut off when the spool is opened.
package spool

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

const (
	logName    = "spool.log"
	headName   = "spool.head"
	headerSize = 16
	// MaxRecord bounds one record (a corrupt length beyond it ends the log).
	MaxRecord = 1 << 30
)

// RecordOverhead is what a record takes in the log besides its payload.
const RecordOverhead = headerSize

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// ErrFull is returned by Append when the record would take the backlog
// past the size limit.
var ErrFull = errors.New("spool full")

// ErrNoSpace is returned by Append when the disk is full (ENOSPC); the
// spool is unchanged.
var ErrNoSpace = errors.New("no space left on the spool's disk")

// Record is one spooled record.
type Record struct {
	Offset  int64     // where it starts in the log
	Size    int64     // bytes it takes in the log, header included
	Time    time.Time // when it was appended
	Payload []byte
}

// Stats describe the backlog.
type Stats struct {
	Records int       // records not yet delivered
	Bytes   int64     // their size in the log
	Oldest  time.Time // append time of the oldest (zero when empty)
}

// Spool is a durable FIFO; safe for concurrent use (one consumer).
type Spool struct {
	dir      string
	maxBytes int64

	mu     sync.Mutex
	log    *os.File
	headF  *os.File
	size   int64     // end of the last durable record
	head   int64     // first undelivered record
	count  int       // records in [head, size)
	oldest time.Time // time of the record at head
	// Dropped is the number of bytes cut off a torn tail when opened.
	Dropped int64

	// Group commit: Appends write their records at written and wait
	// until one fsync covers them; the first waiter of a round runs it
	// for every record written so far, with mu released, so that
	// concurrent Appends share one fsync.
	written  int64       // end of the records written (>= size)
	pending  []time.Time // append times of the records in [size, written)
	syncing  bool        // an fsync of the log runs
	synced   *sync.Cond  // signalled (with mu) after each fsync
	failures int         // fsyncs failed so far: an Append's record was cut when it changes
	syncErr  error       // the last failed fsync's error
	syncs    int64       // fsyncs of the log by syncLocked (for tests)
	// headSyncs counts the fsyncs of the head (for tests)
	headSyncs int64
}

// compactAt: when the log holds at least this many delivered bytes before
// the head and at most an eighth of it after, Commit rewrites the
// undelivered records into a new log, so that a spool that never runs
// empty (Appends arriving while each delivery is written, as with
// acknowledge spool under load) does not grow without end. A large
// backlog is not copied: the log is emptied once it is delivered.
var compactAt int64 = 64 << 20

// fsync makes the log's appended records durable (a variable for the
// tests of a failing disk).
var fsync = (*os.File).Sync

// Open opens (creating) the spool in dir. maxBytes bounds the backlog
// (<= 0: no bound).
func Open(dir string, maxBytes int64) (*Spool, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, err
	}
	lf, err := os.OpenFile(filepath.Join(dir, logName), os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		return nil, err
	}
	// one process per spool: a second instance pointed at the same
	// directory would deliver the same records twice and corrupt the head
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		lf.Close()
		return nil, fmt.Errorf("spool %s is in use by another process (each reportdb instance needs its own spool directory): %w", dir, err)
	}
	hf, err := os.OpenFile(filepath.Join(dir, headName), os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		lf.Close()
		return nil, err
	}
	// make the files' directory entries durable (power loss right after
	// the first acknowledgement must not lose the file)
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	s := &Spool{dir: dir, maxBytes: maxBytes, log: lf, headF: hf}
	s.synced = sync.NewCond(&s.mu)
	if err := s.recover(); err != nil {
		lf.Close()
		hf.Close()
		return nil, fmt.Errorf("spool %s: %w", dir, err)
	}
	return s, nil
}

// recover reads the head, scans the log from it and cuts a torn tail.
func (s *Spool) recover() error {
	var hb [12]byte
	if n, _ := s.headF.ReadAt(hb[:], 0); n == 12 && crc32.Checksum(hb[:8], crcTable) == binary.LittleEndian.Uint32(hb[8:]) {
		s.head = int64(binary.LittleEndian.Uint64(hb[:8]))
	}
	fi, err := s.log.Stat()
	if err != nil {
		return err
	}
	if s.head > fi.Size() || s.head < 0 {
		// the log was truncated after a full drain but the crash came
		// before the head was reset
		s.head = 0
	}
	off := s.head
	for {
		rec, err := s.readAt(off)
		if err != nil {
			break
		}
		if s.count == 0 {
			s.oldest = rec.Time
		}
		s.count++
		off += rec.Size
	}
	s.size = off
	if off < fi.Size() {
		s.Dropped = fi.Size() - off
		if err := s.log.Truncate(off); err != nil {
			return err
		}
		if err := s.log.Sync(); err != nil {
			return err
		}
	}
	s.written = s.size
	if s.count == 0 && s.size > 0 {
		return s.reset()
	}
	return s.writeHead(s.head, true)
}

// readAt reads and checks the record at off.
func (s *Spool) readAt(off int64) (Record, error) {
	var h [headerSize]byte
	if _, err := s.log.ReadAt(h[:], off); err != nil {
		return Record{}, err
	}
	n := binary.LittleEndian.Uint32(h[0:4])
	if n > MaxRecord {
		return Record{}, errors.New("bad record length")
	}
	buf := make([]byte, 8+int(n))
	copy(buf, h[8:16])
	if _, err := s.log.ReadAt(buf[8:], off+headerSize); err != nil {
		return Record{}, err
	}
	if crc32.Checksum(buf, crcTable) != binary.LittleEndian.Uint32(h[4:8]) {
		return Record{}, errors.New("bad record checksum")
	}
	return Record{Offset: off, Size: headerSize + int64(n), Time: time.Unix(0, int64(binary.LittleEndian.Uint64(h[8:16]))), Payload: buf[8:]}, nil
}

// Append adds a record and returns once it is on disk (fsync). Appends
// running at the same time share an fsync (group commit).
func (s *Spool) Append(payload []byte) error {
	if len(payload) > MaxRecord {
		return ErrFull
	}
	now := time.Now()
	rec := make([]byte, headerSize+len(payload))
	binary.LittleEndian.PutUint32(rec[0:4], uint32(len(payload)))
	binary.LittleEndian.PutUint64(rec[8:16], uint64(now.UnixNano()))
	copy(rec[headerSize:], payload)
	binary.LittleEndian.PutUint32(rec[4:8], crc32.Checksum(rec[8:], crcTable))

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.log == nil {
		return os.ErrClosed
	}
	if s.maxBytes > 0 && s.written-s.head+int64(len(rec)) > s.maxBytes {
		return ErrFull
	}
	if _, err := s.log.WriteAt(rec, s.written); err != nil {
		s.log.Truncate(s.written) // do not leave a partial record behind
		return diskErr(err)
	}
	s.written += int64(len(rec))
	s.pending = append(s.pending, now)
	return s.syncTo(s.written)
}

// syncTo waits (with mu held) until the records written before end are
// durable, running the fsync itself when none runs. It fails when the
// fsync that was to cover them failed: they were cut.
func (s *Spool) syncTo(end int64) error {
	failures := s.failures
	for s.size < end {
		if s.failures != failures {
			return s.syncErr
		}
		if s.syncing {
			s.synced.Wait()
			continue
		}
		s.syncLocked()
	}
	return nil
}

// syncLocked fsyncs everything written so far, with mu released during
// the fsync (called with mu held, returns with it held). After a failed
// fsync nothing written since the last good one is known to be on disk:
// the log is cut back to it and the Appends waiting for those records fail.
func (s *Spool) syncLocked() {
	s.syncing = true
	target, n, f := s.written, len(s.pending), s.log
	s.mu.Unlock()
	err := fsync(f)
	s.mu.Lock()
	s.syncing = false
	s.syncs++
	defer s.synced.Broadcast()
	if err != nil {
		if s.log != nil {
			s.log.Truncate(s.size)
		}
		s.written, s.pending = s.size, nil
		s.failures++
		s.syncErr = diskErr(err)
		return
	}
	if s.count == 0 {
		s.oldest = s.pending[0]
	}
	s.count += n
	s.size = target
	s.pending = append(s.pending[:0], s.pending[n:]...)
}

func diskErr(err error) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return fmt.Errorf("%w: %v", ErrNoSpace, err)
	}
	return err
}

// Peek returns up to max records from the head, oldest first, without
// removing them.
func (s *Spool) Peek(max int) ([]Record, error) { return s.PeekBytes(max, 0) }

// PeekBytes is Peek returning no more records than fit in maxBytes of the
// log (at least one; maxBytes <= 0: no bound), so that a batch of large
// reports is not read into memory at once.
func (s *Spool) PeekBytes(max int, maxBytes int64) ([]Record, error) {
	s.mu.Lock()
	off, end := s.head, s.size
	s.mu.Unlock()
	var out []Record
	var n int64
	for off < end && len(out) < max {
		rec, err := s.readAt(off)
		if err != nil {
			return out, fmt.Errorf("spool: reading record at %d: %w", off, err)
		}
		if maxBytes > 0 && len(out) > 0 && n+rec.Size > maxBytes {
			break
		}
		out = append(out, rec)
		n += rec.Size
		off += rec.Size
	}
	return out, nil
}

// Commit removes the first n records (those Peek returned, delivered).
// The new head is written but not fsynced (see the package comment): a
// crash may deliver them again.
func (s *Spool) Commit(recs []Record) error {
	if len(recs) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if recs[0].Offset != s.head {
		return fmt.Errorf("spool: commit at %d but the head is at %d", recs[0].Offset, s.head)
	}
	last := recs[len(recs)-1]
	head := last.Offset + last.Size
	// records being appended stay where they are written: wait for
	// their fsync, so that they count and the log is not emptied under
	// them, also those appended while it waits (records a failed fsync
	// cut are gone: nothing to wait for)
	for s.written > s.size {
		s.syncTo(s.written)
	}
	if s.log == nil {
		return os.ErrClosed
	}
	s.count -= len(recs)
	if s.count == 0 && head >= compactAt {
		s.head = head
		return s.reset()
	}
	if head >= compactAt && s.size-head <= compactAt/8 {
		if s.compact(head) == nil {
			return nil
		}
		// the old log stays, as if compaction had not been tried
	}
	if err := s.writeHead(head, false); err != nil {
		s.count += len(recs)
		return err
	}
	s.head = head
	if s.count == 0 {
		s.oldest = time.Time{}
	} else if next, err := s.readAt(head); err == nil {
		s.oldest = next.Time
	}
	return nil
}

// compact makes the records from head on the whole log: they are copied
// into a new file, which replaces the log. Called with mu held, nothing
// pending and count already the number of those records. A crash leaves
// the old log with its head at 0 (its delivered records come again, as
// duplicates) or the new one with its head at 0.
func (s *Spool) compact(head int64) error {
	live := make([]byte, s.size-head)
	if _, err := s.log.ReadAt(live, head); err != nil {
		return err
	}
	name := filepath.Join(s.dir, logName)
	nf, err := os.OpenFile(name+".new", os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o640)
	if err != nil {
		return err
	}
	if _, err := nf.Write(live); err != nil {
		nf.Close()
		return diskErr(err)
	}
	if err := nf.Sync(); err != nil {
		nf.Close()
		return diskErr(err)
	}
	if err := syscall.Flock(int(nf.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		nf.Close()
		return err
	}
	// from here the head is 0 in whichever log a crash leaves
	if err := s.writeHead(0, true); err != nil {
		nf.Close()
		return err
	}
	if err := os.Rename(name+".new", name); err != nil {
		nf.Close()
		s.writeHead(s.head, true) // the old log stays
		return err
	}
	if d, err := os.Open(s.dir); err == nil {
		d.Sync()
		d.Close()
	}
	s.log.Close()
	s.log = nf
	s.size = int64(len(live))
	s.written = s.size
	s.head = 0
	if first, err := s.readAt(0); err == nil {
		s.oldest = first.Time
	}
	return nil
}

// reset empties the log (everything delivered). Called with mu held.
// Order matters for crashes: the log is truncated first; a head beyond the
// end of the log is taken as 0 when opened.
func (s *Spool) reset() error {
	if err := s.log.Truncate(0); err != nil {
		return err
	}
	if err := s.log.Sync(); err != nil {
		return err
	}
	s.size, s.head, s.count, s.oldest = 0, 0, 0, time.Time{}
	s.written = 0
	return s.writeHead(0, true)
}

// writeHead writes the head, fsynced when durable. A head that is not
// durable must be a record boundary of the current log, at or after the
// durable one: the writes that change the log under it (reset, compact)
// are durable, so that a crash never leaves a head of an older log.
func (s *Spool) writeHead(off int64, durable bool) error {
	var hb [12]byte
	binary.LittleEndian.PutUint64(hb[:8], uint64(off))
	binary.LittleEndian.PutUint32(hb[8:], crc32.Checksum(hb[:8], crcTable))
	if _, err := s.headF.WriteAt(hb[:], 0); err != nil {
		return err
	}
	if !durable {
		return nil
	}
	s.headSyncs++
	return s.headF.Sync()
}

// Tidy empties a log whose records are all delivered (truncating it and
// making its head 0 durable), so that an idle spool holds nothing on disk
// and a crash re-delivers nothing. The delivery loop calls it once the
// spool has been empty for a while.
func (s *Spool) Tidy() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.log == nil {
		return nil
	}
	return s.tidyLocked()
}

// tidyLocked is Tidy with mu held and the files open.
func (s *Spool) tidyLocked() error {
	if s.count != 0 || s.written != s.size || s.size == 0 {
		return nil
	}
	return s.reset()
}

// Stats returns the backlog.
func (s *Spool) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Stats{Records: s.count, Bytes: s.size - s.head, Oldest: s.oldest}
}

// Len is the number of records not yet delivered.
func (s *Spool) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.count
}

// MaxBytes is the backlog limit (<= 0: none).
func (s *Spool) MaxBytes() int64 { return s.maxBytes }

// Dir is the spool's directory.
func (s *Spool) Dir() string { return s.dir }

// Close closes the files, emptying the log first when all of it is
// delivered (as Tidy).
func (s *Spool) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.log == nil {
		return nil
	}
	err := errors.Join(s.tidyLocked(), s.log.Close(), s.headF.Close())
	s.log, s.headF = nil, nil
	return err
}
