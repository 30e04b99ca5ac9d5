package main

// The hostile HTTP suite: the real binary on each backend under a crowd of
// mutated queries and reports (sizes, nesting, clause counts, literal
// ranges, encodings, YAML aliases, compression bombs), with probes of a
// cheap query and of report acknowledgements beside them. It asserts that
// no request is answered 500 (a 503 must say why: busy, out of budget or
// past the query timeout), that no request outlives its bound, that the
// server's RSS stays under a bound, that every report acknowledged with 200
// is stored, and that the reports stored before the run are intact.
//
// Short by default (CI); the long run, with the probes' latencies logged:
//
//	go test ./cmd/reportdb -run Hostile -hostile=10m -v -timeout 60m

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"reportdb/internal/pgtest"
	"reportdb/internal/testcorpus"
)

var (
	hostileFor     = flag.Duration("hostile", 15*time.Second, "how long the hostile HTTP suite runs on each backend")
	hostileWorkers = flag.Int("hostile-workers", 6, "concurrent hostile clients")
	hostileRSS     = flag.Int64("hostile-rss-mb", 400, "largest RSS (MB) the server may reach under the hostile suite")
	hostileLoad    = flag.Int("hostile-load", 0, "reports (copies of the corpus under other certnames) stored before the hostile run, so that heavy queries have data to read")
	hostileOnly    = flag.String("hostile-only", "", "run only the hostile generators whose names contain one of these, comma-separated (\"query:\", \"body:\", \"gzip\", ...)")
)

// hostileQueryTimeout is the servers' --query-timeout; a request must be
// answered within it plus hostileSlack (queueing, body reading, a commit).
const (
	hostileQueryTimeout = 5 * time.Second
	hostileSlack        = 15 * time.Second
)

func TestHostileHTTP(t *testing.T) {
	bin := buildBinary(t)
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			args := []string{"--listen", "127.0.0.1:0", "--data-dir", t.TempDir(), "--report-ttl", "0",
				"--query-timeout", hostileQueryTimeout.String()}
			if kind == "postgres" {
				args = append(args, "--database", pgtest.NewDatabase(t))
			}
			cmd, addr, _, log := startBinary(t, bin, false, args...)
			h := newHostile(t, "http://"+addr)
			h.loadSeeds(t)
			before := h.snapshot(t)

			rss := watchRSS(cmd.Process.Pid)
			ctx, cancel := context.WithTimeout(context.Background(), *hostileFor)
			var wg sync.WaitGroup
			for i := 0; i < *hostileWorkers; i++ {
				wg.Add(1)
				go func(seed int64) {
					defer wg.Done()
					h.worker(ctx, rand.New(rand.NewSource(seed)))
				}(time.Now().UnixNano() + int64(i))
			}
			wg.Add(2)
			go func() { defer wg.Done(); h.probe(ctx, "cheap query", h.cheapQuery) }()
			go func() { defer wg.Done(); h.probe(ctx, "acknowledgement", h.acknowledge) }()
			wg.Wait()
			cancel()
			peak := rss.stop()

			h.report(t)
			t.Logf("peak RSS %d MB (bound %d MB)", peak>>20, *hostileRSS)
			if peak > *hostileRSS<<20 {
				t.Errorf("the server's RSS reached %d MB (bound %d MB)", peak>>20, *hostileRSS)
			}
			after := h.snapshot(t)
			for hash, events := range before {
				if got, ok := after[hash]; !ok || got != events {
					t.Errorf("report %s stored before the run: %d events, now present %v with %d", hash, events, ok, got)
				}
			}
			h.verifyAcknowledged(t)
			if t.Failed() {
				var problems []string
				for _, l := range strings.Split(log.String(), "\n") {
					if strings.Contains(l, "level=WARN") && !strings.Contains(l, "slow query") || strings.Contains(l, "level=ERROR") {
						problems = append(problems, l[:min(len(l), 400)])
					}
				}
				t.Logf("server log, warnings and errors (%d):\n%s", len(problems), strings.Join(problems[:min(len(problems), 40)], "\n"))
			}
		})
	}
}

