package main

// The replica suite: the real binary with a streaming hot standby of its
// PostgreSQL as --read-database, and through failovers of the primary.
// Every test starts clusters of its own (pgtest.NewCluster and Standby, on
// free ports), never touching the shared server.
//
//   - TestReplicaConformance: every conformance case answered through a
//     binary that reads from the standby, most of them by the standby.
//   - TestReplicaConsistency: X-Reportdb-Consistency: read-your-writes and
//     primary see a report the paused standby has not replayed; a plain
//     query is answered by the standby without it.
//   - TestReplicaLagRotation: a standby whose replay is paused under ingest
//     leaves the rotation within --max-replica-lag plus 5 s, the primary
//     answers, and it comes back once replay resumes.
//   - TestFailoverUnderIngest: synchronous replication, the primary killed
//     with SIGKILL under ingest by 8 submitters and the standby promoted;
//     every acknowledged report is stored exactly once with all its
//     events, and the counts answered from the rollups equal a scan's.
//     Twice: reportdb survives the failover, and reportdb is killed with
//     SIGKILL during it and restarted on its spool. A second instance on
//     the same databases runs beside it throughout.
//
// Short by default (one failover of each kind); the long run, each round a
// new standby of the last promoted primary:
//
//	go test ./cmd/reportdb -run 'Replica|Failover' -failovers=20 -timeout 60m -v

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"reportdb/internal/conformance"
	"reportdb/internal/pgtest"
	"reportdb/internal/testcorpus"
	"reportdb/schema"
	"reportdb/store"
	"reportdb/storetest"
)

var failovers = flag.Int("failovers", envInt("REPORTDB_FAILOVERS", 1), "failovers of each kind in TestFailoverUnderIngest (env REPORTDB_FAILOVERS)")

// The phases of a failover round: ingest before the primary is killed,
// the primary down before the standby is promoted, ingest after.
const (
	failoverBefore    = 2 * time.Second
	failoverDown      = 1500 * time.Millisecond
	failoverAfter     = 3 * time.Second
	failoverSubmitter = 8
)

// replicaDB is the URL of database reportdb on c; with more clusters, a
// multi-host URL listing c and them, in that order.
func replicaDB(c *pgtest.Cluster, more ...*pgtest.Cluster) string {
	hosts := []string{c.HostPort()}
	for _, m := range more {
		hosts = append(hosts, m.HostPort())
	}
	u, err := url.Parse(c.URL())
	if err != nil {
		panic(err)
	}
	u.Path = "/reportdb"
	return strings.Replace(u.String(), "@"+c.HostPort()+"/", "@"+strings.Join(hosts, ",")+"/", 1)
}

// newPrimary starts a cluster with an empty database reportdb and a
// streaming standby of it.
func newPrimary(t *testing.T) (primary, standby *pgtest.Cluster) {
	t.Helper()
	primary = pgtest.NewCluster(t)
	primary.Exec(t, "CREATE DATABASE reportdb")
	return primary, primary.Standby(t)
}

// rserver is a running reportdb binary.
type rserver struct {
	cmd  *exec.Cmd
	base string
	log  *lockedBuffer
}

func startRServer(t *testing.T, bin string, args ...string) *rserver {
	t.Helper()
	cmd, addr, _, log := startBinary(t, bin, false, args...)
	return &rserver{cmd, "http://" + addr, log}
}

// stop stops the server with SIGTERM and waits for it to exit.
func (s *rserver) stop(t *testing.T) {
	t.Helper()
	s.cmd.Process.Signal(syscall.SIGTERM)
	s.log.waitEOF(30 * time.Second)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("the server did not stop after SIGTERM:\n%s", s.log)
	}
}

// alive reports whether the server's process runs (its stderr is open).
func (s *rserver) alive() bool {
	select {
	case <-s.log.eof:
		return false
	default:
		return true
	}
}

// handler is the server as an http.Handler (for package conformance).
func (s *rserver) handler(t *testing.T) http.Handler {
	u, err := url.Parse(s.base)
	if err != nil {
		t.Fatal(err)
	}
	return httputil.NewSingleHostReverseProxy(u)
}

// metricSum sums the samples of name (scrape's map) whose labels include
// the pairs of labels (name, value, ...); found says whether any did.
func metricSum(m map[string]float64, name string, labels ...string) (sum float64, found bool) {
	for k, v := range m {
		n, l, _ := strings.Cut(k, "{")
		if n != name {
			continue
		}
		l = "," + strings.TrimSuffix(l, "}")
		match := true
		for i := 0; i+1 < len(labels); i += 2 {
			if !strings.Contains(l, ","+labels[i]+"="+fmt.Sprintf("%q", labels[i+1])) {
				match = false
				break
			}
		}
		if match {
			sum += v
			found = true
		}
	}
	return sum, found
}

