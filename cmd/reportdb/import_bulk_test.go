package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"path/filepath"

	"reportdb/internal/pgtest"
	"reportdb/internal/testcorpus"
	"reportdb/jsonv"
	"reportdb/postgres"
	"reportdb/storetest"
)

// TestImportBulkPostgresMatchesServer: the bulk path (import --database
// with several writers and batches) stores exactly what submitting the same
// reports through POST /pdb/cmd/v1 stores: the answers of the v4 queries
// (reports with their metrics and logs, events, event counts, nodes) are
// identical, but for the receive times. A duplicate line is a duplicate and
// a bad line is rejected with its line number without stopping the rest.
//
// The rollups are compacted every millisecond during the import, so that
// compaction runs between and beside the batches: the answers must not
// change.
func TestImportBulkPostgresMatchesServer(t *testing.T) {
	defer func(d time.Duration) { importCompactInterval = d }(importCompactInterval)
	importCompactInterval = time.Millisecond
	m, _ := testcorpus.LoadManifest(t)
	var lines bytes.Buffer
	var payloads [][]byte
	for _, s := range m.Submissions {
		p := []byte(jsonv.Compact(corpusDoc(t, s.Wire8)))
		payloads = append(payloads, p)
		lines.Write(p)
		lines.WriteByte('\n')
		if len(payloads) == 10 {
			lines.WriteString(`{"certname": "x", "report_format": 12}` + "\n") // line 11: invalid
			lines.Write(payloads[0])                                           // line 12: a duplicate
			lines.WriteByte('\n')
		}
	}
	path := filepath.Join(t.TempDir(), "fleet.jsonl.gz")
	writeFile(t, path, gz(t, lines.Bytes()))

	imported := pgtest.NewDatabase(t)
	code, out, stderr := importRun(t, "--database", imported, "--writers", "3", "--max-batch", "16", path)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (one line rejected)\n%s\n%s", code, out, stderr)
	}
	wantCounts(t, out, -1, -1, 1, 0)
	if s, d := summaryCount(t, out, "stored"), summaryCount(t, out, "duplicates"); s+d != len(payloads)+1 || d < 1 {
		t.Errorf("stored %d + duplicates %d, want %d lines with the duplicate", s, d, len(payloads)+1)
	}
	if !strings.Contains(out, path+":11: Invalid report") {
		t.Errorf("line 11 not rejected by number:\n%s", out)
	}
	if !strings.Contains(stderr, "vacuumed and analyzed ") {
		t.Errorf("no VACUUM (ANALYZE) at the end of the import:\n%s", stderr)
	}
	// the last steps come after the summary: they say when they start
	// and when they are done
	if i, j, k := strings.Index(stderr, "finishing the import: "), strings.Index(stderr, "vacuumed and analyzed "),
		strings.LastIndex(stderr, "import finished (the last steps took "); i < 0 || j < i || k < j {
		t.Errorf("the last steps are not announced before and after (at %d, %d, %d):\n%s", i, j, k, stderr)
	}

	submitted := pgtest.NewDatabase(t)
	sdb, err := postgres.Open(context.Background(), submitted, postgres.Options{MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	sh := storetest.NewServer(t, sdb)
	for i, p := range payloads {
		req := httptest.NewRequest("POST", "/pdb/cmd/v1?"+url.Values{"command": {"store_report"}, "version": {"8"},
			"certname": {m.Submissions[i].Certname}}.Encode(), bytes.NewReader(p))
		rec := httptest.NewRecorder()
		sh.ServeHTTP(rec, req)
		if rec.Code != 200 {
			t.Fatalf("submit %d: %d %s", i, rec.Code, rec.Body.String())
		}
	}

	idb, err := postgres.Open(context.Background(), imported, postgres.Options{MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer idb.Close()
	ih := storetest.NewServer(t, idb)
	for _, q := range []struct{ path, query, order string }{
		{"/pdb/query/v4/reports", `["=","type","any"]`, `[{"field":"hash"}]`},
		{"/pdb/query/v4/events", `["~","certname",""]`, `[{"field":"report"},{"field":"resource_type"},{"field":"resource_title"},{"field":"property"}]`},
		{"/pdb/query/v4/event-counts", `["~","certname",""]`, `[{"field":"certname"}]`},
		{"/pdb/query/v4/nodes", `["~","certname",""]`, `[{"field":"certname"}]`},
	} {
		want := answer(t, sh, q.path, q.query, q.order)
		got := answer(t, ih, q.path, q.query, q.order)
		if len(want) == 0 {
			t.Fatalf("%s: no rows", q.path)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the imported database answers differently (%d rows against %d)", q.path, len(got), len(want))
			for i := range min(len(got), len(want)) {
				if !reflect.DeepEqual(got[i], want[i]) {
					for k := range want[i] {
						if !reflect.DeepEqual(got[i][k], want[i][k]) {
							t.Errorf("row %d, %s: imported %v, submitted %v", i, k, got[i][k], want[i][k])
						}
					}
					break
				}
			}
		}
	}
}

// answer runs a query and returns its rows as a multiset: the receive
// times (the time each path received the report) dropped, the rows and the
// embedded lists (a report's resource_events, metrics, logs) sorted. The
// order of equal sort keys, and of a report's events, follows the rows'
// physical order, which depends on how the writes were batched (as it does
// between two servers under different loads), not on what was stored.
func answer(t *testing.T, h http.Handler, path, query, order string) []map[string]any {
	t.Helper()
	q := url.Values{"query": {query}}
	if path == "/pdb/query/v4/event-counts" {
		q.Set("summarize_by", "certname")
	}
	q.Set("order_by", order)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", path+"?"+q.Encode(), nil))
	if rec.Code != 200 {
		t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body.String())
	}
	var rows []map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &rows); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		for k, v := range r {
			if strings.Contains(k, "receive_time") {
				delete(r, k)
			}
			if o, ok := v.(map[string]any); ok {
				if data, ok := o["data"].([]any); ok {
					sortByJSON(data)
				}
			}
		}
	}
	sortByJSON(rows)
	return rows
}

func sortByJSON[T any](xs []T) {
	key := func(x T) string { b, _ := json.Marshal(x); return string(b) }
	sort.SliceStable(xs, func(i, j int) bool { return key(xs[i]) < key(xs[j]) })
}
