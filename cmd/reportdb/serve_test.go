package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"reportdb/internal/config"
	"reportdb/internal/pgtest"
	"reportdb/internal/testcorpus"
	"reportdb/internal/tlsauth/tlstest"
)

// startInProcess runs serve() with cfg until the test ends.
func startInProcess(t *testing.T, cfg *serveConfig) listening {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	at := make(chan listening, 1)
	done := make(chan error, 1)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	go func() { done <- serve(ctx, cfg, log, func(l listening) { at <- l }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	select {
	case l := <-at:
		return l
	case err := <-done:
		t.Fatalf("serve: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("serve did not start")
	}
	return listening{}
}

// corpusReport returns the wire v8 body and certname of corpus submission i.
func corpusReport(t *testing.T, i int) ([]byte, string) {
	t.Helper()
	m, dir := testcorpus.LoadManifest(t)
	s := m.Submissions[i]
	return testcorpus.ReadFile(t, filepath.Join(dir, s.Wire8)), s.Certname
}

func commandURL(base, certname string) string {
	q := url.Values{"command": {"store_report"}, "version": {"8"}, "certname": {certname}}
	return base + "/pdb/cmd/v1?" + q.Encode()
}

// submit posts a wire v8 report; it returns the status, or 0 and the error
// when the connection failed.
func submit(c *http.Client, base string, body []byte, certname string) (int, string, error) {
	resp, err := c.Post(commandURL(base, certname), "application/json", bytes.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

// countReports counts the stored reports through base.
func countReports(t *testing.T, c *http.Client, base string) int {
	t.Helper()
	resp, err := c.Get(base + "/pdb/query/v4/reports?" + url.Values{"query": {`["extract",["hash"]]`}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var rows []map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&rows); err != nil {
		t.Fatal(err)
	}
	return len(rows)
}

// TestTLSListener: clients without a certificate, with a certificate of
// another CA, with a revoked certificate, or not on the allowlist are
// refused (the first three in the handshake, the last with 403), and
// nothing any of them sent is stored; an allowed client and the plain HTTP
// listener work.
func TestTLSListener(t *testing.T) {
	ca := tlstest.TestCA(t)
	dir := t.TempDir()
	allowed := ca.Issue(t, "puppet.example.test")
	revoked := ca.Issue(t, "revoked.example.test")
	cfg := config.Defaults()
	cfg.Listen = "127.0.0.1:0"
	cfg.TLSListen = "127.0.0.1:0"
	cfg.TLSCert = tlstest.File(t, "server.pem")
	cfg.TLSKey = tlstest.File(t, "server_key.pem")
	cfg.TLSCA = tlstest.File(t, "ca.pem")
	cfg.TLSCRL = tlstest.WriteFile(t, dir, "crl.pem", ca.CRL(t, revoked.Cert))
	cfg.CertAllowlist = tlstest.WriteFile(t, dir, "allowlist", []byte("puppet.example.test\nrevoked.example.test\n"))
	cfg.DataDir = t.TempDir()
	at := startInProcess(t, cfg)
	https, plain := "https://"+at.HTTPS, "http://"+at.HTTP

	body, certname := corpusReport(t, 0)
	refused := []struct {
		name   string
		certs  []tls.Certificate
		status int // 0: the handshake fails
	}{
		{"no client certificate", nil, 0},
		{"certificate of another CA", []tls.Certificate{tlstest.NewCA(t, "Other CA").Issue(t, "puppet.example.test").TLS}, 0},
		{"revoked certificate", []tls.Certificate{revoked.TLS}, 0},
		{"certificate not on the allowlist", []tls.Certificate{tlstest.TestClientCert(t)}, 403},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			c := tlstest.Client(t, tc.certs...)
			status, msg, err := submit(c, https, body, certname)
			if tc.status == 0 {
				if err == nil {
					t.Fatalf("submission accepted with %d %q; want a failed handshake", status, msg)
				}
				t.Logf("refused: %v", err)
			} else if status != tc.status || !strings.Contains(msg, "puppet-client.clients.test doesn't appear in the certificate allowlist") {
				t.Fatalf("got %d %q %v, want %d", status, msg, err, tc.status)
			}
			// queries are refused alike
			resp, err := c.Get(https + "/pdb/query/v4/reports")
			if tc.status == 0 {
				if err == nil {
					resp.Body.Close()
					t.Fatalf("query answered %d", resp.StatusCode)
				}
			} else {
				if err != nil || resp.StatusCode != 403 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
					t.Fatalf("query: %v %v", resp, err)
				}
				resp.Body.Close()
			}
		})
	}
	if n := countReports(t, http.DefaultClient, plain); n != 0 {
		t.Fatalf("%d reports stored from refused clients", n)
	}

	good := tlstest.Client(t, allowed.TLS)
	if status, msg, err := submit(good, https, body, certname); err != nil || status != 200 {
		t.Fatalf("allowed client: %d %q %v", status, msg, err)
	}
	if n := countReports(t, good, https); n != 1 {
		t.Fatalf("allowed client sees %d reports, want 1", n)
	}
	// the allowlist applies to the TLS listener only (as PuppetDB's)
	body2, certname2 := corpusReport(t, 1)
	if status, msg, err := submit(http.DefaultClient, plain, body2, certname2); err != nil || status != 200 {
		t.Fatalf("plain HTTP: %d %q %v", status, msg, err)
	}
	if n := countReports(t, http.DefaultClient, plain); n != 2 {
		t.Fatalf("%d reports, want 2", n)
	}
}

// scrape returns the sample values of /metrics by "name{labels}".
func scrape(t *testing.T, c *http.Client, base string) map[string]float64 {
	t.Helper()
	resp, err := c.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("/metrics: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("bad sample %q", line)
		}
		out[line[:i]] = v
	}
	return out
}

// TestMetrics scrapes /metrics before and after submissions and queries
// and checks that exactly the right series moved.
func TestMetrics(t *testing.T) {
	cfg := config.Defaults()
	cfg.Listen = "127.0.0.1:0"
	cfg.DataDir = t.TempDir()
	base := "http://" + startInProcess(t, cfg).HTTP
	c := http.DefaultClient

	before := scrape(t, c, base)
	for _, name := range []string{
		`reportdb_ingest_reports_total{channel="command",outcome="stored"}`,
		`reportdb_ingest_reports_total{channel="import",outcome="stored"}`,
		`reportdb_ingest_reports_total{channel="http_processor",outcome="rejected"}`,
		`reportdb_db_pool_max_connections{pool="sqlite_writer"}`,
		`reportdb_retention_runs_total{result="ok"}`,
		`reportdb_commit_batch_size_count`,
		`go_goroutines`,
	} {
		if _, ok := before[name]; !ok {
			t.Errorf("series %s missing before any traffic", name)
		}
	}

	body, certname := corpusReport(t, 0)
	for i, want := range []int{200, 200} { // the second is a duplicate
		if status, msg, err := submit(c, base, body, certname); err != nil || status != want {
			t.Fatalf("submission %d: %d %q %v", i, status, msg, err)
		}
	}
	if status, _, _ := submit(c, base, []byte(`{"certname":"x"}`), "x"); status != 400 {
		t.Fatalf("invalid report: %d", status)
	}
	// Puppet's own report format, as an agent PUTs it
	m, dir := testcorpus.LoadManifest(t)
	s := m.Submissions[2]
	req, _ := http.NewRequest("PUT", base+"/puppet/v3/report/"+s.Certname+"?producer_timestamp="+url.QueryEscape(s.ProducerTimestamp),
		bytes.NewReader(testcorpus.ReadFile(t, filepath.Join(dir, s.Format10))))
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("puppet report: %d", resp.StatusCode)
	}
	for _, p := range []string{"/pdb/query/v4/reports", "/pdb/query/v4/events?query=%5B%22%3D%22%2C%22status%22%2C%22failed%22%5D",
		"/pdb/query/v4/events?query=nonsense", "/pdb/query/v4/reports/0123456789abcdef/events", "/pdb/query/v4/nodes/web01"} {
		resp, err := c.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	after := scrape(t, c, base)

	delta := func(name string) float64 { return after[name] - before[name] }
	for name, want := range map[string]float64{
		`reportdb_ingest_reports_total{channel="command",outcome="stored"}`:               1,
		`reportdb_ingest_reports_total{channel="command",outcome="duplicate"}`:            1,
		`reportdb_ingest_reports_total{channel="command",outcome="rejected"}`:             1,
		`reportdb_ingest_reports_total{channel="command",outcome="error"}`:                0,
		`reportdb_ingest_reports_total{channel="puppet_report",outcome="stored"}`:         1,
		`reportdb_ingest_duration_seconds_count{channel="command",outcome="stored"}`:      1,
		`reportdb_query_requests_total{code="200",endpoint="reports"}`:                    1,
		`reportdb_query_requests_total{code="200",endpoint="events"}`:                     1,
		`reportdb_query_requests_total{code="400",endpoint="events"}`:                     1,
		`reportdb_query_requests_total{code="404",endpoint="reports/<hash>/events"}`:      1,
		`reportdb_query_requests_total{code="200",endpoint="nodes/<certname>"}`:           0,
		`reportdb_query_duration_seconds_count{code="200",endpoint="reports"}`:            1,
		`reportdb_commit_batch_size_count`:                                                3,
		`reportdb_commit_batches_total{result="ok"}`:                                      3,
		`reportdb_query_duration_seconds_bucket{code="200",endpoint="reports",le="+Inf"}`: 1,
	} {
		if got := delta(name); got != want {
			t.Errorf("%s moved by %v, want %v", name, got, want)
		}
	}
	if after[`reportdb_db_pool_open_connections{pool="sqlite_reader"}`] < 1 {
		t.Error("the SQLite reader pool shows no open connection after queries")
	}
	// /metrics is never labelled by raw path
	for name := range after {
		if strings.Contains(name, "0123456789abcdef") || strings.Contains(name, "web01") {
			t.Errorf("raw path in a label: %s", name)
		}
	}
}

func TestPrintConfig(t *testing.T) {
	t.Setenv("REPORTDB_DATABASE", "postgres://reportdb:hunter2@db/reportdb")
	var out, errb bytes.Buffer
	if rc := run([]string{"serve", "--print-config", "--report-ttl", "30d"}, &out, &errb); rc != 0 {
		t.Fatalf("exit %d: %s", rc, errb.String())
	}
	s := out.String()
	if strings.Contains(s, "hunter2") || !strings.Contains(s, "database: postgres://reportdb:xxxxx@db/reportdb # env REPORTDB_DATABASE") ||
		!strings.Contains(s, "report-ttl: 30d # flag --report-ttl") {
		t.Fatalf("print-config:\n%s", s)
	}
	if rc := run([]string{"serve", "--listen", "", "--print-config"}, &out, &errb); rc != 2 || !strings.Contains(errb.String(), "no listener") {
		t.Fatalf("no listener: exit %d %s", rc, errb.String())
	}
}

// TestMetricsPostgres: on PostgreSQL, /metrics shows the pgx pool and the
// ingest and query series move as on SQLite.
func TestMetricsPostgres(t *testing.T) {
	cfg := config.Defaults()
	cfg.Listen = "127.0.0.1:0"
	cfg.Database = pgtest.NewDatabase(t)
	cfg.DataDir = t.TempDir() // the spool
	base := "http://" + startInProcess(t, cfg).HTTP
	c := http.DefaultClient
	before := scrape(t, c, base)
	body, certname := corpusReport(t, 0)
	if status, msg, err := submit(c, base, body, certname); err != nil || status != 200 {
		t.Fatalf("submission: %d %q %v", status, msg, err)
	}
	if n := countReports(t, c, base); n != 1 {
		t.Fatalf("%d reports", n)
	}
	after := scrape(t, c, base)
	for name, want := range map[string]float64{
		`reportdb_ingest_reports_total{channel="command",outcome="stored"}`: 1,
		`reportdb_query_requests_total{code="200",endpoint="reports"}`:      1,
		`reportdb_commit_batches_total{result="ok"}`:                        1,
	} {
		if got := after[name] - before[name]; got != want {
			t.Errorf("%s moved by %v, want %v", name, got, want)
		}
	}
	if after[`reportdb_db_pool_max_connections{pool="postgres"}`] < 1 ||
		after[`reportdb_db_pool_acquires_total{pool="postgres"}`] <= before[`reportdb_db_pool_acquires_total{pool="postgres"}`] {
		t.Errorf("PostgreSQL pool metrics: max %v, acquires %v -> %v", after[`reportdb_db_pool_max_connections{pool="postgres"}`],
			before[`reportdb_db_pool_acquires_total{pool="postgres"}`], after[`reportdb_db_pool_acquires_total{pool="postgres"}`])
	}
}
