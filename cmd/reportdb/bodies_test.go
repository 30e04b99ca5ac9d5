package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"reportdb/internal/pgtest"
)

// backends runs f against a server on the embedded store and one on
// PostgreSQL, each tuned by tune.
func backends(t *testing.T, tune func(*serveConfig), f func(t *testing.T, base string)) {
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			addr := limitsServer(t, func(c *serveConfig) {
				if kind == "postgres" {
					c.Database = pgtest.NewDatabase(t)
				}
				if tune != nil {
					tune(c)
				}
			})
			f(t, "http://"+addr)
		})
	}
}

// stalledRequest sends head and the first part of a body, then nothing:
// the connection stays open until the test ends.
func stalledRequest(t *testing.T, addr, head string, part []byte) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Write(part); err != nil {
		t.Fatal(err)
	}
	return conn
}

// TestStalledBodiesHoldNoQuerySlot: clients that send a query's or a
// report's headers and part of its body, then stall, hold no query slot
// and no writer, so other queries are answered at once rather than refused
// after the queue wait, and reports are stored.
func TestStalledBodiesHoldNoQuerySlot(t *testing.T) {
	backends(t, func(c *serveConfig) {
		c.MaxConcurrentQueries = 1
		c.QueryQueueWait = 500 * time.Millisecond
	}, func(t *testing.T, base string) {
		addr := strings.TrimPrefix(base, "http://")
		for i := 0; i < 8; i++ {
			stalledRequest(t, addr, "POST /pdb/query/v4/nodes HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n", []byte(`{"query":`))
		}
		body, certname := corpusReport(t, 0)
		for i := 0; i < 8; i++ {
			stalledRequest(t, addr, fmt.Sprintf("POST /pdb/cmd/v1?command=store_report&version=8&certname=%s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", certname, len(body)), body[:len(body)/2])
		}
		time.Sleep(200 * time.Millisecond) // the server has read what they sent
		for i := 0; i < 3; i++ {
			code, _, body := get(t, base+"/pdb/query/v4/nodes")
			if code != 200 {
				t.Fatalf("query %d beside 16 stalled bodies: %d %.200q", i, code, body)
			}
		}
		if code, msg, err := submit(http.DefaultClient, base, body, certname); err != nil || code != 200 {
			t.Fatalf("a report beside 16 stalled bodies: %d %.200q %v", code, msg, err)
		}
	})
}

// TestAnnouncedOversizeRefusedAtOnce: a Content-Length over the limit is
// answered 413 before any of the body is sent, for queries and
// submissions.
func TestAnnouncedOversizeRefusedAtOnce(t *testing.T) {
	backends(t, nil, func(t *testing.T, base string) {
		addr := strings.TrimPrefix(base, "http://")
		for _, target := range []string{"/pdb/query/v4/nodes", "/pdb/cmd/v1?command=store_report&version=8&certname=a", "/reports/upload"} {
			conn := stalledRequest(t, addr, "POST "+target+" HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 99999999999\r\n\r\n", nil)
			conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			b := make([]byte, 512)
			n, err := conn.Read(b)
			if !strings.HasPrefix(string(b[:n]), "HTTP/1.1 413") {
				t.Errorf("%s with Content-Length 99999999999: %q %v", target, b[:n], err)
			}
		}
		code, _, _ := get(t, base+"/pdb/query/v4/nodes")
		if code != 200 {
			t.Errorf("after the refusals: %d", code)
		}
	})
}

// gzipOf returns n zero bytes gzipped.
func gzipOf(t *testing.T, n int) []byte {
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	zw.Write(make([]byte, n))
	zw.Close()
	return b.Bytes()
}