type hostile struct {
	base    string
	client  *http.Client
	reports [][]byte // wire v8 corpus reports
	yaml    []byte   // a Puppet YAML report
	seq     atomic.Int64

	mu       sync.Mutex
	statuses map[string]map[int]int // generator -> status -> count
	failures []string
	acked    map[string]bool // certnames whose report was acknowledged
	latency  map[string][]time.Duration
}

func newHostile(t *testing.T, base string) *hostile {
	m, dir := testcorpus.LoadManifest(t)
	h := &hostile{base: base, client: &http.Client{Timeout: hostileQueryTimeout + hostileSlack},
		statuses: map[string]map[int]int{}, acked: map[string]bool{}, latency: map[string][]time.Duration{}}
	for _, s := range m.Submissions[:40] {
		h.reports = append(h.reports, testcorpus.ReadFile(t, filepath.Join(dir, s.Wire8)))
	}
	ys, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "puppet7", "yaml", "*.yaml"))
	if len(ys) == 0 {
		t.Fatal("no YAML report of Puppet's http processor in testdata/puppet7/yaml")
	}
	y, err := os.ReadFile(ys[0])
	if err != nil {
		t.Fatal(err)
	}
	h.yaml = y
	return h
}

func (h *hostile) loadSeeds(t *testing.T) {
	for i, body := range h.reports {
		var doc map[string]any
		json.Unmarshal(body, &doc)
		code, msg, err := submit(h.client, h.base, body, doc["certname"].(string))
		if err != nil || code != 200 {
			t.Fatalf("seed report %d: %d %.200q %v", i, code, msg, err)
		}
	}
	// the bulk, under certnames of their own (not checked as acknowledged:
	// the snapshot taken after it covers them)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := next.Add(1); n <= int64(*hostileLoad); n = next.Add(1) {
				cn := fmt.Sprintf("bulk-%d.example.com", n%1000)
				body := renamed(h.reports[int(n)%len(h.reports)], cn, -n)
				if code, msg, err := submit(h.client, h.base, body, cn); err != nil || code != 200 {
					t.Errorf("bulk report %d: %d %.200q %v", n, code, msg, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// snapshot maps each stored report's hash to its number of events.
func (h *hostile) snapshot(t *testing.T) map[string]int {
	q := `["extract",[["function","count"],"report"],["~","certname",""],["group_by","report"]]`
	var rows []struct {
		Report string
		Count  int
	}
	getJSON(t, h.base+"/pdb/query/v4/events?"+url.Values{"query": {q}}.Encode(), &rows)
	var reports []struct{ Hash string }
	getJSON(t, h.base+"/pdb/query/v4/reports?"+url.Values{"query": {`["extract",["hash"]]`}}.Encode(), &reports)
	m := map[string]int{}
	for _, r := range reports {
		m[r.Hash] = 0
	}
	for _, r := range rows {
		m[r.Report] = r.Count
	}
	return m
}

// request is one hostile request and the generator that made it.
type request struct {
	gen                 string
	method, target, ct  string
	encoding            string
	body                []byte
	certname            string // set on a submission that must be stored if acknowledged
	headers             map[string]string
	skipAcknowledgement bool
}

func (h *hostile) worker(ctx context.Context, rng *rand.Rand) {
	gens := slices.DeleteFunc(h.generators(), func(g generator) bool {
		return !slices.ContainsFunc(strings.Split(*hostileOnly, ","), func(s string) bool { return strings.Contains(g.name, s) })
	})
	for ctx.Err() == nil && len(gens) > 0 {
		g := gens[rng.Intn(len(gens))]
		req := g.make(h, rng)
		req.gen = g.name
		h.do(req)
	}
}

func (h *hostile) do(r request) (int, time.Duration) {
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequest(r.method, h.base+r.target, body)
	if err != nil {
		h.fail("%s: building the request: %v", r.gen, err)
		return 0, 0
	}
	if r.ct != "" {
		req.Header.Set("Content-Type", r.ct)
	}
	if r.encoding != "" {
		req.Header.Set("Content-Encoding", r.encoding)
	}
	for k, v := range r.headers {
		req.Header.Set(k, v)
	}
	start := time.Now()
	resp, err := h.client.Do(req)
	d := time.Since(start)
	if err != nil {
		h.fail("%s %s %.120s: no answer within %v: %v", r.gen, r.method, r.target, h.client.Timeout, err)
		return 0, d
	}
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	h.mu.Lock()
	if h.statuses[r.gen] == nil {
		h.statuses[r.gen] = map[int]int{}
	}
	h.statuses[r.gen][resp.StatusCode]++
	if resp.StatusCode == 200 && r.certname != "" && !r.skipAcknowledgement {
		h.acked[r.certname] = true
	}
	h.mu.Unlock()
	switch {
	case resp.StatusCode == 503:
		if resp.Header.Get("Retry-After") == "" && !strings.Contains(string(msg), "query timeout") {
			h.fail("%s: 503 without Retry-After or a timeout: %.200q", r.gen, msg)
		}
	case resp.StatusCode >= 500:
		h.fail("%s %s %.200s: %d %.300q", r.gen, r.method, r.target, resp.StatusCode, msg)
	}
	return resp.StatusCode, d
}

func (h *hostile) fail(format string, args ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.failures) < 50 {
		h.failures = append(h.failures, fmt.Sprintf(format, args...))
	}
}

// probe runs f every 100 ms beside the load and keeps its latencies.
func (h *hostile) probe(ctx context.Context, name string, f func() request) {
	for ctx.Err() == nil {
		r := f()
		r.gen = name
		code, d := h.do(r)
		h.mu.Lock()
		if code == 200 {
			h.latency[name] = append(h.latency[name], d)
		}
		h.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (h *hostile) cheapQuery() request {
	return request{method: "GET", target: "/pdb/query/v4/nodes?" + url.Values{"query": {`["=","certname","web01.prod.example.com"]`}}.Encode()}
}

func (h *hostile) acknowledge() request {
	n := h.seq.Add(1)
	cn := fmt.Sprintf("probe-%d.example.com", n)
	body := renamed(h.reports[int(n)%len(h.reports)], cn, n)
	return request{method: "POST", target: "/pdb/cmd/v1?command=store_report&version=8&certname=" + cn, ct: "application/json", body: body, certname: cn}
}

// renamed is a corpus report under another certname and a distinct
// producer_timestamp (so that it is a new report).
func renamed(body []byte, certname string, n int64) []byte {
	var doc map[string]any
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	d.Decode(&doc)
	doc["certname"] = certname
	doc["producer_timestamp"] = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(n) * time.Second).Format("2006-01-02T15:04:05.000Z")
	b, _ := json.Marshal(doc)
	return b
}

func (h *hostile) report(t *testing.T) {
	h.mu.Lock()
	defer h.mu.Unlock()
	gens := make([]string, 0, len(h.statuses))
	for g := range h.statuses {
		gens = append(gens, g)
	}
	slices.Sort(gens)
	total := 0
	for _, g := range gens {
		var parts []string
		for code, n := range h.statuses[g] {
			parts = append(parts, fmt.Sprintf("%d×%d", code, n))
			total += n
		}
		slices.Sort(parts)
		t.Logf("%-24s %s", g, strings.Join(parts, " "))
	}
	t.Logf("%d requests in %v", total, *hostileFor)
	for name, ds := range h.latency {
		slices.Sort(ds)
		if len(ds) > 0 {
			t.Logf("%s: %d answered 200, p50 %v, p99 %v, max %v", name, len(ds), ds[len(ds)/2], ds[len(ds)*99/100], ds[len(ds)-1])
		}
	}
	if len(h.latency["acknowledgement"]) == 0 {
		t.Errorf("no report was acknowledged beside the hostile load")
	}
	for _, f := range h.failures {
		t.Error(f)
	}
}

func (h *hostile) verifyAcknowledged(t *testing.T) {
	var rows []struct{ Certname string }
	getJSON(t, h.base+"/pdb/query/v4/reports?"+url.Values{"query": {`["extract",["certname"]]`}}.Encode(), &rows)
	stored := map[string]bool{}
	for _, r := range rows {
		stored[r.Certname] = true
	}
	lost := 0
	for cn := range h.acked {
		if !stored[cn] {
			lost++
			if lost <= 10 {
				t.Errorf("report of %s was acknowledged with 200 and is not stored", cn)
			}
		}
	}
	t.Logf("%d acknowledged reports, %d lost", len(h.acked), lost)
}

// rssWatch samples a process's resident set.
type rssWatch struct {
	stopc chan struct{}
	peak  atomic.Int64
	done  chan struct{}
}

func watchRSS(pid int) *rssWatch {
	w := &rssWatch{stopc: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			if kb := statusKB(pid, "VmRSS:"); kb*1024 > w.peak.Load() {
				w.peak.Store(kb * 1024)
			}
			select {
			case <-w.stopc:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	return w
}

// stop returns the peak RSS in bytes: the sampled one, or the kernel's
// high-water mark (VmHWM), which sees what sampling misses.
func (w *rssWatch) stop() int64 { close(w.stopc); <-w.done; return w.peak.Load() }

func statusKB(pid int, field string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// generator makes one kind of hostile request.
type generator struct {
	name string
	make func(h *hostile, rng *rand.Rand) request
}

var queryEndpoints = []string{"/pdb/query/v4/events", "/pdb/query/v4/reports", "/pdb/query/v4/nodes", "/pdb/query/v4/environments",
	"/pdb/query/v4/event-counts?summarize_by=resource", "/pdb/query/v4/aggregate-event-counts?summarize_by=containing_class,certname",
	"/v3/events", "/pdb/query/v4/events?distinct_resources=true&distinct_start_time=2000-01-01T00:00:00Z&distinct_end_time=2100-01-01T00:00:00Z"}

// postQuery sends query (a JSON value) to a random endpoint with POST,
// with random paging.
func postQuery(rng *rand.Rand, q any, paging bool) request {
	ep := queryEndpoints[rng.Intn(len(queryEndpoints))]
	body := map[string]any{"query": q}
	if paging {
		opts := []func(){
			func() { body["limit"] = []any{2147483648, -1, 0, "x", 1e300, 10}[rng.Intn(6)] },
			func() { body["offset"] = []any{9223372036854775807, -5, "1", 3}[rng.Intn(4)] },
			func() { body["include_total"] = []any{true, "yes", 1}[rng.Intn(3)] },
			func() {
				body["order_by"] = []any{`[{"field":"certname","order":"desc"}]`, `[{"field":"nope"}]`, `{"field":`, []any{1, 2}}[rng.Intn(4)]
			},
		}
		opts[rng.Intn(len(opts))]()
	}
	b, _ := json.Marshal(body)
	return request{method: "POST", target: ep, ct: "application/json", body: b}
}

func clauses(n int, f func(i int) any) []any {
	c := make([]any, n)
	for i := range c {
		c[i] = f(i)
	}
	return c
}

func (h *hostile) generators() []generator {
	sizes := []int{2, 50, 500, 1000, 3000, 20000}
	return []generator{
		{"query: long or/and", func(h *hostile, rng *rand.Rand) request {
			op := []string{"or", "and"}[rng.Intn(2)]
			n := sizes[rng.Intn(len(sizes))]
			return postQuery(rng, append([]any{op}, clauses(n, func(i int) any { return []any{"=", "certname", fmt.Sprintf("n%d", i)} })...), rng.Intn(3) == 0)
		}},
		{"query: regex or", func(h *hostile, rng *rand.Rand) request {
			n := sizes[rng.Intn(len(sizes))]
			return postQuery(rng, append([]any{"or"}, clauses(n, func(i int) any { return []any{"~", "resource_title", fmt.Sprintf("(a|b)*%d.*x$", i)} })...), false)
		}},
		{"query: long in", func(h *hostile, rng *rand.Rand) request {
			n := []int{10, 1000, 10000, 100000, 400000}[rng.Intn(5)]
			return postQuery(rng, []any{"in", "certname", []any{"array", clauses(n, func(i int) any { return fmt.Sprintf("host%d.example.com", i) })}}, rng.Intn(2) == 0)
		}},
		{"query: deep not", func(h *hostile, rng *rand.Rand) request {
			var q any = []any{"=", "certname", "a"}
			for range []int{10, 400, 600, 5000}[rng.Intn(4)] {
				q = []any{"not", q}
			}
			return postQuery(rng, q, false)
		}},
		{"query: integer ranges", func(h *hostile, rng *rand.Rand) request {
			lits := []json.RawMessage{[]byte("2147483648"), []byte("-2147483649"), []byte("99999999999999999999999"), []byte("1e300"), []byte("-0"), []byte("9223372036854775808")}
			lit := lits[rng.Intn(len(lits))]
			field := []string{"line", "line", "run_duration", "report_format", "timestamp"}[rng.Intn(5)]
			var q any = []any{[]string{">", "<", "=", ">=", "<="}[rng.Intn(5)], field, lit}
			if rng.Intn(3) == 0 {
				q = []any{"in", field, []any{"array", []any{lit, 1}}}
			}
			return postQuery(rng, q, false)
		}},
		{"query: PQL", func(h *hostile, rng *rand.Rand) request {
			pqls := []string{"events{line > 99999999999999999999999}", "reports{}", "", " ", "nodes{" + strings.Repeat("(", 3000) + "certname='a'" + strings.Repeat(")", 3000) + "}",
				"events{" + strings.Repeat("certname = 'a' or ", 2000) + "certname = 'b'}", "reports[certname]{ limit 2147483648 }", "events{resource_title ~ 'a\x00b'}",
				"reports{certname in ['" + strings.Repeat("a', '", 5000) + "b']}", "nodes[count()]{group by certname}"}
			q := pqls[rng.Intn(len(pqls))]
			if rng.Intn(3) == 0 {
				q = mutateString(rng, q)
			}
			b, _ := json.Marshal(map[string]any{"query": q})
			return request{method: "POST", target: "/pdb/query/v4", ct: "application/json", body: b}
		}},
		{"query: regex", func(h *hostile, rng *rand.Rand) request {
			pats := []string{"a\x00zzzz", strings.Repeat("T", 100000), "(a*)*b", "(x+x+)+y", "a{1000}{1000}", "[", "(?<name>x)", "\\", strings.Repeat("(", 500) + strings.Repeat(")", 500), "(?i)" + strings.Repeat(".*", 2000)}
			field := []string{"resource_title", "certname", "message", "property", "file"}[rng.Intn(5)]
			return postQuery(rng, []any{"~", field, pats[rng.Intn(len(pats))]}, rng.Intn(2) == 0)
		}},
		{"query: GET garbage", func(h *hostile, rng *rand.Rand) request {
			q := mutateString(rng, `["and",["=","certname","web01.prod.example.com"],["<","line",10],["~","resource_title","a"]]`)
			params := url.Values{"query": {q}}
			for _, p := range []string{"limit", "offset", "order_by", "include_total", "summarize_by", "counts_filter", "count_by", "distinct_resources"} {
				if rng.Intn(4) == 0 {
					params.Set(p, mutateString(rng, []string{"10", `[{"field":"certname"}]`, "true", "resource", `["=","failures",1]`, "certname"}[rng.Intn(6)]))
				}
			}
			ep := strings.SplitN(queryEndpoints[rng.Intn(len(queryEndpoints))], "?", 2)[0]
			return request{method: "GET", target: ep + "?" + params.Encode()}
		}},
		{"body: report mutated", func(h *hostile, rng *rand.Rand) request {
			n := h.seq.Add(1)
			cn := fmt.Sprintf("fuzz-%d.example.com", n)
			body := mutateReport(rng, renamed(h.reports[rng.Intn(len(h.reports))], cn, n))
			r := request{method: "POST", target: "/pdb/cmd/v1?command=store_report&version=8&certname=" + cn, ct: "application/json", body: body, certname: cn}
			if rng.Intn(4) == 0 {
				r.body, r.encoding = gzipBytes(body), "gzip"
			}
			return r
		}},
		{"body: report bytes", func(h *hostile, rng *rand.Rand) request {
			n := h.seq.Add(1)
			cn := fmt.Sprintf("bytes-%d.example.com", n)
			body := []byte(mutateString(rng, string(renamed(h.reports[rng.Intn(len(h.reports))], cn, n))))
			// a byte flip may change the certname: what is stored is not known
			return request{method: "POST", target: "/pdb/cmd/v1?command=store_report&version=8&certname=" + cn, ct: "application/json", body: body}
		}},
		{"body: gzip", func(h *hostile, rng *rand.Rand) request {
			r := request{method: "POST", target: "/pdb/cmd/v1?command=store_report&version=8&certname=gz", ct: "application/json", encoding: "gzip"}
			switch rng.Intn(4) {
			case 0: // inflates to 1 GiB
				r.body = bombBytes()
			case 1: // truncated
				b := gzipBytes(h.reports[0])
				r.body = b[:rng.Intn(len(b))]
			case 2: // not gzip
				r.body = h.reports[0]
			default: // announced smaller than it is
				r.body = bombBytes()
				r.headers = map[string]string{"X-Uncompressed-Length": "1000"}
			}
			if rng.Intn(3) == 0 { // the same on a query
				r.target = "/pdb/query/v4/nodes"
			}
			return r
		}},
		{"body: YAML", func(h *hostile, rng *rand.Rand) request {
			r := request{method: "POST", target: "/reports/upload", ct: "application/x-yaml"}
			switch rng.Intn(4) {
			case 0:
				r.body = yamlAliasReport(h.yaml, 1<<20, 250)
			case 1:
				r.body = yamlTinyItems(rng.Intn(2_000_000))
			case 2:
				r.body = []byte("--- " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000))
			default:
				r.body = []byte(mutateString(rng, string(h.yaml)))
			}
			return r
		}},
	}
}

var (
	bombOnce sync.Once
	bomb     []byte
)

// bombBytes is 1 GiB of zeros gzipped (about 1 MB).
func bombBytes() []byte {
	bombOnce.Do(func() {
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		zero := make([]byte, 1<<20)
		for range 1024 {
			zw.Write(zero)
		}
		zw.Close()
		bomb = b.Bytes()
	})
	return bomb
}

func gzipBytes(b []byte) []byte {
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	zw.Write(b)
	zw.Close()
	return out.Bytes()
}

// mutateString flips, inserts, deletes or repeats a few bytes of s.
func mutateString(rng *rand.Rand, s string) string {
	b := []byte(s)
	for range 1 + rng.Intn(4) {
		if len(b) == 0 {
			b = append(b, byte(rng.Intn(256)))
			continue
		}
		i := rng.Intn(len(b))
		switch rng.Intn(5) {
		case 0:
			b[i] = byte(rng.Intn(256))
		case 1:
			b = slices.Insert(b, i, []byte(`"[]{},:\`)[rng.Intn(8)])
		case 2:
			b = slices.Delete(b, i, min(len(b), i+1+rng.Intn(8)))
		case 3:
			b = b[:i]
		default:
			j := min(len(b), i+1+rng.Intn(16))
			b = slices.Insert(b, i, bytes.Repeat(b[i:j], 1+rng.Intn(100))...)
		}
	}
	return string(b)
}

// hostileValues are what a mutation puts in place of a report's value.
var hostileValues = []func(rng *rand.Rand) any{
	func(*rand.Rand) any { return json.Number("99999999999999999999999") },
	func(*rand.Rand) any { return json.Number("-2147483649") },
	func(*rand.Rand) any { return json.Number("1e400") },
	func(*rand.Rand) any { return nil },
	func(*rand.Rand) any { return "" },
	func(*rand.Rand) any { return "a\x00b" },
	func(*rand.Rand) any { return "\xff\xfe" },
	func(rng *rand.Rand) any { return strings.Repeat("x", []int{300, 3000, 100000}[rng.Intn(3)]) },
	func(*rand.Rand) any { return map[string]any{"nested": []any{1, "a", nil}} },
	func(*rand.Rand) any { return []any{} },
	func(*rand.Rand) any { return true },
	func(rng *rand.Rand) any {
		var v any = "deep"
		for range []int{10, 600}[rng.Intn(2)] {
			v = []any{v}
		}
		return v
	},
	func(*rand.Rand) any { return "2026-13-45T99:99:99Z" },
	func(*rand.Rand) any { return "2100-01-01T00:00:00Z" },
	func(*rand.Rand) any { return "1969-12-31T23:59:59Z" },
}

// mutateReport replaces one to three values of a wire report (never its
// certname) with hostile ones.
func mutateReport(rng *rand.Rand, body []byte) []byte {
	var doc any
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	d.Decode(&doc)
	for range 1 + rng.Intn(3) {
		var paths [][]any
		var walk func(v any, path []any)
		walk = func(v any, path []any) {
			if len(path) > 0 && !(len(path) == 1 && path[0] == "certname") {
				paths = append(paths, slices.Clone(path))
			}
			switch x := v.(type) {
			case map[string]any:
				for k, e := range x {
					walk(e, append(path, k))
				}
			case []any:
				for i, e := range x {
					if i < 5 {
						walk(e, append(path, i))
					}
				}
			}
		}
		walk(doc, nil)
		if len(paths) == 0 {
			break
		}
		p := paths[rng.Intn(len(paths))]
		v := hostileValues[rng.Intn(len(hostileValues))](rng)
		set(doc, p, v)
	}
	b, _ := json.Marshal(doc)
	return b
}

func set(doc any, path []any, v any) {
	for i, k := range path {
		last := i == len(path)-1
		switch x := doc.(type) {
		case map[string]any:
			if last {
				x[k.(string)] = v
				return
			}
			doc = x[k.(string)]
		case []any:
			if last {
				x[k.(int)] = v
				return
			}
			doc = x[k.(int)]
		}
	}
}

// yamlAliasReport is yaml with its first log message an anchor of size
// bytes, reused by n more log entries.
func yamlAliasReport(y []byte, size, n int) []byte {
	s := string(y)
	i := strings.Index(s, "\nlogs:\n")
	if i < 0 {
		return y
	}
	var b strings.Builder
	b.WriteString(s[:i])
	b.WriteString("\nlogs:\n- level: info\n  message: &big " + strings.Repeat("x", size) + "\n  source: Puppet\n  tags: [info]\n  time: '2026-01-01T00:00:00.000+00:00'\n  file: \n  line: \n")
	for range n {
		b.WriteString("- level: info\n  message: *big\n  source: Puppet\n  tags: [info]\n  time: '2026-01-01T00:00:00.000+00:00'\n  file: \n  line: \n")
	}
	// the rest after the original logs section
	rest := s[i+len("\nlogs:\n"):]
	if j := strings.Index(rest, "\nmetrics:"); j >= 0 {
		b.WriteString(rest[j+1:])
	}
	return []byte(b.String())
}

// yamlTinyItems is a YAML document of n one-character list items.
func yamlTinyItems(n int) []byte {
	var b bytes.Buffer
	b.WriteString("--- !ruby/object:Puppet::Transaction::Report\nhost: tiny.example.com\nlogs:\n")
	for range n {
		b.WriteString("- a\n")
	}
	return b.Bytes()
}
