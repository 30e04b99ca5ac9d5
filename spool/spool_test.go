package spool

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
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
	fi, _ := os.Stat(filepath.Join(dir, logName))
	if fi.Size() != 0 || s.Len() != 0 {
		t.Fatalf("drained spool: log %d bytes, %d records", fi.Size(), s.Len())
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
