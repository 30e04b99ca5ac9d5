package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// dataDirLockName is the file in the data directory that the server using
// its embedded store holds locked (flock), with its pid in it.
const dataDirLockName = "reportdb.lock"

// lockDataDir takes the data directory for this process, or says which
// process has it. The embedded store is one SQLite file with one writer
// at a time: a second server's group commits, retention and compaction
// would queue behind the first's across processes and fail past SQLite's
// busy timeout, so one server owns it. The spool's own lock does not
// cover this (a second server may be given another spool directory).
// The lock goes with the process, however it ends.
func lockDataDir(dir string) (unlock func(), err error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, dataDirLockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		holder := "another reportdb"
		if b, rerr := os.ReadFile(path); rerr == nil {
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil && pid > 0 {
				holder = fmt.Sprintf("another reportdb (pid %d)", pid)
			}
		}
		return nil, fmt.Errorf("data directory %s is in use by %s: its embedded store can serve one reportdb only; stop that one, or give this one another --data-dir (several instances share one store only on PostgreSQL, --database)", dir, holder)
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() { f.Close() }, nil
}
