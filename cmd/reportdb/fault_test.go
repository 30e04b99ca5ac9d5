package main

// The fault suite: the real binary under sustained ingest, killed with
// SIGKILL at random moments, and PostgreSQL (a throwaway cluster this test
// starts itself) stopped mid-ingest. Afterwards every acknowledged report
// must be stored exactly once with all its events.
//
// Short by default (CI); the long run:
//
//	go test ./cmd/reportdb -run Fault -faults=50 -fault-outage=60s -fault-submitters=8 -timeout 60m -v

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"reportdb/internal/benchfleet"
	"reportdb/internal/pgtest"
	"reportdb/jsonv"
	"reportdb/wire"
)

var (
	faultKills      = flag.Int("faults", envInt("REPORTDB_FAULTS", 3), "SIGKILLs of the server in the fault suite (env REPORTDB_FAULTS)")
	faultOutage     = flag.Duration("fault-outage", 3*time.Second, "how long PostgreSQL stays stopped in the fault suite")
	faultSubmitters = flag.Int("fault-submitters", 4, "concurrent submitters in the fault suite")
)

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return n
	}
	return def
}

// expected is what an acknowledged report must look like once stored.
type expected struct {
	certname, producerTimestamp string
	events                      int
}

type faultReport struct {
	body []byte
	exp  expected
}

func faultReports(t *testing.T, copies int) []faultReport {
	t.Helper()
	var out []faultReport
	for _, r := range benchfleet.Wire8(t, copies) {
		v, err := jsonv.Parse(r.Body)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := wire.Decode(8, v, 0) // the events the server derives (skipped resources get one)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			ProducerTimestamp string `json:"producer_timestamp"`
		}
		json.Unmarshal(r.Body, &doc)
		n := len(rep.Events)
		out = append(out, faultReport{r.Body, expected{rep.Certname, doc.ProducerTimestamp, n}})
	}
	return out
}

// ingestLoad submits reports from a shared list until stopped, recording
// which were acknowledged (200).
type ingestLoad struct {
	reports   []faultReport
	next      atomic.Int64
	base      atomic.Value // string
	mu        sync.Mutex
	acked     map[int]bool
	refused   map[int]string // index -> status and message of a non-200 answer
	latency   []time.Duration
	acks      int
	exhausted atomic.Bool   // every report was sent (make more copies)
	pace      time.Duration // pause of each submitter between submissions
}

func newIngestLoad(reports []faultReport) *ingestLoad {
	return &ingestLoad{reports: reports, acked: map[int]bool{}, refused: map[int]string{}}
}

// run submits with n goroutines until ctx ends.
func (l *ingestLoad) run(ctx context.Context, n int) *sync.WaitGroup {
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 60 * time.Second}
	for g := 0; g < n; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				// each report is sent once: a re-send could hide the loss
				// of its first acknowledgement
				i := int(l.next.Add(1) - 1)
				if i >= len(l.reports) {
					l.exhausted.Store(true)
					return
				}
				r := l.reports[i]
				q := url.Values{"command": {"store_report"}, "version": {"8"}, "certname": {r.exp.certname}}
				req, _ := http.NewRequestWithContext(ctx, "POST", l.base.Load().(string)+"/pdb/cmd/v1?"+q.Encode(), bytes.NewReader(r.body))
				req.Header.Set("Content-Type", "application/json")
				start := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					continue // not acknowledged (server killed): may or may not be stored
				}
				msg, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				d := time.Since(start)
				if l.pace > 0 {
					time.Sleep(l.pace)
				}
				l.mu.Lock()
				if resp.StatusCode == 200 {
					l.acked[i] = true
					l.acks++
					l.latency = append(l.latency, d)
				} else {
					l.refused[i] = fmt.Sprintf("%d %s", resp.StatusCode, msg)
				}
				l.mu.Unlock()
			}
		}()
	}
	return &wg
}

func (l *ingestLoad) checkRefusals(t *testing.T) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, m := range l.refused {
		t.Errorf("submission %d (%s) refused: %s", i, l.reports[i].exp.certname, m)
	}
}

func (l *ingestLoad) p99() (time.Duration, time.Duration, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.latency) == 0 {
		return 0, 0, 0
	}
	s := append([]time.Duration(nil), l.latency...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2], s[len(s)*99/100], len(s)
}

