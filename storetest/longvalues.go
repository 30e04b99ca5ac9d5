package storetest

import (
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"reportdb"
)

// RunLongValues stores a report whose resource titles are long and
// incompressible (an Exec whose title is a whole script, a Notify whose
// title is its message): PostgreSQL refuses a btree entry over about
// 2.7 kB after compression, so a title indexed as it is would fail the
// report's transaction. Every such report must be stored and found again
// by its title, by its node's distinct resources and by the latest-event
// bookkeeping.
func RunLongValues(t *testing.T, open Opener) {
	b := open(t)
	h := NewServer(t, b)
	rng := rand.New(rand.NewPCG(7, 11))
	random := func(n int) string {
		raw := make([]byte, n)
		for i := range raw {
			raw[i] = byte(rng.Uint32())
		}
		return base64.StdEncoding.EncodeToString(raw)
	}
	// Two titles that share a long prefix and differ only at the end: a
	// key built from a prefix alone would confuse them.
	prefix := random(6000)
	titles := []string{prefix + "-one", prefix + "-two", random(30000), "short"}
	r1 := Report(t, "long.example", "2025-01-01T10:00:00Z", "2025-01-01T09:59:00Z", "", "success", "failure", "noop", "success")
	r2 := Report(t, "long.example", "2025-01-01T11:00:00Z", "2025-01-01T10:59:00Z", "", "failure", "success", "noop", "success")
	for _, rep := range []*reportdb.Report{r1, r2} {
		if len(rep.Events) != len(titles) {
			t.Fatalf("test setup: %d events", len(rep.Events))
		}
		for i := range rep.Events {
			rep.Events[i].ResourceTitle = titles[i]
		}
	}
	mustStore(t, b, r1)
	mustStore(t, b, r2)

	for i, title := range titles {
		q, _ := json.Marshal([]any{"=", "resource_title", title})
		rows := fetch(t, h, "/pdb/query/v4/events", url.Values{"query": {string(q)}})
		if len(rows) != 2 {
			t.Fatalf("title %d (%d bytes): %d events, want 2", i, len(title), len(rows))
		}
		for _, row := range rows {
			if row["resource_title"] != title {
				t.Fatalf("title %d came back as %.40q...", i, row["resource_title"])
			}
		}
	}
	// A regular expression anchored on a literal prefix: up to 200
	// characters the prefix also bounds the titles' keys; beyond, only
	// the titles. Both find the two long titles that share it, in both
	// reports.
	for _, n := range []int{50, 199, 200, 201, 300, 5000} {
		q, _ := json.Marshal([]any{"~", "resource_title", "^" + regexp.QuoteMeta(prefix[:n])})
		rows := fetch(t, h, "/pdb/query/v4/events", url.Values{"query": {string(q)}})
		if len(rows) != 4 {
			t.Fatalf("regex on the first %d characters of the shared prefix: %d events, want 4", n, len(rows))
		}
	}
	// The latest events of each resource: r2's, one per title.
	q, _ := json.Marshal([]any{"and", []any{"=", "certname", "long.example"}, []any{"=", "latest_report?", true}})
	rows := fetch(t, h, "/pdb/query/v4/events", url.Values{"query": {string(q)}})
	if len(rows) != len(titles) {
		t.Fatalf("latest report's events: %d, want %d", len(rows), len(titles))
	}
	// distinct_resources over both reports: one row per resource, each the
	// newer report's event.
	rows = fetch(t, h, "/pdb/query/v4/events", url.Values{
		"distinct_resources":  {"true"},
		"distinct_start_time": {"2025-01-01T00:00:00Z"},
		"distinct_end_time":   {"2025-01-02T00:00:00Z"},
	})
	if len(rows) != len(titles) {
		t.Fatalf("distinct resources: %d rows, want %d", len(rows), len(titles))
	}
	seen := map[string]bool{}
	for _, row := range rows {
		title := row["resource_title"].(string)
		seen[title] = true
		if !strings.HasPrefix(row["timestamp"].(string), "2025-01-01T10:59") {
			t.Fatalf("distinct resource %.20q: timestamp %v, want the newer report's", title, row["timestamp"])
		}
	}
	if len(seen) != len(titles) {
		t.Fatalf("distinct resources: %d different titles, want %d", len(seen), len(titles))
	}
	counts := fetch(t, h, "/pdb/query/v4/event-counts", url.Values{"summarize_by": {"resource"}})
	if len(counts) != len(titles) {
		t.Fatalf("event-counts by resource: %d rows, want %d", len(counts), len(titles))
	}
}
