package postgres_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"reportdb/storetest"
)

// jsonAggEventsSQL renders reports' resource_events.data in PostgreSQL as
// PuppetDB 7.12.1 answers it (SPEC.md 17.2, from a live PuppetDB): json_agg
// of row_to_json objects, ", " between them. (The statement reportdb used
// before the events were read as records, json_agg(ev) over the subquery's
// rows, put ", \n " between them: json_agg adds a newline after the comma
// between composite values, not between json ones.)
const jsonAggEventsSQL = `SELECT r.hash, (SELECT json_agg(row_to_json(ev))::text FROM (SELECT e.status,
 (timestamptz 'epoch' + e.timestamp * interval '1 millisecond') AS timestamp,
 e.resource_type, e.resource_title, e.property, NULL::boolean AS corrective_change,
 e.new_value::jsonb AS new_value, e.old_value::jsonb AS old_value, e.message, e.file, e.line,
 e.containment_path, e.containing_class, e.name
 FROM resource_events e WHERE e.report_id = r.id) ev) FROM reports r`

// TestReportEventsRenderLikeJSONAgg: a report's resource_events.data, read
// as an array of records and rendered by the server, is byte for byte what
// PostgreSQL's json_agg renders from the same rows (the statement the
// server used before, and PuppetDB's): for random events whose values are
// JSON of every kind (numbers in exponent and long forms, -0, escapes and
// non-ASCII text, nested objects whose keys jsonb reorders, null), optional
// fields present and absent, containment paths null, empty and long, and
// reports without events. The events of a report keep their order. Over
// connections whose results are text (pgx's simple_protocol and exec
// modes, chosen in the database URL), the answers are the same bytes.
func TestReportEventsRenderLikeJSONAgg(t *testing.T) {
	u, _, h := newServer(t)
	ctx := context.Background()
	rng := rand.New(rand.NewSource(30))
	values := []string{`"file"`, `"absent"`, `""`, `null`, `true`, `false`, `0`, `-0`, `1.0`, `1.50`, `1e2`, `1E-7`,
		`-2.5e+3`, `12345678901234567890123`, `0.1e1`, `3.14159265358979323846`, `"a\"b\\c\n\t\u0001"`,
		`"\u00e9t\u00e9 ✓ 😀"`, `"\u2028/\/"`, `[]`, `{}`, `[1,"two",[3.0,{"k":null}]]`,
		`{"bb":1,"a":2,"ccc":{"z":[],"y":"x"}}`, `{"key with space":"v","":0}`, `"mode 0644"`, `["1","2"]`}
	strs := []string{"", "plain", "with \"quotes\" and \\backslash", "tab\there", "é✓😀", "line\nbreak", "<html>&amp;"}
	optStr := func() string {
		if rng.Intn(3) == 0 {
			return "null"
		}
		b, _ := json.Marshal(strs[rng.Intn(len(strs))])
		return string(b)
	}
	base := time.Now().UTC().Truncate(time.Hour).Add(-48 * time.Hour).UnixMilli()
	ts := func(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z") }
	var hashes []string
	for i := 0; i < 40; i++ {
		start := base + rng.Int63n(40*3_600_000)
		var resources []string
		for j, n := 0, rng.Intn(5); j < n; j++ {
			var events []string
			for k, m := 0, 1+rng.Intn(3); k < m; k++ {
				// milliseconds of every form (.000, .100, .120, .123)
				et := start + rng.Int63n(60_000)
				if rng.Intn(2) == 0 {
					et -= et % 1000
				}
				events = append(events, fmt.Sprintf(`{"status":%q,"timestamp":%q,"property":%s,"new_value":%s,"old_value":%s,"message":%s,"corrective_change":null}`,
					[]string{"success", "failure", "noop"}[rng.Intn(3)], ts(et), optStr(),
					values[rng.Intn(len(values))], values[rng.Intn(len(values))], optStr()))
			}
			path := "null"
			switch rng.Intn(3) {
			case 1:
				path = `[]`
			case 2:
				path = `["Stage[main]","Main","Class[Ünïcode \"x\"]","File[/etc/x]"]`
			}
			line := "null"
			if rng.Intn(2) == 0 {
				line = fmt.Sprint(rng.Intn(3000))
			}
			title, _ := json.Marshal(fmt.Sprintf("/etc/%d/%s", j, strs[rng.Intn(len(strs))]))
			resources = append(resources, fmt.Sprintf(`{"skipped":false,"timestamp":%q,"resource_type":"File","resource_title":%s,
				"file":%s,"line":%s,"containment_path":%s,"corrective_change":null,"events":[%s]}`,
				ts(start), title, optStr(), line, path, strings.Join(events, ",")))
		}
		certname := fmt.Sprintf("n%d.example.com", rng.Intn(6))
		body := fmt.Sprintf(`{"certname":%q,"puppet_version":"7.23.0","report_format":12,"configuration_version":"%d",
			"start_time":%q,"end_time":%q,"producer_timestamp":%q,"producer":"p","corrective_change":null,"noop":false,
			"noop_pending":false,"transaction_uuid":null,"catalog_uuid":null,"code_id":null,"cached_catalog_status":null,
			"environment":"production","status":"changed","metrics":[],"logs":[],"resources":[%s]}`,
			certname, i, ts(start), ts(start+60_000), ts(start+61_000), strings.Join(resources, ","))
		submit(t, h, certname, []byte(body))
	}

	// what json_agg renders, per report hash
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "SET TIME ZONE 'UTC'"); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(ctx, jsonAggEventsSQL)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]*string{}
	for rows.Next() {
		var hash string
		var data *string
		if err := rows.Scan(&hash, &data); err != nil {
			t.Fatal(err)
		}
		want[hash] = data
		hashes = append(hashes, hash)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(want) != 40 {
		t.Fatalf("%d reports stored, want 40", len(want))
	}

	// what the server answers
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/pdb/query/v4/reports", nil))
	if rec.Code != 200 {
		t.Fatalf("reports: %d %s", rec.Code, rec.Body.String())
	}
	var got []struct {
		Hash           string `json:"hash"`
		ResourceEvents struct {
			Data json.RawMessage `json:"data"`
		} `json:"resource_events"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d reports answered, want %d", len(got), len(want))
	}
	withEvents, without := 0, 0
	for _, r := range got {
		w, ok := want[r.Hash]
		if !ok {
			t.Fatalf("report %s answered, not stored", r.Hash)
		}
		if w == nil {
			without++
			if string(r.ResourceEvents.Data) != "null" {
				t.Errorf("report %s without events: data %s, want null", r.Hash, r.ResourceEvents.Data)
			}
			continue
		}
		withEvents++
		if !bytes.Equal(r.ResourceEvents.Data, []byte(*w)) {
			t.Errorf("report %s events:\n got %s\nwant %s", r.Hash, r.ResourceEvents.Data, *w)
		}
	}
	if withEvents < 20 || without == 0 {
		t.Fatalf("%d reports with events, %d without: the data does not cover both", withEvents, without)
	}

	// A database URL may choose pgx's text-result modes (a pooler in
	// transaction mode needs one): the events are then built by
	// PostgreSQL, and every answer is the same to the byte.
	get := func(h http.Handler, target string) []byte {
		t.Helper()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
		if rec.Code != 200 {
			t.Fatalf("GET %s: %d %s", target, rec.Code, rec.Body.String())
		}
		return rec.Body.Bytes()
	}
	targets := []string{"/pdb/query/v4/reports?order_by=" + url.QueryEscape(`[{"field":"hash","order":"asc"}]`),
		"/pdb/query/v4?query=" + url.QueryEscape(`reports[hash, resource_events] { latest_report? = true order by hash }`)}
	for _, mode := range []string{"simple_protocol", "exec"} {
		sep := "?"
		if strings.Contains(u, "?") {
			sep = "&"
		}
		th := storetest.NewServer(t, openURL(t, u+sep+"default_query_exec_mode="+mode))
		for _, target := range targets {
			if a, b := get(h, target), get(th, target); !bytes.Equal(a, b) {
				t.Errorf("%s with default_query_exec_mode=%s:\n got %.300s\nwant %.300s", target, mode, b, a)
			}
		}
	}
}
