package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"reportdb/ingest"
	"reportdb/internal/config"
	"reportdb/internal/pgtest"
	"reportdb/jsonv"
	"reportdb/wire"
)

// TestStartWithoutPostgres: with PostgreSQL unreachable reportdb starts,
// answers queries 503 with a message and Retry-After, spools submissions
// (200 {"uuid"}; with secondsToWaitForCompletion a 503 timed-out body, as
// PuppetDB answers a queued command it could not process in time), shows
// the backlog in queue_depth and /metrics, and refuses past the spool
// limit with 503 and Retry-After.
func TestStartWithoutPostgres(t *testing.T) {
	cfg := config.Defaults()
	cfg.Listen = "127.0.0.1:0"
	cfg.DataDir = t.TempDir()
	cfg.Database = "postgres://postgres@127.0.0.1:1/reportdb?connect_timeout=2" // nothing listens on port 1
	body0, cn0 := corpusReport(t, 0)
	body1, cn1 := corpusReport(t, 1)
	body2, cn2 := corpusReport(t, 2)
	cfg.SpoolMaxBytes = spoolSize(t, body0) + spoolSize(t, body1) + spoolSize(t, body2)/2 // room for two reports, not three
	base := "http://" + startInProcess(t, cfg).HTTP

	code, hdr, msg := get(t, base+"/pdb/query/v4/reports")
	if code != 503 || hdr.Get("Retry-After") == "" || !strings.Contains(msg, "database is unavailable") {
		t.Errorf("query: %d %q %v", code, msg, hdr)
	}
	status, msg, err := submit(http.DefaultClient, base, body0, cn0)
	var doc map[string]any
	json.Unmarshal([]byte(msg), &doc)
	if err != nil || status != 200 || len(doc) != 1 || doc["uuid"] == nil {
		t.Fatalf("spooled submission: %d %q %v", status, msg, err)
	}
	code, doc, b := submitWaiting(t, base, body1, cn1, "0.3")
	if code != 503 || doc["processed"] != false || doc["timed_out"] != true || doc["uuid"] == nil {
		t.Errorf("waiting for a spooled report: %d %s", code, b)
	}
	var st struct {
		State  string `json:"state"`
		Status struct {
			QueueDepth int `json:"queue_depth"`
		} `json:"status"`
	}
	code, _, msg = get(t, base+"/status/v1/services/puppetdb-status")
	json.Unmarshal([]byte(msg), &st)
	if code != 503 || st.State != "error" || st.Status.QueueDepth != 2 {
		t.Errorf("status: %d %s", code, msg)
	}
	m := scrape(t, http.DefaultClient, base)
	if q := m[`reportdb_ingest_reports_total{channel="command",outcome="queued"}`]; q != 2 {
		t.Errorf("ingest metric outcome queued: %v", q)
	}
	if m["reportdb_spool_reports"] != 2 || m["reportdb_spool_bytes"] <= 0 || m["reportdb_spool_oldest_age_seconds"] <= 0 {
		t.Errorf("spool metrics: reports %v bytes %v age %v", m["reportdb_spool_reports"], m["reportdb_spool_bytes"], m["reportdb_spool_oldest_age_seconds"])
	}
	resp, err := http.Post(commandURL(base, cn2), "application/json", bytes.NewReader(body2))
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(b), "spool") {
		t.Errorf("past the spool limit: %d %q", resp.StatusCode, b)
	}
	// a bad report is still a 400, not spooled
	status, msg, _ = submit(http.DefaultClient, base, []byte(`{"certname":"x"}`), "x")
	if status != 400 {
		t.Errorf("invalid report with the database down: %d %q", status, msg)
	}
}

// spoolSize is the size of a wire v8 report's spool record.
// submitWaiting posts a wire v8 report with secondsToWaitForCompletion
// and returns the status, the decoded answer and its bytes.
func submitWaiting(t *testing.T, base string, body []byte, certname, seconds string) (int, map[string]any, []byte) {
	t.Helper()
	resp, err := http.Post(commandURL(base, certname)+"&secondsToWaitForCompletion="+seconds, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var doc map[string]any
	json.Unmarshal(b, &doc)
	return resp.StatusCode, doc, b
}

func spoolSize(t *testing.T, body []byte) int64 {
	v, err := jsonv.Parse(body)
	if err != nil {
		t.Fatal(err)
	}
	r, err := wire.Decode(8, v, time.Now().UnixMilli())
	if err != nil {
		t.Fatal(err)
	}
	return ingest.SpooledSize(r)
}

// TestAcknowledgeSpool: with --acknowledge spool on PostgreSQL a
// submission is answered as a queued command and reaches the database
// through the spool; secondsToWaitForCompletion waits for that delivery
// (processed, not timed out); the spool is empty afterwards; a bad report
// still gets its 400 and is neither spooled nor stored.
func TestAcknowledgeSpool(t *testing.T) {
	cfg := config.Defaults()
	cfg.Listen = "127.0.0.1:0"
	cfg.DataDir = t.TempDir()
	cfg.Database = pgtest.NewDatabase(t)
	cfg.Acknowledge = "spool"
	base := "http://" + startInProcess(t, cfg).HTTP
	body0, cn0 := corpusReport(t, 0)
	body1, cn1 := corpusReport(t, 1)
	status, msg, err := submit(http.DefaultClient, base, body0, cn0)
	var doc map[string]any
	json.Unmarshal([]byte(msg), &doc)
	if err != nil || status != 200 || len(doc) != 1 || doc["uuid"] == nil {
		t.Fatalf("submission: %d %q %v", status, msg, err)
	}
	code, doc, b := submitWaiting(t, base, body1, cn1, "30")
	if code != 200 || doc["processed"] != true || doc["timed_out"] != false {
		t.Fatalf("waiting for the delivery: %d %s", code, b)
	}
	// delivered in arrival order: the first is in by now too
	if n := countReports(t, http.DefaultClient, base); n != 2 {
		t.Fatalf("%d reports queryable after the second was processed, want 2", n)
	}
	status, msg, _ = submit(http.DefaultClient, base, []byte(`{"certname": "x"}`), "x")
	if status != 400 {
		t.Errorf("bad report: %d %q, want 400", status, msg)
	}
	m := scrape(t, http.DefaultClient, base)
	if q := m[`reportdb_ingest_reports_total{channel="command",outcome="queued"}`]; q != 2 {
		t.Errorf("ingest metric outcome queued: %v, want both submissions", q)
	}
	if m["reportdb_spool_reports"] != 0 || m["reportdb_spool_discarded_total"] != 0 {
		t.Errorf("spool after delivery: %v reports, %v discarded", m["reportdb_spool_reports"], m["reportdb_spool_discarded_total"])
	}
	if n := countReports(t, http.DefaultClient, base); n != 2 {
		t.Fatalf("%d reports after the bad one, want 2", n)
	}
}
