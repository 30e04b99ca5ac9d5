package httpapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestQueryConcurrencyLimit: with every slot taken, a query waits
// QueueWait and gets 503 with Retry-After and a message; a query that
// waits less gets the slot once it frees; submissions are not limited.
func TestQueryConcurrencyLimit(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 10)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/pdb/query/v4/reports" && r.URL.RawQuery == "block" {
			entered <- struct{}{}
			<-release
		}
		w.Write([]byte("ok"))
	})
	srv := httptest.NewServer(Limit(h, Limits{MaxConcurrentQueries: 2, QueueWait: 200 * time.Millisecond}))
	defer srv.Close()
	get := func(path string) (int, string, http.Header) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Error(err)
			return 0, "", nil
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header
	}
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); get("/pdb/query/v4/reports?block") }()
		<-entered
	}
	code, msg, hdr := get("/pdb/query/v4/events")
	if code != 503 || hdr.Get("Retry-After") == "" || !strings.Contains(msg, "max-concurrent-queries") {
		t.Errorf("over the limit: %d %q %v", code, msg, hdr)
	}
	if code, _, _ := get("/v3/events"); code != 503 {
		t.Errorf("v3 over the limit: %d", code)
	}
	if code, _, _ := get("/pdb/cmd/v1"); code != 200 {
		t.Errorf("a submission was limited: %d", code)
	}
	if code, _, _ := get("/status/v1/services"); code != 200 {
		t.Errorf("status was limited: %d", code)
	}
	// a waiting query gets a slot freed during its wait
	done := make(chan int)
	go func() { c, _, _ := get("/pdb/query/v4/events"); done <- c }()
	time.Sleep(50 * time.Millisecond)
	release <- struct{}{}
	if c := <-done; c != 200 {
		t.Errorf("query waiting for a freed slot: %d", c)
	}
	close(release)
	wg.Wait()
}

func TestURLLimit(t *testing.T) {
	srv := httptest.NewServer(Limit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), Limits{MaxURLBytes: 100}))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/pdb/query/v4/reports?query=" + strings.Repeat("a", 100))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 414 || !strings.Contains(string(b), "POST") {
		t.Errorf("%d %q", resp.StatusCode, b)
	}
}

// TestSmallQuerySlot: with every slot taken by heavy queries, a query of
// a fleet-sized endpoint still gets the slot kept for small queries; a
// heavy query, or a small endpoint's query with a subquery, waits.
func TestSmallQuerySlot(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 10)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("block") != "" {
			entered <- struct{}{}
			<-release
		}
		w.Write([]byte("ok"))
	})
	srv := httptest.NewServer(Limit(h, Limits{MaxConcurrentQueries: 1, QueueWait: 200 * time.Millisecond}))
	defer srv.Close()
	get := func(path string) int {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Error(err)
			return 0
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); get("/pdb/query/v4/events?block=1") }()
	<-entered
	for path, want := range map[string]int{
		"/pdb/query/v4/events": 503,
		"/pdb/query/v4/nodes?query=%5B%22%3D%22%2C%22certname%22%2C%22a%22%5D": 200,
		"/pdb/query/v4/nodes/a.example.com":                                    200,
		"/pdb/query/v4/environments":                                           200,
		"/pdb/query/v4/reports/abc/logs":                                       200,
		"/pdb/query/v4/nodes?query=" + url.QueryEscape(`["in","certname",["extract","certname",["select_events",["~","message","x"]]]]`):      503,
		"/pdb/query/v4/nodes?query=" + url.QueryEscape(`["subquery","events",["=","status","failure"]]`):                                      503,
		"/pdb/query/v4/nodes?query=" + url.QueryEscape(`["in","certname",["extract","certname",["\u0073elect_events",["~","message","x"]]]]`): 503,
		"/pdb/query/v4/environments/production/events": 503,
	} {
		if got := get(path); got != want {
			t.Errorf("%s beside a heavy query holding the only slot: %d, want %d", path, got, want)
		}
	}
	close(release)
	wg.Wait()
}
