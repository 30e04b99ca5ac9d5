package main

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reportdb/internal/benchfleet"
	"reportdb/internal/config"
)

// TestDiskFullSQLite runs the embedded store on a 3 MiB tmpfs (a real
// ENOSPC, not an injected error) and fills it: submissions get 507 with a
// message (or are spooled while the spool still has room), nothing
// acknowledged is lost, and once space is freed the server takes reports
// again by itself and delivers what it spooled.
func TestDiskFullSQLite(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs (%v: %s)", err, out)
	}
	t.Cleanup(func() {
		// the server (stopped by an earlier cleanup) must have closed its files
		for i := 0; i < 50; i++ {
			if exec.Command("umount", dir).Run() == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		exec.Command("umount", "-l", dir).Run()
	})
	cfg := config.Defaults()
	cfg.Listen = "127.0.0.1:0"
	cfg.DataDir = filepath.Join(dir, "data")
	cfg.ReportTTL = 0
	base := "http://" + startInProcess(t, cfg).HTTP
	// leave about 1.2 MiB free
	filler := filepath.Join(dir, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(make([]byte, 1<<20+512<<10))
	f.Close()

	reports := benchfleet.Wire8(t, 1)
	acked := 0
	var refusal string
	for i, r := range reports {
		status, msg, err := submit(http.DefaultClient, base, r.Body, r.Certname)
		if err != nil {
			t.Fatal(err)
		}
		if status == 200 {
			acked++
			continue
		}
		refusal = msg
		if status != 507 || !strings.Contains(msg, "No space left") {
			t.Fatalf("submission %d on a full disk: %d %q", i, status, msg)
		}
		break
	}
	if refusal == "" {
		t.Fatal("the disk never filled up")
	}
	t.Logf("%d reports acknowledged before the disk was full; then: %s", acked, refusal)
	// queries still work on a full disk
	if code, _, msg := get(t, base+"/pdb/query/v4/reports?limit=1"); code != 200 {
		t.Errorf("query on a full disk: %d %q", code, msg)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	// recovers by itself: spooled reports delivered, new ones stored
	waitQueueEmpty(t, base, time.Minute)
	more := 0
	for _, r := range reports[acked+1 : acked+6] {
		status, msg, err := submit(http.DefaultClient, base, r.Body, r.Certname)
		if err != nil || status != 200 {
			t.Fatalf("after space was freed: %d %q %v", status, msg, err)
		}
		more++
	}
	waitQueueEmpty(t, base, time.Minute)
	if n := countReports(t, http.DefaultClient, base); n != acked+more {
		t.Errorf("%d reports stored, %d acknowledged", n, acked+more)
	}
	code, _, msg := get(t, base+"/pdb/query/v4/events?limit=1")
	if code != 200 {
		t.Errorf("events after recovery: %d %q", code, msg)
	}
}
