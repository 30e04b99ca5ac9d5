package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"reportdb/internal/config"
)

func limitsServer(t *testing.T, tune func(*serveConfig)) string {
	t.Helper()
	cfg := config.Defaults()
	cfg.Listen = "127.0.0.1:0"
	cfg.DataDir = t.TempDir()
	cfg.ReportTTL = 0
	if tune != nil {
		tune(cfg)
	}
	return startInProcess(t, cfg).HTTP
}

func get(t *testing.T, u string) (int, http.Header, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// TestRequestSizeLimits: a long URL is a 414, a header flood a 431, a
// 100,000-deep query (JSON AST by GET and POST, PQL) a 400, each with a
// message; the server keeps serving.
func TestRequestSizeLimits(t *testing.T) {
	addr := limitsServer(t, func(c *serveConfig) { c.MaxURLBytes = 4096; c.MaxHeaderBytes = 8192; c.MaxJSONDepth = 50 })
	base := "http://" + addr

	code, _, msg := get(t, base+"/pdb/query/v4/reports?query="+url.QueryEscape(`["=","certname","`+strings.Repeat("a", 5000)+`"]`))
	if code != 414 || !strings.Contains(msg, "max-url-bytes") {
		t.Errorf("long URL: %d %q", code, msg)
	}
	req, _ := http.NewRequest("GET", base+"/pdb/query/v4/reports", nil)
	for i := 0; i < 100; i++ {
		req.Header.Add(fmt.Sprintf("X-Flood-%d", i), strings.Repeat("x", 200))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 431 || len(b) == 0 {
		t.Errorf("header flood: %d %q", resp.StatusCode, b)
	}

	n := 100000
	deepJSON := `["from","reports",` + strings.Repeat(`["not",`, n) + `["=","certname","a"]` + strings.Repeat("]", n) + "]"
	deepPQL := "reports { " + strings.Repeat("(", n) + `certname = "a"` + strings.Repeat(")", n) + " }"
	for name, q := range map[string]string{"JSON": deepJSON, "PQL": deepPQL} {
		body, _ := json.Marshal(map[string]string{"query": q})
		resp, err := http.Post(base+"/pdb/query/v4", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || !(strings.Contains(string(b), "nesting depth exceeds the maximum allowed (50)") || strings.Contains(string(b), "nested too deeply")) {
			t.Errorf("%s 100,000 deep: %d %.200q", name, resp.StatusCode, b[max(0, len(b)-200):])
		}
	}
	// a JSON query over the configured depth by GET (short enough for the URL limit)
	code, _, msg = get(t, base+"/pdb/query/v4/reports?query="+url.QueryEscape(strings.Repeat(`["not",`, 60)+`["=","certname","a"]`+strings.Repeat("]", 60)))
	if code != 400 || !strings.Contains(msg, "nesting depth exceeds") {
		t.Errorf("deep GET: %d %.100q", code, msg)
	}
	if code, _, _ := get(t, base+"/pdb/query/v4/reports"); code != 200 {
		t.Errorf("after the refusals: %d", code)
	}
}

// TestSlowClients: a client trickling its headers (slowloris) or its body
// is cut off after read-header-timeout / read-timeout, an idle keep-alive
// connection after idle-timeout, and 2,000 idle connections do not keep
// the server from answering.
func TestSlowClients(t *testing.T) {
	addr := limitsServer(t, func(c *serveConfig) {
		c.ReadHeaderTimeout = 300 * time.Millisecond
		c.ReadTimeout = 800 * time.Millisecond
		c.IdleTimeout = 500 * time.Millisecond
	})
	base := "http://" + addr

	// closedWithin tells whether the server closes conn within d.
	closedWithin := func(conn net.Conn, d time.Duration) (bool, string) {
		conn.SetReadDeadline(time.Now().Add(d))
		b, err := io.ReadAll(conn)
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			return false, string(b)
		}
		return true, string(b)
	}

	// headers trickled one byte every 100 ms
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	// Each trickling goroutine gets its connection as an argument: the
	// variable conn is reused for the next case, and a goroutine reading
	// it would trickle into that case's connection.
	go func(conn net.Conn) {
		for _, c := range []byte("GET /pdb/query/v4/reports HTTP/1.1\r\nHost: x\r\nX-Slow: " + strings.Repeat("y", 100)) {
			if _, err := conn.Write([]byte{c}); err != nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}(conn)
	start := time.Now()
	if closed, _ := closedWithin(conn, 5*time.Second); !closed {
		t.Errorf("slowloris headers: connection still open after 5 s")
	} else if d := time.Since(start); d > 3*time.Second {
		t.Errorf("slowloris headers: closed after %v", d)
	}
	conn.Close()

	// a report body trickled: cut off, nothing stored
	body, certname := corpusReport(t, 0)
	conn, err = net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(commandURL(base, certname))
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", u.RequestURI(), len(body))
	go func(conn net.Conn) {
		for i := 0; i < len(body); i += 10 {
			if _, err := conn.Write(body[i:min(i+10, len(body))]); err != nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}(conn)
	closed, answer := closedWithin(conn, 5*time.Second)
	conn.Close()
	if !closed || strings.HasPrefix(answer, "HTTP/1.1 200") {
		t.Errorf("trickled body: closed %v, answer %.80q", closed, answer)
	}
	if n := countReports(t, http.DefaultClient, base); n != 0 {
		t.Errorf("a trickled, cut-off report was stored (%d reports)", n)
	}

	// idle keep-alive connection
	conn, err = net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "GET /pdb/meta/v1/version HTTP/1.1\r\nHost: x\r\n\r\n")
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	start = time.Now()
	rest, err := io.ReadAll(br) // the server closes the idle connection (EOF)
	if err != nil || time.Since(start) > 3*time.Second {
		t.Errorf("idle connection: err %v after %v (read %q)", err, time.Since(start), rest)
	}
	conn.Close()
}

// TestManyIdleConnections: 2,000 connections that send nothing do not keep
// the server from answering others.
func TestManyIdleConnections(t *testing.T) {
	addr := limitsServer(t, nil)
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := 0; i < 2000; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		conns = append(conns, c)
		if i%2 == 1 {
			fmt.Fprintf(c, "GET /pdb/query/v4/reports HTTP/1.1\r\nHost: x\r\n") // half a request
		}
	}
	client := &http.Client{Timeout: 10 * time.Second}
	for i := 0; i < 20; i++ {
		resp, err := client.Get("http://" + addr + "/pdb/query/v4/reports")
		if err != nil {
			t.Fatalf("with 2,000 idle connections: %v", err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("with 2,000 idle connections: %d", resp.StatusCode)
		}
	}
}
