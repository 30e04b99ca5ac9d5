package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"reportdb/internal/tlsauth/tlstest"
)

var httpsRE = regexp.MustCompile(`addr=https://([0-9.:]+)`)

// lockedBuffer collects a process's stderr.
type lockedBuffer struct {
	mu  sync.Mutex
	b   bytes.Buffer
	eof chan struct{} // closed when the process's stderr is read to the end
}

// waitEOF waits until the whole log has been read (the process has
// exited and closed its stderr). cmd.Wait closes the pipe as soon as the
// process exits, so it must not be called before: the last lines would
// be lost (CI once missed "reportdb stopped" that way).
func (l *lockedBuffer) waitEOF(within time.Duration) bool {
	select {
	case <-l.eof:
		return true
	case <-time.After(within):
		return false
	}
}

func (l *lockedBuffer) add(s string) { l.mu.Lock(); l.b.WriteString(s + "\n"); l.mu.Unlock() }
func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startBinary starts the real binary with args and waits for it to log
// the addresses of its plain and TLS listeners.
func startBinary(t *testing.T, bin string, tlsToo bool, args ...string) (cmd *exec.Cmd, httpAddr, httpsAddr string, log *lockedBuffer) {
	t.Helper()
	cmd = exec.Command(bin, append([]string{"serve"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	log = &lockedBuffer{eof: make(chan struct{})}
	addrs := make(chan [2]string, 8)
	go func() {
		defer close(log.eof)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			log.add(line)
			if m := listenRE.FindStringSubmatch(line); m != nil {
				addrs <- [2]string{"http", m[1]}
			}
			if m := httpsRE.FindStringSubmatch(line); m != nil {
				addrs <- [2]string{"https", m[1]}
			}
		}
	}()
	deadline := time.After(60 * time.Second)
	for httpAddr == "" || (tlsToo && httpsAddr == "") {
		select {
		case a := <-addrs:
			if a[0] == "http" {
				httpAddr = a[1]
			} else {
				httpsAddr = a[1]
			}
		case <-deadline:
			t.Fatalf("server did not report its addresses:\n%s", log)
		}
	}
	return cmd, httpAddr, httpsAddr, log
}

// TestGracefulShutdown: SIGTERM while a query (on the plain listener) and
// a report submission (on the TLS listener) are in flight — their request
// bodies are still arriving — stops both listeners from accepting, lets
// both requests complete, stores the submitted report and exits 0.
func TestGracefulShutdown(t *testing.T) {
	bin := buildBinary(t)
	dataDir := t.TempDir()
	pkiArgs := []string{"--tls-cert", tlstest.File(t, "server.pem"), "--tls-key", tlstest.File(t, "server_key.pem"),
		"--tls-ca", tlstest.File(t, "ca.pem")}
	args := append([]string{"--listen", "127.0.0.1:0", "--tls-listen", "127.0.0.1:0", "--data-dir", dataDir}, pkiArgs...)
	cmd, httpAddr, httpsAddr, log := startBinary(t, bin, true, args...)

	body, certname := corpusReport(t, 0)
	if status, msg, err := submit(http.DefaultClient, "http://"+httpAddr, body, certname); err != nil || status != 200 {
		t.Fatalf("first report: %d %q %v", status, msg, err)
	}

	// a query whose body arrives slowly: the handler is running (reading
	// it) when SIGTERM comes
	query := []byte(`{"query": ["extract", ["certname", "hash"]], "order_by": [{"field": "certname"}]}`)
	qconn, err := net.Dial("tcp", httpAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer qconn.Close()
	fmt.Fprintf(qconn, "POST /pdb/query/v4/reports HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n", httpAddr, len(query))
	qconn.Write(query[:10])

	// a report submission over TLS, likewise half sent
	body2, certname2 := corpusReport(t, 1)
	sconn, err := tls.Dial("tcp", httpsAddr, tlstest.Transport(t, tlstest.TestClientCert(t)).TLSClientConfig)
	if err != nil {
		t.Fatal(err)
	}
	defer sconn.Close()
	path := commandURL("", certname2)
	fmt.Fprintf(sconn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n", path, httpsAddr, len(body2))
	sconn.Write(body2[:len(body2)/2])

	time.Sleep(500 * time.Millisecond) // the server has read the headers
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// both listeners stop accepting
	waitRefused := func(addr string) {
		deadline := time.Now().Add(10 * time.Second)
		for {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err != nil {
				return
			}
			c.Close()
			if time.Now().After(deadline) {
				t.Fatalf("%s still accepts connections after SIGTERM", addr)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitRefused(httpAddr)
	waitRefused(httpsAddr)
	if err := cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("the server exited with requests in flight: %v", err)
	}

	// the in-flight requests complete
	qconn.Write(query[10:])
	sconn.Write(body2[len(body2)/2:])
	qresp, err := http.ReadResponse(bufio.NewReader(qconn), nil)
	if err != nil {
		t.Fatalf("in-flight query: %v\n%s", err, log)
	}
	var rows []map[string]string
	if err := json.NewDecoder(qresp.Body).Decode(&rows); err != nil || qresp.StatusCode != 200 || len(rows) != 1 || rows[0]["certname"] != certname {
		t.Fatalf("in-flight query: %d %v %v", qresp.StatusCode, rows, err)
	}
	sresp, err := http.ReadResponse(bufio.NewReader(sconn), nil)
	if err != nil {
		t.Fatalf("in-flight submission: %v\n%s", err, log)
	}
	msg, _ := io.ReadAll(sresp.Body)
	if sresp.StatusCode != 200 {
		t.Fatalf("in-flight submission: %d %s", sresp.StatusCode, msg)
	}

	exited := make(chan error, 1)
	go func() {
		log.waitEOF(30 * time.Second)
		exited <- cmd.Wait()
	}()
	select {
	case err := <-exited:
		if err != nil || cmd.ProcessState.ExitCode() != 0 {
			t.Fatalf("exit: %v (code %d)\n%s", err, cmd.ProcessState.ExitCode(), log)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the server did not exit after SIGTERM\n%s", log)
	}
	if !strings.Contains(log.String(), "reportdb stopped") {
		t.Errorf("no stop message in the log:\n%s", log)
	}

	// the report submitted during shutdown was stored
	_, httpAddr, _, _ = startBinary(t, bin, false, "--listen", "127.0.0.1:0", "--data-dir", dataDir)
	if n := countReports(t, http.DefaultClient, "http://"+httpAddr); n != 2 {
		t.Fatalf("%d reports after restart, want 2", n)
	}
}
