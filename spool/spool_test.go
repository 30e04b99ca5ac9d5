package spool

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func payloads(t *testing.T, s *Spool, max int) []string {
	t.Helper()
	recs, err := s.Peek(max)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range recs {
		out = append(out, string(r.Payload))
	}
	return out
}

func TestAppendPeekCommitReopen(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		if err := s.Append([]byte(fmt.Sprintf("r%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if st := s.Stats(); st.Records != 5 || st.Bytes != 5*(headerSize+2) || st.Oldest.IsZero() {
		t.Fatalf("stats %+v", st)
	}
	recs, _ := s.Peek(2)
	if err := s.Commit(recs); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s, err = Open(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(payloads(t, s, 10)); got != "[r2 r3 r4]" {
		t.Fatalf("after reopen: %s", got)
	}
	recs, _ = s.Peek(10)
	if err := s.Commit(recs); err != nil {
		t.Fatal(err)
	}
	// delivered but small and not idle yet: the log stays until Tidy
	fi, _ := os.Stat(filepath.Join(dir, logName))
	if fi.Size() == 0 || s.Len() != 0 || !s.Stats().Oldest.IsZero() {
		t.Fatalf("drained spool before Tidy: log %d bytes, %d records, oldest %v", fi.Size(), s.Len(), s.Stats().Oldest)
	}
	if err := s.Tidy(); err != nil {
		t.Fatal(err)
	}
	fi, _ = os.Stat(filepath.Join(dir, logName))
	if fi.Size() != 0 || s.Len() != 0 {
		t.Fatalf("drained spool after Tidy: log %d bytes, %d records", fi.Size(), s.Len())
	}
	s.Append([]byte("again"))
	s.Close()
	s, _ = Open(dir, 0)
	defer s.Close()
	if got := fmt.Sprint(payloads(t, s, 10)); got != "[again]" {
		t.Fatalf("after drain and append: %s", got)
	}
}

// A record torn by a crash during Append (never acknowledged) is cut off;
// the acknowledged records before it stay.
func TestTornTailDropped(t *testing.T) {
	for _, cut := range []int{1, headerSize - 1, headerSize, headerSize + 3} {
		dir := t.TempDir()
		s, _ := Open(dir, 0)
		s.Append([]byte("first"))
		s.Append([]byte("second"))
		s.Append([]byte("third-torn"))
		s.Close()
		path := filepath.Join(dir, logName)
		fi, _ := os.Stat(path)
		os.Truncate(path, fi.Size()-int64(len("third-torn"))-headerSize+int64(cut))
		s, err := Open(dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(payloads(t, s, 10)); got != "[first second]" || s.Dropped != int64(cut) {
			t.Fatalf("cut %d: %s, dropped %d", cut, got, s.Dropped)
		}
		// appends continue after the good records
		s.Append([]byte("fourth"))
		s.Close()
		s, _ = Open(dir, 0)
		if got := fmt.Sprint(payloads(t, s, 10)); got != "[first second fourth]" {
			t.Fatalf("cut %d, after append: %s", cut, got)
		}
		s.Close()
	}
}

func TestCorruptRecordEndsLog(t *testing.T) {
	dir := t.TempDir()
	s, _ := Open(dir, 0)
	s.Append([]byte("good"))
	s.Append([]byte("flipped"))
	s.Close()
	path := filepath.Join(dir, logName)
	b, _ := os.ReadFile(path)
	i := bytes.LastIndex(b, []byte("flipped"))
	b[i] ^= 1
	os.WriteFile(path, b, 0o640)
	s, _ = Open(dir, 0)
	defer s.Close()
	if got := fmt.Sprint(payloads(t, s, 10)); got != "[good]" {
		t.Fatalf("%s", got)
	}
}

// The crash window of a full drain: the log is truncated, the head still
// points past its end. Nothing may be skipped afterwards.
func TestHeadBeyondLogIsReset(t *testing.T) {
	dir := t.TempDir()
	s, _ := Open(dir, 0)
	s.Append([]byte("a"))
	s.Append([]byte("b"))
	recs, _ := s.Peek(1)
	s.Commit(recs) // head at the second record
	s.Close()
	os.Truncate(filepath.Join(dir, logName), 0)
	s, _ = Open(dir, 0)
	s.Append([]byte("new"))
	s.Close()
	s, _ = Open(dir, 0)
	defer s.Close()
	if got := fmt.Sprint(payloads(t, s, 10)); got != "[new]" {
		t.Fatalf("%s", got)
	}
}

func TestCorruptHeadReplaysFromStart(t *testing.T) {
	dir := t.TempDir()
	s, _ := Open(dir, 0)
	s.Append([]byte("a"))
	s.Append([]byte("b"))
	recs, _ := s.Peek(1)
	s.Commit(recs)
	s.Close()
	os.WriteFile(filepath.Join(dir, headName), []byte("garbage-head"), 0o640)
	s, _ = Open(dir, 0)
	defer s.Close()
	// at-least-once: a lost head re-delivers, never skips
	if got := fmt.Sprint(payloads(t, s, 10)); got != "[a b]" {
		t.Fatalf("%s", got)
	}
}

func TestSizeLimit(t *testing.T) {
	s, _ := Open(t.TempDir(), 3*(headerSize+10))
	defer s.Close()
	for i := 0; i < 3; i++ {
		if err := s.Append(make([]byte, 10)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Append([]byte("x")); !errors.Is(err, ErrFull) {
		t.Fatalf("past the limit: %v", err)
	}
	recs, _ := s.Peek(1)
	s.Commit(recs)
	if err := s.Append(make([]byte, 10)); err != nil {
		t.Fatalf("after a delivery frees room: %v", err)
	}
}

func TestOneProcessPerDirectory(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := Open(dir, 0); err == nil {
		t.Fatal("a second Open of the same directory succeeded")
	}
}

// TestConcurrentAppendsShareFsyncs: Appends from many goroutines at once
// each return once their record is durable, fewer fsyncs than records
// cover them (group commit), and every record is there, whole and once,
// after a reopen, while a consumer delivers from the head meanwhile.
func TestConcurrentAppendsShareFsyncs(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	const writers, each = 16, 50
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if err := s.Append([]byte(fmt.Sprintf("w%02d-%03d", w, i))); err != nil {
					t.Error(err)
					return
				}
			}
		}(w)
	}
	// a consumer delivering the first 200 records while the writers run
	delivered := map[string]bool{}
	for len(delivered) < 200 {
		recs, err := s.Peek(7)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 0 {
			time.Sleep(time.Millisecond)
			continue
		}
		if len(delivered)+len(recs) > 200 {
			recs = recs[:200-len(delivered)]
		}
		for _, r := range recs {
			delivered[string(r.Payload)] = true
		}
		if err := s.Commit(recs); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	s.mu.Lock()
	syncs := s.syncs
	s.mu.Unlock()
	if st := s.Stats(); st.Records != writers*each-200 {
		t.Fatalf("stats after the appends: %+v, want %d records", st, writers*each-200)
	}
	s.Close()
	if syncs >= writers*each {
		t.Errorf("%d fsyncs for %d concurrent appends: none shared", syncs, writers*each)
	}
	t.Logf("%d fsyncs for %d appends", syncs, writers*each)
	s, err = Open(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rest := payloads(t, s, writers*each)
	seen := map[string]bool{}
	for _, p := range rest {
		if seen[p] || delivered[p] {
			t.Fatalf("record %s twice", p)
		}
		seen[p] = true
	}
	if len(seen)+len(delivered) != writers*each {
		t.Fatalf("%d records delivered and %d left, want %d in all", len(delivered), len(seen), writers*each)
	}
	// each writer's records are in its order
	last := map[string]string{}
	for _, p := range rest {
		w := p[:3]
		if p <= last[w] {
			t.Fatalf("%s after %s", p, last[w])
		}
		last[w] = p
	}
}

// TestCompaction: a spool that never runs empty, delivered from its head
// while records keep arriving, is rewritten once its delivered part
// passes compactAt, so the log stays bounded; the undelivered records and
// their order survive it and a reopen.
func TestCompaction(t *testing.T) {
	old := compactAt
	compactAt = 4 << 10
	defer func() { compactAt = old }()
	dir := t.TempDir()
	s, err := Open(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	next, got := 0, 0
	appendN := func(n int) {
		for i := 0; i < n; i++ {
			if err := s.Append([]byte(fmt.Sprintf("record-%05d-%s", next, strings.Repeat("x", 100)))); err != nil {
				t.Fatal(err)
			}
			next++
		}
	}
	var largest int64
	appendN(3)
	for round := 0; round < 200; round++ {
		appendN(3)
		recs, err := s.Peek(3) // leaves 3 behind: never empty
		if err != nil || len(recs) != 3 {
			t.Fatalf("peek: %d %v", len(recs), err)
		}
		for _, r := range recs {
			if want := fmt.Sprintf("record-%05d-", got); !strings.HasPrefix(string(r.Payload), want) {
				t.Fatalf("round %d: got %.13s, want %s", round, r.Payload, want)
			}
			got++
		}
		if err := s.Commit(recs); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(filepath.Join(dir, logName))
		if err != nil {
			t.Fatal(err)
		}
		largest = max(largest, fi.Size())
	}
	if largest > 2*compactAt {
		t.Fatalf("the log reached %d bytes with compaction at %d", largest, compactAt)
	}
	if st := s.Stats(); st.Records != 3 || st.Oldest.IsZero() {
		t.Fatalf("stats %+v, want 3 records", st)
	}
	s.Close()
	s, err = Open(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rest := payloads(t, s, 10)
	if len(rest) != 3 || !strings.HasPrefix(rest[0], fmt.Sprintf("record-%05d-", got)) {
		t.Fatalf("after reopen: %d records, first %.13s, want record-%05d", len(rest), rest[0], got)
	}
}

// TestFailedFsyncCutsItsRecords: when the fsync that was to cover an
// Append fails, the Append fails, its record is cut from the log (not
// delivered, not there after a reopen), and the spool goes on with the
// next Append.
func TestFailedFsyncCutsItsRecords(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Append([]byte("kept")); err != nil {
		t.Fatal(err)
	}
	fail := errors.New("EIO")
	fsync = func(*os.File) error { return fail }
	err = s.Append([]byte("lost"))
	fsync = (*os.File).Sync
	if !errors.Is(err, fail) {
		t.Fatalf("append with a failing fsync: %v", err)
	}
	if got := fmt.Sprint(payloads(t, s, 10)); got != "[kept]" || s.Len() != 1 {
		t.Fatalf("after the failed append: %s, %d records", got, s.Len())
	}
	if err := s.Append([]byte("after")); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := fmt.Sprint(payloads(t, s, 10)); got != "[kept after]" || s.Dropped != 0 {
		t.Fatalf("after reopen: %s (dropped %d)", got, s.Dropped)
	}
}

// TestPeekBytes: PeekBytes stops before the record that would take the
// batch past its bytes, but always returns one record, however large.
func TestPeekBytes(t *testing.T) {
	s, err := Open(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Append(bytes.Repeat([]byte("a"), 1000))
	for i := 0; i < 5; i++ {
		s.Append(bytes.Repeat([]byte("b"), 100))
	}
	recs, err := s.PeekBytes(10, 500)
	if err != nil || len(recs) != 1 || len(recs[0].Payload) != 1000 {
		t.Fatalf("a record larger than the bound: %d records, %v", len(recs), err)
	}
	if err := s.Commit(recs); err != nil {
		t.Fatal(err)
	}
	recs, _ = s.PeekBytes(10, 3*(headerSize+100))
	if len(recs) != 3 {
		t.Fatalf("%d records within 3 records' bytes, want 3", len(recs))
	}
	if recs, _ = s.PeekBytes(2, 0); len(recs) != 2 {
		t.Fatalf("%d records without a byte bound and max 2", len(recs))
	}
}

// Commit does not fsync the head: a crash that loses its last head
// writes delivers those records again, and loses none, also those
// appended after a drain that left the log in place.
func TestStaleHeadRedelivers(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"a", "b", "c"} {
		s.Append([]byte(p))
	}
	headPath := filepath.Join(dir, headName)
	durable, _ := os.ReadFile(headPath) // the head as last fsynced (0)
	syncs := s.headSyncs
	recs, _ := s.Peek(2)
	if err := s.Commit(recs); err != nil {
		t.Fatal(err)
	}
	recs, _ = s.Peek(10)
	if err := s.Commit(recs); err != nil { // drained: the log stays
		t.Fatal(err)
	}
	if s.headSyncs != syncs {
		t.Fatalf("Commit fsynced the head %d times", s.headSyncs-syncs)
	}
	s.Append([]byte("d"))
	if got := fmt.Sprint(payloads(t, s, 10)); got != "[d]" {
		t.Fatalf("before the crash: %s", got)
	}
	s.Close()
	// the crash: the head's writes since its last fsync are lost
	if err := os.WriteFile(headPath, durable, 0o640); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := fmt.Sprint(payloads(t, s, 10)); got != "[a b c d]" || s.Dropped != 0 {
		t.Fatalf("after the crash: %s (dropped %d)", got, s.Dropped)
	}
}

// Tidy leaves a spool with undelivered records alone.
func TestTidyKeepsUndelivered(t *testing.T) {
	dir := t.TempDir()
	s, _ := Open(dir, 0)
	defer s.Close()
	s.Append([]byte("a"))
	s.Append([]byte("b"))
	recs, _ := s.Peek(1)
	s.Commit(recs)
	if err := s.Tidy(); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(payloads(t, s, 10)); got != "[b]" {
		t.Fatalf("after Tidy: %s", got)
	}
	recs, _ = s.Peek(1)
	if err := s.Commit(recs); err != nil {
		t.Fatal(err)
	}
	s.Tidy()
	if fi, _ := os.Stat(filepath.Join(dir, logName)); fi.Size() != 0 {
		t.Fatalf("log %d bytes after the last delivery and Tidy", fi.Size())
	}
	// Close empties a delivered log too
	s.Append([]byte("c"))
	recs, _ = s.Peek(1)
	s.Commit(recs)
	if fi, _ := os.Stat(filepath.Join(dir, logName)); fi.Size() == 0 {
		t.Fatal("the log was emptied by the delivery itself")
	}
	s.Close()
	if fi, _ := os.Stat(filepath.Join(dir, logName)); fi.Size() != 0 {
		t.Fatalf("log %d bytes after the last delivery and Close", fi.Size())
	}
}
