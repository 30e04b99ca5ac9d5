package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"reportdb/internal/testcorpus"
)

// buildBinary compiles reportdb once per test binary run.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "reportdb")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go build: %v", err)
	}
	return bin
}

var listenRE = regexp.MustCompile(`addr=http://([0-9.:]+)`)

// startServer starts the real binary on the embedded store in dataDir and
// returns its base URL.
func startServer(t *testing.T, bin, dataDir string) (*exec.Cmd, string) {
	t.Helper()
	cmd, addr, _, _ := startBinary(t, bin, false, "--listen", "127.0.0.1:0", "--data-dir", dataDir)
	return cmd, "http://" + addr
}

// TestKill9Durability: a report acknowledged by the server survives an
// immediate kill -9 of the process.
func TestKill9Durability(t *testing.T) {
	bin := buildBinary(t)
	dataDir := t.TempDir()
	m, dir := testcorpus.LoadManifest(t)
	cmd, base := startServer(t, bin, dataDir)
	var acked []string
	for i, s := range m.Submissions[:20] {
		body := testcorpus.ReadFile(t, filepath.Join(dir, s.Wire8))
		q := url.Values{"command": {"store_report"}, "version": {"8"}, "certname": {s.Certname}}
		resp, err := http.Post(base+"/pdb/cmd/v1?"+q.Encode(), "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("submission %d: status %d", i, resp.StatusCode)
		}
		var doc struct {
			ProducerTimestamp string `json:"producer_timestamp"`
			Certname          string `json:"certname"`
		}
		json.Unmarshal(body, &doc)
		acked = append(acked, doc.Certname+"|"+doc.ProducerTimestamp)
	}
	// kill -9 right after the last acknowledgement
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	_, base = startServer(t, bin, dataDir)
	resp, err := http.Get(base + "/pdb/query/v4/reports?" + url.Values{"query": {`["extract",["certname","producer_timestamp"]]`}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var rows []map[string]string
	if err := json.NewDecoder(resp.Body).Decode(&rows); err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, r := range rows {
		have[r["certname"]+"|"+r["producer_timestamp"]] = true
	}
	for _, a := range acked {
		c, ts, _ := strings.Cut(a, "|")
		// the stored timestamp is normalised to ms UTC; compare by certname
		// and instant
		found := false
		for k := range have {
			kc, kts, _ := strings.Cut(k, "|")
			if kc == c && sameInstant(t, kts, ts) {
				found = true
			}
		}
		if !found {
			t.Errorf("acknowledged report %s lost after kill -9 (have %d reports)", a, len(rows))
		}
	}
	distinct := map[string]bool{}
	for _, a := range acked {
		distinct[a] = true
	}
	if len(rows) != len(distinct) {
		t.Errorf("have %d reports after restart, acknowledged %d distinct reports", len(rows), len(distinct))
	}
}

func sameInstant(t *testing.T, a, b string) bool {
	ta, err1 := time.Parse(time.RFC3339Nano, a)
	tb, err2 := time.Parse(time.RFC3339Nano, b)
	if err1 != nil || err2 != nil {
		t.Fatalf("bad timestamps %q %q", a, b)
	}
	return ta.Truncate(time.Millisecond).Equal(tb.Truncate(time.Millisecond))
}

var _ = fmt.Sprint