// TestBodyBudget: the decoded bytes of bodies being read count against
// max-inflight-body-bytes. A gzip body that has inflated to most of the
// budget and stalls leaves no room for a second large one, which gets 503
// with Retry-After after the queue wait instead of growing the heap; small
// reports still fit beside it; once the stalled client goes, everything is
// taken again and nothing bad was stored.
func TestBodyBudget(t *testing.T) {
	const limit = 8 << 20
	backends(t, func(c *serveConfig) {
		c.MaxBodyBytes = limit
		c.MaxInflightBodyBytes = 10 << 20
		c.QueryQueueWait = 300 * time.Millisecond
	}, func(t *testing.T, base string) {
		addr := strings.TrimPrefix(base, "http://")
		// gzip without a trailer: the server has inflated 6 MiB and waits
		// for the rest
		bomb := gzipOf(t, 6<<20)
		head := "POST /pdb/cmd/v1?command=store_report&version=8&certname=bomb HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n"
		part := bomb[:len(bomb)-8]
		conn := stalledRequest(t, addr, head, fmt.Appendf(nil, "%x\r\n%s\r\n", len(part), part))
		time.Sleep(300 * time.Millisecond)

		body, certname := corpusReport(t, 0)
		if code, msg, err := submit(http.DefaultClient, base, body, certname); err != nil || code != 200 {
			t.Fatalf("a small report beside the stalled body: %d %.200q %v", code, msg, err)
		}

		req, _ := http.NewRequest("POST", base+"/pdb/cmd/v1?command=store_report&version=8&certname=bomb2", bytes.NewReader(gzipOf(t, 7<<20)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Content-Encoding", "gzip")
		c := &http.Client{Timeout: 10 * time.Second}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("a second large body: %v", err)
		}
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(msg), "max-inflight-body-bytes") {
			t.Errorf("a second large body beside the stalled one: %d %q %.200q", resp.StatusCode, resp.Header.Get("Retry-After"), msg)
		}

		conn.Close()
		time.Sleep(200 * time.Millisecond)
		body, certname = corpusReport(t, 1)
		if code, msg, err := submit(http.DefaultClient, base, body, certname); err != nil || code != 200 {
			t.Fatalf("a report after the stalled client left: %d %.200q %v", code, msg, err)
		}
		// the budget was given back: a body of the whole limit is read
		// (and refused for what it is, not for the budget)
		req, _ = http.NewRequest("POST", base+"/pdb/cmd/v1?command=store_report&version=8&certname=zeros", bytes.NewReader(gzipOf(t, limit-1)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Content-Encoding", "gzip")
		if resp, err = c.Do(req); err != nil {
			t.Fatal(err)
		}
		msg, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 {
			t.Errorf("a whole-limit body after the others: %d %.200q", resp.StatusCode, msg)
		}
		if n := countReports(t, http.DefaultClient, base); n != 2 {
			t.Errorf("stored %d reports, want the 2 valid ones", n)
		}
	})
}

// TestCrossOriginSubmissionRefused: a browser's cross-site request (as a
// web page would make it) cannot submit a report; agents, which send no
// Origin or Sec-Fetch-Site, can.
func TestCrossOriginSubmissionRefused(t *testing.T) {
	backends(t, nil, func(t *testing.T, base string) {
		body, certname := corpusReport(t, 0)
		for name, h := range map[string]map[string]string{
			"Sec-Fetch-Site":  {"Sec-Fetch-Site": "cross-site"},
			"Origin":          {"Origin": "http://evil.example"},
			"same-site page":  {"Sec-Fetch-Site": "same-site", "Origin": "http://dashboard.example"},
			"form to upload":  {"Origin": "null"},
			"Puppet endpoint": {"Sec-Fetch-Site": "cross-site"},
		} {
			target := commandURL(base, certname)
			switch name {
			case "form to upload":
				target = base + "/reports/upload"
			case "Puppet endpoint":
				target = base + "/puppet/v3/report/" + url.PathEscape(certname)
			}
			req, _ := http.NewRequest("POST", target, bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			for k, v := range h {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			msg, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 403 || !strings.Contains(string(msg), "Cross-origin") {
				t.Errorf("%s: %d %.200q", name, resp.StatusCode, msg)
			}
		}
		if n := countReports(t, http.DefaultClient, base); n != 0 {
			t.Errorf("cross-origin requests stored %d reports", n)
		}
		if code, msg, err := submit(http.DefaultClient, base, body, certname); err != nil || code != 200 {
			t.Fatalf("the agent's request: %d %.200q %v", code, msg, err)
		}
	})
}

// TestDenseJSONRefusedBeforeParsing: a body of tiny JSON values, which
// would take about 35 times its size to parse, is refused before parsing
// when it holds more values than the limit: a report with 413, a query
// with 400, each naming the limit; nothing is stored.
func TestDenseJSONRefusedBeforeParsing(t *testing.T) {
	backends(t, func(c *serveConfig) { c.MaxBodyBytes = 4 << 20 }, func(t *testing.T, base string) {
		zeros := func(n int) []byte { return append(append([]byte("["), bytes.Repeat([]byte("0,"), n)...), '0', ']') }
		report := append(append([]byte(`{"certname":"dense","logs":`), zeros(1<<20)...), '}')
		for _, target := range []string{"/pdb/cmd/v1?command=store_report&version=8&certname=dense", "/puppet/v3/report/dense", "/reports/upload"} {
			resp, err := http.Post(base+target, "application/json", bytes.NewReader(report))
			if err != nil {
				t.Fatal(err)
			}
			msg, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 413 || !strings.Contains(string(msg), "JSON values") {
				t.Errorf("%s, a report of a million zeros: %d %.200q", target, resp.StatusCode, msg)
			}
		}
		query := append(append([]byte(`{"query":["in","certname",["array",`), zeros(300000)...), "]]}"...)
		resp, err := http.Post(base+"/pdb/query/v4/nodes", "application/json", bytes.NewReader(query))
		if err != nil {
			t.Fatal(err)
		}
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(string(msg), "JSON values") {
			t.Errorf("a query of 300,000 values: %d %.200q", resp.StatusCode, msg)
		}
		if n := countReports(t, http.DefaultClient, base); n != 0 {
			t.Errorf("stored %d reports", n)
		}
	})
}

// TestClientThatStopsReadingFreesItsSlot: a client that asks for a large
// answer and stops reading it holds its query slot only until the write
// deadline (query-timeout plus queryWriteSlack), not for as long as it
// keeps its connection open.
func TestClientThatStopsReadingFreesItsSlot(t *testing.T) {
	addr := limitsServer(t, func(c *serveConfig) {
		c.MaxConcurrentQueries = 1
		c.QueryTimeout = time.Second
		c.QueryQueueWait = time.Second
	})
	base := "http://" + addr
	// one report of 30 MB of logs, which the reports query answers inline
	body, certname := reportWithLogs(t, 3000)
	if code, msg, err := submit(http.DefaultClient, base, body, certname); err != nil || code != 200 {
		t.Fatalf("the large report: %d %.200q %v", code, msg, err)
	}
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.(*net.TCPConn).SetReadBuffer(4096)
	fmt.Fprintf(conn, "GET /pdb/query/v4/reports HTTP/1.1\r\nHost: x\r\n\r\n")
	head := make([]byte, 1)
	if _, err := conn.Read(head); err != nil { // the answer has started: the slot is taken
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Second + queryWriteSlack + 20*time.Second)
	for {
		code, _, _ := get(t, base+"/pdb/query/v4/reports?limit=1")
		if code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("queries still refused (%d) while a client that stopped reading holds the only slot", code)
		}
	}
}

// TestDocumentReadsShareTheBodyBudget: reading a report's stored logs
// takes what the document weighs from max-inflight-body-bytes before it
// is loaded: while a stalled body holds most of the budget a large
// document's read waits and gets 503; once the budget is free it is
// answered whole.
func TestDocumentReadsShareTheBodyBudget(t *testing.T) {
	backends(t, func(c *serveConfig) {
		c.MaxBodyBytes = 8 << 20
		c.MaxInflightBodyBytes = 8 << 20
		c.QueryQueueWait = 300 * time.Millisecond
	}, func(t *testing.T, base string) {
		addr := strings.TrimPrefix(base, "http://")
		body, certname := reportWithLogs(t, 300)
		if code, msg, err := submit(http.DefaultClient, base, body, certname); err != nil || code != 200 {
			t.Fatalf("the report: %d %.200q %v", code, msg, err)
		}
		var rows []struct{ Hash string }
		getJSON(t, base+"/pdb/query/v4/reports?"+url.Values{"query": {`["extract",["hash"]]`}}.Encode(), &rows)
		if len(rows) != 1 {
			t.Fatalf("reports: %v", rows)
		}
		logsURL := base + "/pdb/query/v4/reports/" + rows[0].Hash + "/logs"

		// 6 MiB of a gzip body inflated and stalled: 2 MiB left
		bomb := gzipOf(t, 6<<20)
		part := bomb[:len(bomb)-8]
		conn := stalledRequest(t, addr, "POST /pdb/cmd/v1?command=store_report&version=8&certname=bomb HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n",
			fmt.Appendf(nil, "%x\r\n%s\r\n", len(part), part))
		// the logs are asked for once the body holds 4 MiB of the budget
		// (under load, the race detector, its inflating takes a while),
		// which with the read of the logs is more than the budget: asked
		// for earlier, they would hold what the body needs
		for deadline := time.Now().Add(30 * time.Second); inflightBodyBytes(t, base) < 4<<20; {
			if time.Now().After(deadline) {
				t.Fatalf("the stalled body was never charged: %d bytes held", inflightBodyBytes(t, base))
			}
			time.Sleep(50 * time.Millisecond)
		}
		code, hdr, msg := get(t, logsURL)
		if code != 503 || hdr.Get("Retry-After") == "" || !strings.Contains(msg, "max-inflight-body-bytes") {
			t.Errorf("3 MB of logs beside the stalled body: %d %.200q", code, msg)
		}
		conn.Close()
		code, _, msg = get(t, logsURL)
		for deadline := time.Now().Add(20 * time.Second); code == 503 && time.Now().Before(deadline); {
			time.Sleep(100 * time.Millisecond)
			code, _, msg = get(t, logsURL)
		}
		var got []any
		if code != 200 || json.Unmarshal([]byte(msg), &got) != nil || len(got) != 300 {
			t.Errorf("the logs once the budget is free: %d, %d entries", code, len(got))
		}
	})
}

// inflightBodyBytes reads reportdb_http_inflight_body_bytes from /metrics.
func inflightBodyBytes(t *testing.T, base string) int64 {
	t.Helper()
	_, _, text := get(t, base+"/metrics")
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, "reportdb_http_inflight_body_bytes "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return int64(f)
		}
	}
	t.Fatalf("no reportdb_http_inflight_body_bytes in /metrics")
	return 0
}

// reportWithLogs is the first corpus report with n log entries of 10 kB.
func reportWithLogs(t *testing.T, n int) ([]byte, string) {
	body, certname := corpusReport(t, 0)
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	logs := make([]any, n)
	for i := range logs {
		logs[i] = map[string]any{"file": nil, "line": nil, "level": "info", "message": fmt.Sprintf("%d %s", i, strings.Repeat("x", 10000)),
			"source": "Puppet", "tags": []string{"info"}, "time": doc["start_time"]}
	}
	doc["logs"] = logs
	body, _ = json.Marshal(doc)
	return body, certname
}
