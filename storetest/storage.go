package storetest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"reportdb"
	"reportdb/engine"
	"reportdb/jsonv"
	"reportdb/wire"
)

// Report builds a small valid report: certname, producer timestamp, run
// start (which changes the hash), report type, and one event per status.
func Report(t testing.TB, certname, producerTS, start, typ string, statuses ...string) *reportdb.Report {
	t.Helper()
	var resources []string
	for i, st := range statuses {
		resources = append(resources, fmt.Sprintf(`{"skipped":false,"timestamp":%q,"resource_type":"File",
		 "resource_title":"/tmp/%d","file":"/etc/site.pp","line":%d,"containment_path":["Stage[main]","Main","File[/tmp/%d]"],
		 "corrective_change":null,"events":[{"status":%q,"timestamp":%q,"property":"ensure","new_value":"file",
		 "old_value":"absent","message":"created","corrective_change":null,"name":"file_created"}]}`,
			start, i, i+1, i, st, start))
	}
	typeField := ""
	if typ != "" {
		typeField = fmt.Sprintf(`,"type":%q`, typ)
	}
	doc := fmt.Sprintf(`{"certname":%q,"puppet_version":"7.23.0","report_format":12,"configuration_version":"1",
	 "start_time":%q,"end_time":%q,"producer_timestamp":%q,"producer":"puppet","corrective_change":null,
	 "noop":false,"noop_pending":false,"transaction_uuid":null,"catalog_uuid":null,"code_id":null,
	 "cached_catalog_status":null,"environment":"production","status":"changed","metrics":[],"logs":[],
	 "resources":[%s]%s}`, certname, start, start, producerTS, strings.Join(resources, ","), typeField)
	v, err := jsonv.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	r, err := wire.Decode(8, v, 1700000000000)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustStore(t *testing.T, b engine.Backend, rs ...*reportdb.Report) []reportdb.Outcome {
	t.Helper()
	out, errs, err := b.StoreReports(ctx(t), rs)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range errs {
		if e != nil {
			t.Fatalf("report %d: %v", i, e)
		}
	}
	return out
}

// get runs a GET on an API over b and decodes the JSON rows.
func get(t *testing.T, b engine.Backend, path string, params url.Values) []map[string]any {
	t.Helper()
	return fetch(t, NewServer(t, b), path, params)
}

// fetch runs a GET on h and decodes the JSON rows; anything but a 200
// with a JSON array fails the test.
func fetch(t *testing.T, h http.Handler, path string, params url.Values) []map[string]any {
	t.Helper()
	req := httptest.NewRequest("GET", path+"?"+params.Encode(), nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	body, _ := io.ReadAll(rec.Body)
	if rec.Code != 200 {
		t.Fatalf("GET %s?%s: %d %s", path, params.Encode(), rec.Code, body)
	}
	var rows []map[string]any
	if err := json.Unmarshal(body, &rows); err != nil {
		t.Fatalf("GET %s: %v: %s", path, err, body)
	}
	return rows
}

func latestHashes(t *testing.T, b engine.Backend, certname string) []string {
	rows := get(t, b, "/pdb/query/v4/reports", url.Values{"query": {
		fmt.Sprintf(`["and",["=","certname",%q],["=","latest_report?",true],["=","type","any"]]`, certname)}})
	var out []string
	for _, r := range rows {
		out = append(out, r["hash"].(string))
	}
	return out
}

// RunStorage checks the storage semantics PuppetDB defines.
func RunStorage(t *testing.T, open Opener) {
	t.Run("Duplicates", func(t *testing.T) {
		b := open(t)
		r1 := Report(t, "a.example", "2025-01-01T10:00:00Z", "2025-01-01T09:59:00Z", "", "success")
		dup := Report(t, "a.example", "2025-01-01T10:00:00Z", "2025-01-01T09:59:00Z", "", "failure", "noop")
		if r1.Hash != dup.Hash {
			t.Fatal("test setup: reports differing only in events must share a hash")
		}
		out := mustStore(t, b, r1, dup)
		if out[0] != reportdb.Stored || out[1] != reportdb.Duplicate {
			t.Fatalf("same batch outcomes = %v, want stored, duplicate", out)
		}
		if out := mustStore(t, b, dup); out[0] != reportdb.Duplicate {
			t.Fatalf("later duplicate outcome = %v", out[0])
		}
		ev := get(t, b, "/pdb/query/v4/events", nil)
		if len(ev) != 1 || ev[0]["status"] != "success" {
			t.Fatalf("events = %v, want only the first version's single success event", ev)
		}
	})
	t.Run("LatestReport", func(t *testing.T) {
		b := open(t)
		newer := Report(t, "n1", "2025-01-02T10:00:00Z", "2025-01-02T09:00:00Z", "", "success")
		older := Report(t, "n1", "2025-01-01T10:00:00Z", "2025-01-01T09:00:00Z", "", "success")
		same := Report(t, "n1", "2025-01-02T10:00:00Z", "2025-01-02T09:30:00Z", "", "success")
		plan := Report(t, "n1", "2025-01-03T10:00:00Z", "2025-01-03T09:00:00Z", "plan", "success")
		mustStore(t, b, newer)
		mustStore(t, b, older, same, plan)
		if got := latestHashes(t, b, "n1"); len(got) != 1 || got[0] != newer.Hash {
			t.Fatalf("latest = %v, want %s (greatest producer_timestamp, first stored on ties, plans never)", got, newer.Hash)
		}
		reports := get(t, b, "/pdb/query/v4/reports", url.Values{"query": {`["=","certname","n1"]`}})
		if len(reports) != 3 {
			t.Fatalf("/reports returned %d rows, want 3 agent reports (plan reports hidden)", len(reports))
		}
		events := get(t, b, "/pdb/query/v4/events", url.Values{"query": {`["=","certname","n1"]`}})
		if len(events) != 4 {
			t.Fatalf("/events returned %d rows, want 4 (plan report events included)", len(events))
		}
	})
	t.Run("Retention", func(t *testing.T) {
		b := open(t)
		old := Report(t, "r1", "2025-01-01T10:00:00Z", "2025-01-01T09:00:00Z", "", "success", "failure")
		young := Report(t, "r2", "2025-01-20T10:00:00Z", "2025-01-20T09:00:00Z", "", "noop")
		mustStore(t, b, old, young)
		n, err := b.DeleteReportsBefore(ctx(t), mustMillis(t, "2025-01-10T00:00:00Z"))
		if err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Fatalf("deleted %d reports, want 1", n)
		}
		reports := get(t, b, "/pdb/query/v4/reports", nil)
		if len(reports) != 1 || reports[0]["hash"] != young.Hash {
			t.Fatalf("reports after retention = %v", reports)
		}
		events := get(t, b, "/pdb/query/v4/events", nil)
		if len(events) != 1 || events[0]["status"] != "noop" {
			t.Fatalf("events after retention = %v", events)
		}
		if got := latestHashes(t, b, "r1"); len(got) != 0 {
			t.Fatalf("deleted report still latest: %v", got)
		}
	})
	// an environment goes with the last of its reports, and not before
	t.Run("RetentionEnvironments", func(t *testing.T) {
		b := open(t)
		gone := Report(t, "r1", "2025-01-01T10:00:00Z", "2025-01-01T09:00:00Z", "", "success")
		gone.Environment = "staging"
		partly := Report(t, "r2", "2025-01-02T10:00:00Z", "2025-01-02T09:00:00Z", "", "success")
		partly.Environment = "testing"
		kept := Report(t, "r3", "2025-01-20T10:00:00Z", "2025-01-20T09:00:00Z", "", "noop")
		kept.Environment = "testing"
		prod := Report(t, "r4", "2025-01-21T10:00:00Z", "2025-01-21T09:00:00Z", "", "noop")
		mustStore(t, b, gone, partly, kept, prod)
		names := func() []string {
			var out []string
			for _, row := range get(t, b, "/pdb/query/v4/environments", url.Values{"order_by": {`[{"field":"name"}]`}}) {
				out = append(out, fmt.Sprint(row["name"]))
			}
			return out
		}
		if got := strings.Join(names(), ","); got != "production,staging,testing" {
			t.Fatalf("environments before retention = %s", got)
		}
		if n, err := b.DeleteReportsBefore(ctx(t), mustMillis(t, "2025-01-10T00:00:00Z")); err != nil || n != 2 {
			t.Fatalf("retention deleted %d reports (%v), want 2", n, err)
		}
		if got := strings.Join(names(), ","); got != "production,testing" {
			t.Fatalf("environments after retention = %s, want production,testing", got)
		}
	})
}

func mustMillis(t *testing.T, s string) int64 {
	tm, err := wire.ParseDatetime(s)
	if err != nil {
		t.Fatal(err)
	}
	return tm.UnixMilli()
}
