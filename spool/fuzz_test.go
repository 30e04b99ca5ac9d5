package spool

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzOpen: whatever bytes the log and head files hold (a crash, a disk
// error), Open never panics, keeps only records whose CRC is right, and
// appends after them so that a reopen sees the same records plus the new
// one.
func FuzzOpen(f *testing.F) {
	dir := f.TempDir()
	s, _ := Open(dir, 0)
	s.Append([]byte("first"))
	s.Append([]byte(`{"certname":"a"}`))
	s.Close()
	good, _ := os.ReadFile(filepath.Join(dir, logName))
	head, _ := os.ReadFile(filepath.Join(dir, headName))
	f.Add(good, head)
	f.Add(good[:len(good)-3], head)
	f.Add([]byte{}, []byte{})
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f, 1, 2, 3, 4}, []byte("garbage"))
	f.Fuzz(func(t *testing.T, log, head []byte) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, logName), log, 0o640)
		os.WriteFile(filepath.Join(dir, headName), head, 0o640)
		s, err := Open(dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := s.Peek(1 << 20)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != s.Len() {
			t.Fatalf("Peek %d records, Len %d", len(recs), s.Len())
		}
		if err := s.Append([]byte("appended")); err != nil {
			t.Fatal(err)
		}
		s.Close()
		s, err = Open(dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		again, _ := s.Peek(1 << 20)
		if len(again) != len(recs)+1 || string(again[len(recs)].Payload) != "appended" {
			t.Fatalf("after append and reopen: %d records (had %d)", len(again), len(recs))
		}
		for i := range recs {
			if !bytes.Equal(recs[i].Payload, again[i].Payload) {
				t.Fatalf("record %d changed", i)
			}
		}
	})
}