// verify checks that every acknowledged report is stored exactly once with
// all its events, and no report is stored twice.
func (l *ingestLoad) verify(t *testing.T, base string) {
	t.Helper()
	type stored struct {
		Hash              string `json:"hash"`
		Certname          string `json:"certname"`
		ProducerTimestamp string `json:"producer_timestamp"`
		ResourceEvents    struct {
			Data []json.RawMessage `json:"data"`
		} `json:"resource_events"`
	}
	var reports []stored
	getJSON(t, base+"/pdb/query/v4/reports?"+url.Values{"query": {`["extract",["hash","certname","producer_timestamp","resource_events"]]`}}.Encode(), &reports)
	events := map[string]int{}
	for _, r := range reports {
		events[r.Hash] = len(r.ResourceEvents.Data)
	}
	byKey := map[string][]stored{}
	for _, r := range reports {
		ts, err := time.Parse(time.RFC3339Nano, r.ProducerTimestamp)
		if err != nil {
			t.Fatal(err)
		}
		k := r.Certname + "|" + ts.UTC().Format(time.RFC3339Nano)
		byKey[k] = append(byKey[k], r)
	}
	for k, rs := range byKey {
		if len(rs) > 1 {
			t.Errorf("report %s stored %d times", k, len(rs))
		}
	}
	if l.exhausted.Load() {
		t.Errorf("the load ran out of distinct reports: the phases were not under sustained ingest to the end")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	lost := 0
	for i := range l.acked {
		e := l.reports[i].exp
		ts, _ := time.Parse(time.RFC3339Nano, e.producerTimestamp)
		k := e.certname + "|" + ts.UTC().Truncate(time.Millisecond).Format(time.RFC3339Nano)
		rs := byKey[k]
		if len(rs) == 0 {
			lost++
			if lost <= 10 {
				t.Errorf("acknowledged report %s lost", k)
			}
			continue
		}
		if got := events[rs[0].Hash]; got != e.events {
			t.Errorf("acknowledged report %s has %d events, submitted %d", k, got, e.events)
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d acknowledged reports lost", lost, len(l.acked))
	}
	t.Logf("verified: %d acknowledged, %d stored (unacknowledged ones may be stored too), none twice", len(l.acked), len(reports))
}

func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", u, resp.StatusCode, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
}

func kill9(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
}

// waitQueueEmpty waits until the server's queue_depth is 0.
func waitQueueEmpty(t *testing.T, base string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		var st struct {
			Status struct {
				QueueDepth int `json:"queue_depth"`
			} `json:"status"`
			State string `json:"state"`
		}
		resp, err := http.Get(base + "/status/v1/services/puppetdb-status")
		if err == nil {
			json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
			if st.State == "running" && st.Status.QueueDepth == 0 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue not drained after %v (state %q, queue_depth %d)", within, st.State, st.Status.QueueDepth)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestFaultKill9 kills the server with SIGKILL at random moments of
// sustained ingest on the embedded store (-faults times) and restarts it.
func TestFaultKill9(t *testing.T) {
	bin := buildBinary(t)
	dataDir := t.TempDir()
	// Each submitter pauses 10 ms between submissions: at most ~400
	// reports/s with 4 submitters, so that a phase (at most 1.5 s) never
	// runs out of distinct reports on a fast machine (149 per copy; a
	// sustained load is what the kills must hit).
	load := newIngestLoad(faultReports(t, 4+*faultKills*(*faultSubmitters+1)))
	load.pace = 10 * time.Millisecond
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	for i := 0; i < *faultKills; i++ {
		cmd, base := startServer(t, bin, dataDir)
		load.base.Store(base)
		ctx, cancel := context.WithCancel(context.Background())
		wg := load.run(ctx, *faultSubmitters)
		time.Sleep(time.Duration(200+rng.Intn(1300)) * time.Millisecond)
		kill9(t, cmd)
		cancel()
		wg.Wait()
	}
	_, base := startServer(t, bin, dataDir)
	load.verify(t, base)
	if len(load.acked) == 0 {
		t.Fatal("nothing was acknowledged: the test proves nothing")
	}
}

// scratchPG is a throwaway PostgreSQL cluster the test starts (and may
// stop) itself, never the shared one.
type scratchPG struct{ c *pgtest.Cluster }

func startScratchPG(t *testing.T) *scratchPG { return &scratchPG{pgtest.NewCluster(t)} }

func (pg *scratchPG) start(t *testing.T) { pg.c.Start(t) }

// stop stops the cluster (fast: connections are cut, as in a failover).
func (pg *scratchPG) stop(t *testing.T) { pg.c.Stop(t) }

func (pg *scratchPG) url() string { return pg.c.URL() }

// TestFaultPostgresOutage: PostgreSQL stopped in the middle of sustained
// ingest; every submission is acknowledged (spooled), and after PostgreSQL
// is back every acknowledged report is stored exactly once. Then the
// server is killed with SIGKILL while PostgreSQL is down, restarted while
// it is still down (it must start and spool), and PostgreSQL comes back.
func TestFaultPostgresOutage(t *testing.T) {
	pg := startScratchPG(t)
	bin := buildBinary(t)
	dataDir := t.TempDir()
	load := newIngestLoad(faultReports(t, 8+int(faultOutage.Seconds())*(*faultSubmitters)/2))
	load.pace = 20 * time.Millisecond // at most 50 reports/s per submitter: sustained, and enough reports for every phase
	args := []string{"--listen", "127.0.0.1:0", "--data-dir", dataDir, "--database", pg.url(), "--report-ttl", "0"}

	// 0. first start with PostgreSQL down (the database never migrated):
	// it starts, spools, and migrates and delivers once PostgreSQL is up
	pg.stop(t)
	cmd, addr, _, logs := startBinary(t, bin, false, args...)
	base := "http://" + addr
	load.base.Store(base)
	ctx, cancel := context.WithCancel(context.Background())
	wg := load.run(ctx, *faultSubmitters)
	time.Sleep(time.Second)
	cancel()
	wg.Wait()
	load.checkRefusals(t)
	if load.acks == 0 {
		t.Fatal("nothing acknowledged by the server started without PostgreSQL")
	}
	pg.start(t)
	waitQueueEmpty(t, base, 2*time.Minute)
	load.verify(t, base)

	// 1. outage during sustained ingest
	ctx, cancel = context.WithCancel(context.Background())
	wg = load.run(ctx, *faultSubmitters)
	time.Sleep(time.Second)
	pg.stop(t)
	t.Logf("PostgreSQL stopped for %v", *faultOutage)
	time.Sleep(*faultOutage)
	pg.start(t)
	time.Sleep(500 * time.Millisecond)
	cancel()
	wg.Wait()
	load.checkRefusals(t)
	if !strings.Contains(logs.String(), "spooling them") {
		t.Errorf("the outage did not make the server spool:\n%s", logs)
	}
	p50, p99, n := load.p99()
	t.Logf("outage phase: %d acknowledged, ack latency p50 %v p99 %v", n, p50, p99)
	waitQueueEmpty(t, base, 2*time.Minute)
	load.verify(t, base)

	// 2. PostgreSQL down, server killed with SIGKILL and restarted while
	// it is still down: it starts and spools
	pg.stop(t)
	ctx, cancel = context.WithCancel(context.Background())
	wg = load.run(ctx, *faultSubmitters)
	time.Sleep(time.Second)
	kill9(t, cmd)
	cancel()
	wg.Wait()
	before := load.acks
	cmd, addr, _, logs = startBinary(t, bin, false, args...)
	base = "http://" + addr
	load.base.Store(base)
	if !strings.Contains(logs.String(), "PostgreSQL is unavailable; starting without it") {
		t.Errorf("start-up with PostgreSQL down did not say so:\n%s", logs)
	}
	resp, err := http.Get(base + "/pdb/query/v4/reports")
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || !strings.Contains(string(msg), "database is unavailable") || resp.Header.Get("Retry-After") == "" {
		t.Errorf("query with PostgreSQL down: %d %q", resp.StatusCode, msg)
	}
	ctx, cancel = context.WithCancel(context.Background())
	wg = load.run(ctx, *faultSubmitters)
	time.Sleep(time.Second)
	cancel()
	wg.Wait()
	load.checkRefusals(t)
	if load.acks <= before {
		t.Errorf("the server restarted with PostgreSQL down acknowledged nothing")
	}
	pg.start(t)
	waitQueueEmpty(t, base, 2*time.Minute)
	load.verify(t, base)
	_ = cmd
}