// dbQueries is reportdb_database_queries_total of one role.
func dbQueries(m map[string]float64, role string) float64 {
	n, _ := metricSum(m, "reportdb_database_queries_total", "role", role)
	return n
}

// dbSeries lists the series of the reportdb_database_ metrics, for
// messages.
func dbSeries(m map[string]float64) string {
	var out []string
	for k, v := range m {
		if strings.HasPrefix(k, "reportdb_database_") {
			out = append(out, fmt.Sprintf("%s %v", k, v))
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// waitMetrics waits until cond holds of the server's /metrics.
func waitMetrics(t *testing.T, base string, within time.Duration, what string, cond func(m map[string]float64) bool) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		m := scrape(t, http.DefaultClient, base)
		if cond(m) {
			return time.Since(start)
		}
		if time.Since(start) > within {
			t.Fatalf("after %v, still not %s:\n%s", within, what, dbSeries(m))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// inRotation waits until the standby's reportdb_database_replica_in_rotation
// is want.
func inRotation(t *testing.T, base string, standby *pgtest.Cluster, want bool, within time.Duration) time.Duration {
	t.Helper()
	w := map[bool]float64{true: 1, false: 0}[want]
	return waitMetrics(t, base, within, fmt.Sprintf("reportdb_database_replica_in_rotation{server=%q} %v", standby.HostPort(), w),
		func(m map[string]float64) bool {
			v, ok := metricSum(m, "reportdb_database_replica_in_rotation", "server", standby.HostPort())
			return ok && v == w
		})
}

// waitReplayed waits until the standby has replayed all the WAL the
// primary has written.
func waitReplayed(t *testing.T, primary, standby *pgtest.Cluster, within time.Duration) {
	t.Helper()
	var lsn string
	primary.QueryRow(t, "SELECT pg_current_wal_lsn()::text", &lsn)
	deadline := time.Now().Add(within)
	for {
		var done bool
		err := standby.TryQueryRow("SELECT pg_last_wal_replay_lsn() >= '"+lsn+"'::pg_lsn", &done)
		if err == nil && done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the standby %s has not replayed the primary's WAL up to %s after %v (%v)", standby.HostPort(), lsn, within, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// dbServerStatus and dbStatus are /status/v1/services/reportdb-databases.
type dbServerStatus struct {
	Server     string   `json:"server"`
	Role       string   `json:"role"`
	Up         *bool    `json:"up?"`
	InRotation *bool    `json:"in_rotation?"`
	LagSeconds *float64 `json:"lag_seconds"`
	Queries    *int64   `json:"queries"`
}

type dbStatus struct {
	ServiceVersion       string `json:"service_version"`
	ServiceStatusVersion int    `json:"service_status_version"`
	DetailLevel          string `json:"detail_level"`
	State                string `json:"state"`
	Status               struct {
		Servers []dbServerStatus `json:"servers"`
	} `json:"status"`
	ActiveAlerts []any `json:"active_alerts"`
}

func (st dbStatus) server(hostPort string) (dbServerStatus, bool) {
	for _, s := range st.Status.Servers {
		if s.Server == hostPort {
			return s, true
		}
	}
	return dbServerStatus{}, false
}

// databasesStatus reads the reportdb-databases status service (200, or
// 503 when its state is error).
func databasesStatus(t *testing.T, base string) (dbStatus, string) {
	t.Helper()
	resp, err := http.Get(base + "/status/v1/services/reportdb-databases")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var st dbStatus
	if err := json.Unmarshal(b, &st); err != nil || resp.StatusCode != 200 && resp.StatusCode != 503 {
		t.Fatalf("reportdb-databases status: %d %s (%v)", resp.StatusCode, b, err)
	}
	if want := map[string]int{"running": 200, "error": 503}[st.State]; resp.StatusCode != want {
		t.Errorf("reportdb-databases status: state %q answered %d", st.State, resp.StatusCode)
	}
	return st, string(b)
}

// checkLogged checks that the server logged a line containing each of
// needles, and returns those of them it logged outside its logger: every
// line must be slog text like the others (so that --log-format and
// --log-level apply), not Go's default logger's.
func checkLogged(t *testing.T, s *rserver, needles ...string) (outside []string) {
	t.Helper()
	lines := strings.Split(s.log.String(), "\n")
	for _, n := range needles {
		found := false
		for _, l := range lines {
			if strings.Contains(l, n) {
				found = true
				if !strings.HasPrefix(l, "time=") || !strings.Contains(l, " level=") || !strings.Contains(l, " msg=") {
					outside = append(outside, fmt.Sprintf("%s logged %q outside its logger (not slog text): %s", s.base, n, l))
				}
			}
		}
		if !found {
			t.Errorf("no %q in the log of %s", n, s.base)
		}
	}
	return outside
}

// reportKey identifies a stored report as ingestLoad.verify does.
func reportKey(certname, producerTimestamp string) string {
	ts, err := time.Parse(time.RFC3339Nano, producerTimestamp)
	if err != nil {
		return certname + "|" + producerTimestamp
	}
	return certname + "|" + ts.UTC().Truncate(time.Millisecond).Format(time.RFC3339Nano)
}

// storedKeys returns the reports stored, as reportKey, read with the
// consistency header (none when empty).
func storedKeys(t *testing.T, base, consistency string) map[string]bool {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/pdb/query/v4/reports?"+url.Values{"query": {`["extract",["certname","producer_timestamp"]]`}}.Encode(), nil)
	if consistency != "" {
		req.Header.Set("X-Reportdb-Consistency", consistency)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var rows []struct {
		Certname          string `json:"certname"`
		ProducerTimestamp string `json:"producer_timestamp"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(b, &rows) != nil {
		t.Fatalf("reports (consistency %q): %d %.300s", consistency, resp.StatusCode, b)
	}
	out := map[string]bool{}
	for _, r := range rows {
		out[reportKey(r.Certname, r.ProducerTimestamp)] = true
	}
	return out
}

// submitReports submits reports one after the other; each must be
// acknowledged.
func submitReports(t *testing.T, base string, reports []faultReport) {
	t.Helper()
	for _, r := range reports {
		if status, msg, err := submit(http.DefaultClient, base, r.body, r.exp.certname); err != nil || status != 200 {
			t.Fatalf("submitting a report of %s: %d %s %v", r.exp.certname, status, msg, err)
		}
	}
}

func (r faultReport) key() string { return reportKey(r.exp.certname, r.exp.producerTimestamp) }

// TestReplicaConformance: the corpus stored through a binary reading from
// a standby; once the standby has replayed it, every conformance case
// passes, and the standby answered most reads.
func TestReplicaConformance(t *testing.T) {
	primary, standby := newPrimary(t)
	bin := buildBinary(t)
	s := startRServer(t, bin, "--listen", "127.0.0.1:0", "--data-dir", t.TempDir(),
		"--database", replicaDB(primary), "--read-database", replicaDB(standby),
		"--report-ttl", "0", "--node-ttl", "0") // the corpus has fixed dates, in 2025
	h := s.handler(t)
	start := time.Now()
	conformance.LoadCorpus(t, h)
	waitQueueEmpty(t, s.base, time.Minute)
	waitReplayed(t, primary, standby, 30*time.Second)
	inRotation(t, s.base, standby, true, 10*time.Second)
	t.Logf("corpus stored and replayed in %v", time.Since(start).Round(time.Millisecond))

	// the servers' state
	m := scrape(t, http.DefaultClient, s.base)
	if v, ok := metricSum(m, "reportdb_database_primary", "server", primary.HostPort()); !ok || v != 1 {
		t.Errorf("reportdb_database_primary of the primary: %v %v\n%s", v, ok, dbSeries(m))
	}
	if v, _ := metricSum(m, "reportdb_database_primary", "server", standby.HostPort()); v != 0 {
		t.Errorf("reportdb_database_primary of the standby: %v", v)
	}
	if v, ok := metricSum(m, "reportdb_database_replica_lag_seconds", "server", standby.HostPort()); !ok || v > 5 {
		t.Errorf("reportdb_database_replica_lag_seconds of the standby: %v %v", v, ok)
	}
	st, raw := databasesStatus(t, s.base)
	if st.ServiceStatusVersion != 1 || st.DetailLevel != "info" || st.State != "running" || st.ServiceVersion == "" || st.ActiveAlerts == nil {
		t.Errorf("reportdb-databases status: %s", raw)
	}
	if p, ok := st.server(primary.HostPort()); !ok || p.Role != "primary" || p.Up == nil || !*p.Up || p.Queries == nil {
		t.Errorf("reportdb-databases status, the primary: %s", raw)
	}
	if r, ok := st.server(standby.HostPort()); !ok || r.Role != "replica" || r.Up == nil || !*r.Up ||
		r.InRotation == nil || !*r.InRotation || r.LagSeconds == nil || r.Queries == nil {
		t.Errorf("reportdb-databases status, the standby: %s", raw)
	}

	cases := testcorpus.LoadCases(t)
	before := scrape(t, http.DefaultClient, s.base)
	ran, failed := 0, 0
	for _, c := range cases {
		if !storetest.Served(c.Endpoint) {
			continue
		}
		ran++
		t.Run(c.ID, func(t *testing.T) {
			if problems := conformance.Compare(c, conformance.Do(h, c)); len(problems) > 0 {
				failed++
				t.Errorf("%s %s\n  %s", c.Request.Method, c.Request.Target, strings.Join(problems, "\n  "))
			}
		})
	}
	after := scrape(t, http.DefaultClient, s.base)
	if ran < 300 {
		t.Errorf("only %d conformance cases ran", ran)
	}
	replica := dbQueries(after, "replica") - dbQueries(before, "replica")
	onPrimary := dbQueries(after, "primary") - dbQueries(before, "primary")
	t.Logf("%d cases, %d failed; read transactions: %v on the standby, %v on the primary", ran, failed, replica, onPrimary)
	if replica == 0 || replica <= onPrimary {
		t.Errorf("the standby answered %v read transactions, the primary %v: most reads belong on the standby\n%s", replica, onPrimary, dbSeries(after))
	}
	if _, ok := metricSum(after, "reportdb_database_queries_total", "server", standby.HostPort(), "role", "replica"); !ok {
		t.Errorf("no reportdb_database_queries_total{server=%q,role=\"replica\"}:\n%s", standby.HostPort(), dbSeries(after))
	}
}

// TestReplicaConsistency: with replay paused (the standby well within
// --max-replica-lag), a report acknowledged since is missing from a plain
// query, which the standby answers, and present in the answers to
// X-Reportdb-Consistency: read-your-writes and primary.
func TestReplicaConsistency(t *testing.T) {
	primary, standby := newPrimary(t)
	bin := buildBinary(t)
	s := startRServer(t, bin, "--listen", "127.0.0.1:0", "--data-dir", t.TempDir(),
		"--database", replicaDB(primary), "--read-database", replicaDB(standby),
		"--report-ttl", "0", "--node-ttl", "0", "--max-replica-lag", "1h")
	reports := faultReports(t, 1)
	submitReports(t, s.base, reports[:5])
	waitReplayed(t, primary, standby, 30*time.Second)
	inRotation(t, s.base, standby, true, 10*time.Second)

	standby.Exec(t, "SELECT pg_wal_replay_pause()")
	submitReports(t, s.base, reports[5:6])
	late := reports[5].key()

	type answer struct {
		has               bool
		replica, primary_ float64
	}
	ask := func(consistency string) answer {
		before := scrape(t, http.DefaultClient, s.base)
		keys := storedKeys(t, s.base, consistency)
		after := scrape(t, http.DefaultClient, s.base)
		if len(keys) < 5 {
			t.Errorf("consistency %q: %d reports, want at least the 5 replayed", consistency, len(keys))
		}
		return answer{keys[late], dbQueries(after, "replica") - dbQueries(before, "replica"), dbQueries(after, "primary") - dbQueries(before, "primary")}
	}
	if a := ask(""); a.has || a.replica < 1 {
		t.Errorf("a plain query, replay paused: has the late report %v, read transactions on the standby %v, on the primary %v", a.has, a.replica, a.primary_)
	}
	if a := ask("read-your-writes"); !a.has || a.primary_ < 1 {
		t.Errorf("read-your-writes, replay paused: has the late report %v, read transactions on the standby %v, on the primary %v", a.has, a.replica, a.primary_)
	}
	if a := ask("primary"); !a.has || a.primary_ < 1 {
		t.Errorf("primary: has the late report %v, read transactions on the standby %v, on the primary %v", a.has, a.replica, a.primary_)
	}

	req, _ := http.NewRequest("GET", s.base+"/pdb/query/v4/reports", nil)
	req.Header.Set("X-Reportdb-Consistency", "eventually")
	if resp, err := http.DefaultClient.Do(req); err != nil {
		t.Error(err)
	} else {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(string(b), "X-Reportdb-Consistency") {
			t.Errorf("X-Reportdb-Consistency: eventually: %d %s", resp.StatusCode, b)
		}
	}

	standby.Exec(t, "SELECT pg_wal_replay_resume()")
	waitReplayed(t, primary, standby, 30*time.Second)
	if a := ask("read-your-writes"); !a.has || a.replica < 1 {
		t.Errorf("read-your-writes, replayed: has the late report %v, read transactions on the standby %v, on the primary %v", a.has, a.replica, a.primary_)
	}
	if a := ask(""); !a.has || a.replica < 1 {
		t.Errorf("a plain query, replayed: has the late report %v, read transactions on the standby %v, on the primary %v", a.has, a.replica, a.primary_)
	}
}

// TestReplicaLagRotation: replay paused on the standby while reports keep
// coming: within --max-replica-lag + 5 s it leaves the rotation (metrics,
// status, log), and the primary answers, new reports included; replay
// resumed, it comes back and answers again.
func TestReplicaLagRotation(t *testing.T) {
	const maxLag = 2 * time.Second
	primary, standby := newPrimary(t)
	bin := buildBinary(t)
	s := startRServer(t, bin, "--listen", "127.0.0.1:0", "--data-dir", t.TempDir(),
		"--database", replicaDB(primary), "--read-database", replicaDB(standby),
		"--report-ttl", "0", "--node-ttl", "0", "--max-replica-lag", maxLag.String())
	reports := faultReports(t, 3)
	submitReports(t, s.base, reports[:20])
	waitReplayed(t, primary, standby, 30*time.Second)
	inRotation(t, s.base, standby, true, 10*time.Second)
	before := scrape(t, http.DefaultClient, s.base)
	countReports(t, http.DefaultClient, s.base)
	if d := dbQueries(scrape(t, http.DefaultClient, s.base), "replica") - dbQueries(before, "replica"); d < 1 {
		t.Errorf("a query with the standby in rotation: %v read transactions on it", d)
	}

	// replay paused, a report every 100 ms
	load := newIngestLoad(reports[20:])
	load.base.Store(s.base)
	load.pace = 100 * time.Millisecond
	standby.Exec(t, "SELECT pg_wal_replay_pause()")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wg := load.run(ctx, 1)
	took := inRotation(t, s.base, standby, false, maxLag+5*time.Second)
	t.Logf("out of rotation %v after replay paused (--max-replica-lag %v)", took.Round(time.Millisecond), maxLag)
	m := scrape(t, http.DefaultClient, s.base)
	if lag, ok := metricSum(m, "reportdb_database_replica_lag_seconds", "server", standby.HostPort()); !ok || lag < maxLag.Seconds() {
		t.Errorf("reportdb_database_replica_lag_seconds of the paused standby out of rotation: %v %v", lag, ok)
	}
	st, raw := databasesStatus(t, s.base)
	if r, ok := st.server(standby.HostPort()); !ok || r.InRotation == nil || *r.InRotation || r.LagSeconds == nil || *r.LagSeconds < maxLag.Seconds() {
		t.Errorf("reportdb-databases status with the standby out of rotation: %s", raw)
	}
	t.Logf("status out of rotation: %s", raw)
	outside := checkLogged(t, s, "out of rotation")

	// the primary answers, with every report acknowledged so far
	time.Sleep(500 * time.Millisecond) // a few more reports
	load.mu.Lock()
	acked := map[string]bool{}
	for i := range load.acked {
		acked[load.reports[i].key()] = true
	}
	load.mu.Unlock()
	before = scrape(t, http.DefaultClient, s.base)
	keys := storedKeys(t, s.base, "")
	after := scrape(t, http.DefaultClient, s.base)
	missing := 0
	for k := range acked {
		if !keys[k] {
			missing++
		}
	}
	replica, onPrimary := dbQueries(after, "replica")-dbQueries(before, "replica"), dbQueries(after, "primary")-dbQueries(before, "primary")
	if missing > 0 || len(acked) == 0 || replica != 0 || onPrimary < 1 {
		t.Errorf("a query with the standby out of rotation: %d of the %d reports acknowledged since the pause missing; read transactions on the standby %v, on the primary %v",
			missing, len(acked), replica, onPrimary)
	}

	// replay resumed (reports still coming): back in rotation
	standby.Exec(t, "SELECT pg_wal_replay_resume()")
	took = inRotation(t, s.base, standby, true, 15*time.Second)
	t.Logf("back in rotation %v after replay resumed", took.Round(time.Millisecond))
	cancel()
	wg.Wait()
	load.checkRefusals(t)
	outside = append(outside, checkLogged(t, s, "back in rotation")...)
	for _, o := range outside {
		t.Error(o)
	}
	st, raw = databasesStatus(t, s.base)
	if r, ok := st.server(standby.HostPort()); !ok || r.InRotation == nil || !*r.InRotation {
		t.Errorf("reportdb-databases status with the standby back: %s", raw)
	}
	waitReplayed(t, primary, standby, 30*time.Second)
	before = scrape(t, http.DefaultClient, s.base)
	for range 3 {
		countReports(t, http.DefaultClient, s.base)
	}
	after = scrape(t, http.DefaultClient, s.base)
	if d := dbQueries(after, "replica") - dbQueries(before, "replica"); d < 3 {
		t.Errorf("3 queries with the standby back in rotation: %v read transactions on it, %v on the primary", d, dbQueries(after, "primary")-dbQueries(before, "primary"))
	}
	load.verify(t, s.base)
	for _, l := range strings.Split(s.log.String(), "\n") {
		if strings.Contains(l, "rotation") {
			t.Log(l)
		}
	}
}

// gate is a reverse proxy in front of a reportdb that is killed and
// restarted: while none listens, a submission waits (its connection is
// retried, nothing of it sent yet) instead of failing at once, so that the
// submitters do not run through their reports during the restart; one
// whose connection breaks midway is cut (not acknowledged), as it would
// be without the proxy.
type gate struct {
	target atomic.Value // host:port of the current server
	base   string
}

func newGate(t *testing.T, target string) *gate {
	g := &gate{}
	g.target.Store(strings.TrimPrefix(target, "http://"))
	tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		for {
			c, err := (&net.Dialer{Timeout: time.Second}).DialContext(ctx, network, g.target.Load().(string))
			if err == nil || ctx.Err() != nil {
				return c, err
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(20 * time.Millisecond):
			}
		}
	}}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL.Scheme, r.Out.URL.Host = "http", "reportdb"
		},
		Transport:    tr,
		ErrorHandler: func(http.ResponseWriter, *http.Request, error) { panic(http.ErrAbortHandler) },
		ErrorLog:     log.New(io.Discard, "", 0),
	}
	srv := httptest.NewServer(rp)
	t.Cleanup(func() { srv.Close(); tr.CloseIdleConnections() })
	g.base = srv.URL
	return g
}

func (g *gate) set(base string) { g.target.Store(strings.TrimPrefix(base, "http://")) }

// renamedReports returns reports under certnames prefixed with prefix, so
// that each failover round submits reports of its own.
func renamedReports(reports []faultReport, prefix string) []faultReport {
	out := make([]faultReport, len(reports))
	for i, r := range reports {
		cn := prefix + r.exp.certname
		body := strings.Replace(string(r.body), `"certname":"`+r.exp.certname+`"`, `"certname":"`+cn+`"`, 1)
		e := r.exp
		e.certname = cn
		out[i] = faultReport{[]byte(body), e}
	}
	return out
}

// latencies returns the median, 99th percentile and maximum of the
// acknowledgements since the last call, and forgets them.
func (l *ingestLoad) latencies() (p50, p99, max time.Duration, n int) {
	l.mu.Lock()
	s := l.latency
	l.latency = nil
	l.mu.Unlock()
	if len(s) == 0 {
		return 0, 0, 0, 0
	}
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2], s[len(s)*99/100], s[len(s)-1], len(s)
}

// waitSettled waits until the number of reports stored stops changing.
func waitSettled(t *testing.T, base string) {
	t.Helper()
	last := -1
	for i := 0; i < 60; i++ {
		n := countReports(t, http.DefaultClient, base)
		if n == last {
			return
		}
		last = n
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("the number of reports stored keeps changing after the load stopped")
}

// checkRollupCounts compares counts the rollups answer with the same
// counts made by a scan (a filter on certname, which no rollup keeps), on
// every server, and checks that compaction left at most one merged row
// per bucket and dimensions in every rollup table.
func checkRollupCounts(t *testing.T, primary *pgtest.Cluster, servers ...*rserver) {
	t.Helper()
	pairs := []struct{ entity, fromRollup, fromScan string }{
		{"events", `["extract",[["function","count"],"status","resource_type"],["null?","status",false],["group_by","status","resource_type"]]`,
			`["extract",[["function","count"],"status","resource_type"],["and",["null?","status",false],["~","certname","."]],["group_by","status","resource_type"]]`},
		{"reports", `["extract",[["function","count"],"status","environment"],["null?","environment",false],["group_by","status","environment"]]`,
			`["extract",[["function","count"],"status","environment"],["and",["null?","environment",false],["~","certname","."]],["group_by","status","environment"]]`},
	}
	canonical := func(rows []map[string]any) string {
		var out []string
		for _, r := range rows {
			b, _ := json.Marshal(r)
			out = append(out, string(b))
		}
		sort.Strings(out)
		return strings.Join(out, "\n")
	}
	for _, s := range servers {
		for _, p := range pairs {
			var a, b []map[string]any
			getJSON(t, s.base+"/pdb/query/v4/"+p.entity+"?"+url.Values{"query": {p.fromRollup}}.Encode(), &a)
			getJSON(t, s.base+"/pdb/query/v4/"+p.entity+"?"+url.Values{"query": {p.fromScan}}.Encode(), &b)
			if ca, cb := canonical(a), canonical(b); ca != cb || len(a) == 0 {
				t.Errorf("%s counts on %s: from the rollups\n%s\nfrom a scan\n%s", p.entity, s.base, ca, cb)
			}
		}
	}
	// compaction runs on the new primary: the deltas written before and
	// after the failover are merged (a second after ingest stops, or at
	// the next interval)
	start := time.Now()
	for {
		unmerged, errs := 0, []string{}
		for _, rt := range schema.RollupTables {
			var n int
			if err := queryDB(primary, "SELECT count(*) FROM "+rt.Table+" WHERE NOT merged", &n); err != nil {
				errs = append(errs, fmt.Sprintf("%s: %v", rt.Table, err))
			}
			unmerged += n
		}
		if len(errs) > 0 {
			t.Fatal(strings.Join(errs, "\n"))
		}
		if unmerged == 0 {
			t.Logf("no rollup delta left unmerged (waited %v)", time.Since(start).Round(time.Millisecond))
			break
		}
		if time.Since(start) > store.DefaultCompactInterval+10*time.Second {
			t.Errorf("%d rollup delta rows still unmerged %v after the load stopped: compaction does not run after the failover", unmerged, time.Since(start).Round(time.Second))
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, rt := range schema.RollupTables {
		var dups int
		err := queryDB(primary, fmt.Sprintf("SELECT count(*) FROM (SELECT 1 FROM %s WHERE merged GROUP BY width, bucket, %s HAVING count(*) > 1) d",
			rt.Table, rt.Dims()), &dups)
		if err != nil {
			t.Errorf("%s: %v", rt.Table, err)
		} else if dups > 0 {
			t.Errorf("%s: %d buckets and dimensions have more than one merged row", rt.Table, dups)
		}
	}
}

// queryDB runs a query of one row in database reportdb of c.
func queryDB(c *pgtest.Cluster, sql string, dest ...any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, replicaDB(c))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	return conn.QueryRow(ctx, sql).Scan(dest...)
}

// TestFailoverUnderIngest: a primary with a synchronous standby, killed
// with SIGKILL under ingest by 8 submitters; the standby is promoted
// failoverDown later. reportdb's --database lists both. Every report
// acknowledged is stored exactly once with all its events; the rollups'
// counts equal a scan's. A second reportdb instance on the same databases
// ingests and compacts beside the first throughout; both survive. In
// "reportdb-killed-too", the first instance is killed with SIGKILL while
// the primary is down and restarted on its spool before the promotion.
// Each of -failovers rounds fails over to a new standby of the last
// primary.
func TestFailoverUnderIngest(t *testing.T) {
	bin := buildBinary(t)
	// 8 submitters of the first instance, each pausing 20 ms: at most 400
	// reports/s for at most ~7 s a round (2980 reports); 2 of the second
	// (745).
	base := faultReports(t, 25)
	for _, kill := range []bool{false, true} {
		name := map[bool]string{false: "reportdb-survives", true: "reportdb-killed-too"}[kill]
		t.Run(name, func(t *testing.T) {
			primary, standby := newPrimary(t)
			primary.SetSynchronous(t, true)
			dirA, dirB := t.TempDir(), t.TempDir()
			var loads []*ingestLoad
			var outside []string // lines logged outside the logger, reported at the end
			defer func() {
				for _, o := range outside {
					t.Error(o)
				}
			}()
			var a, b *rserver
			for round := 1; round <= *failovers; round++ {
				args := func(dir string) []string {
					return []string{"--listen", "127.0.0.1:0", "--data-dir", dir,
						"--database", replicaDB(primary, standby), "--read-database", replicaDB(standby),
						"--report-ttl", "0", "--node-ttl", "0"}
				}
				a, b = startRServer(t, bin, args(dirA)...), startRServer(t, bin, args(dirB)...)
				waitQueueEmpty(t, a.base, time.Minute)
				waitQueueEmpty(t, b.base, time.Minute)
				prefix := fmt.Sprintf("r%02d-", round)
				la, lb := newIngestLoad(renamedReports(base[:2980], prefix)), newIngestLoad(renamedReports(base[2980:], prefix))
				loads = append(loads, la, lb)
				la.pace, lb.pace = 20*time.Millisecond, 20*time.Millisecond
				ga := newGate(t, a.base)
				la.base.Store(ga.base)
				lb.base.Store(b.base)
				ctx, cancel := context.WithCancel(context.Background())
				t.Cleanup(cancel) // the submitters stop if the round fails midway
				wgA, wgB := la.run(ctx, failoverSubmitter), lb.run(ctx, 2)

				time.Sleep(failoverBefore)
				p50, p99, max, n := la.latencies()
				t.Logf("round %d before the failover: %d acknowledged, ack p50 %v p99 %v max %v", round, n, p50, p99, max)
				primary.Kill(t)
				killed := time.Now()
				if kill {
					time.Sleep(time.Duration(rand.Intn(int(failoverDown / 2))))
					kill9(t, a.cmd)
					a = startRServer(t, bin, args(dirA)...)
					ga.set(a.base)
					t.Logf("round %d: reportdb killed and restarted %v after the primary", round, time.Since(killed).Round(time.Millisecond))
				}
				time.Sleep(failoverDown - time.Since(killed))
				// with the primary down, the standby answers queries (an
				// instance started meanwhile answers 503 until a primary
				// does)
				for _, s := range map[bool][]*rserver{false: {a, b}, true: {b}}[kill] {
					if code, _, body := get(t, s.base+"/pdb/query/v4/reports?"+url.Values{"query": {`["extract",[["function","count"]]]`}}.Encode()); code != 200 {
						t.Errorf("round %d: a query with the primary down: %d %s", round, code, body)
					}
				}
				standby.Promote(t)
				t.Logf("round %d: primary %s killed, standby %s promoted %v later", round, primary.HostPort(), standby.HostPort(), time.Since(killed).Round(time.Millisecond))
				time.Sleep(failoverAfter)
				cancel()
				wgA.Wait()
				wgB.Wait()
				p50, p99, max, n = la.latencies()
				t.Logf("round %d from the kill on (%v): %d acknowledged, ack p50 %v p99 %v max %v", round, time.Since(killed).Round(time.Millisecond), n, p50, p99, max)
				if n == 0 {
					t.Errorf("round %d: nothing acknowledged from the kill on", round)
				}
				la.checkRefusals(t)
				lb.checkRefusals(t)
				waitQueueEmpty(t, a.base, 2*time.Minute)
				waitQueueEmpty(t, b.base, 2*time.Minute)
				for _, s := range []*rserver{a, b} {
					if !s.alive() {
						t.Fatalf("round %d: a reportdb instance exited:\n%s", round, s.log)
					}
					waitMetrics(t, s.base, 15*time.Second, fmt.Sprintf("reportdb_database_primary{server=%q} 1", standby.HostPort()),
						func(m map[string]float64) bool {
							v, ok := metricSum(m, "reportdb_database_primary", "server", standby.HostPort())
							old, _ := metricSum(m, "reportdb_database_primary", "server", primary.HostPort())
							return ok && v == 1 && old == 0
						})
				}
				// the instances that ran through the failover say so (a
				// restarted one may never have known the old primary)
				for _, s := range map[bool][]*rserver{false: {a, b}, true: {b}}[kill] {
					outside = append(outside, checkLogged(t, s, "primary is now")...)
				}
				for _, s := range []*rserver{a, b} {
					for _, l := range strings.Split(s.log.String(), "\n") {
						if strings.Contains(l, "primary is now") || strings.Contains(l, "rotation") {
							t.Logf("%s: %s", s.base, l)
						}
					}
				}
				// submissions cut by the end of the load may still be
				// committing (unacknowledged: stored or not)
				waitSettled(t, a.base)
				la.verify(t, a.base)
				lb.verify(t, b.base)
				checkRollupCounts(t, standby, a, b)
				if t.Failed() {
					for _, s := range []*rserver{a, b} {
						var problems []string
						for _, l := range strings.Split(s.log.String(), "\n") {
							if strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR") || strings.Contains(l, "primary is now") || strings.Contains(l, "rotation") {
								problems = append(problems, l[:min(len(l), 400)])
							}
						}
						t.Logf("log of %s, warnings, errors and role changes (%d):\n%s", s.base, len(problems), strings.Join(problems[:min(len(problems), 60)], "\n"))
					}
					t.FailNow()
				}

				// the next round fails over to a new standby of the new primary
				a.stop(t)
				b.stop(t)
				primary, standby = standby, standby.Standby(t)
				primary.SetSynchronous(t, true)
			}
			if len(loads) > 2 {
				s := startRServer(t, bin, "--listen", "127.0.0.1:0", "--data-dir", dirA, "--database", replicaDB(primary), "--report-ttl", "0", "--node-ttl", "0")
				for _, l := range loads {
					l.verify(t, s.base)
				}
			}
		})
	}
}
