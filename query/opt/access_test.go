package opt_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"reportdb/internal/testcorpus"
	"reportdb/query/opt"
	"reportdb/storetest"
)

var update = flag.Bool("update", false, "rewrite testdata/access-*.txt from the current optimiser")

// TestAccessPaths records, for every conformance query and every query of
// the bench mix, the access the optimiser chooses on each backend and
// why, and compares them with testdata/access-<backend>.txt (go test
// ./query/opt -run TestAccessPaths -update rewrites them; review the
// diff). It answers "why was this request answered this way" for each of
// them, and shows in review when a change moves a query to another path.
func TestAccessPaths(t *testing.T) {
	cases := append(testcorpus.LoadCases(t), benchCases(t)...)
	var got []*opt.Access
	observed := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(w, r.WithContext(opt.WithObserver(r.Context(), func(a *opt.Access) { got = append(got, a) })))
		})
	}
	paths := map[string]map[opt.Path]int{}
	out := storetest.RecordCases(t, cases, observed, func(dialect string, c testcorpus.Case, _ *storetest.Recorder, sb *strings.Builder) {
		if paths[dialect] == nil {
			paths[dialect] = map[opt.Path]int{}
		}
		if len(got) > 0 {
			fmt.Fprintf(sb, "%s (%s %s)\n", c.ID, c.Request.Method, c.Request.Target)
		}
		for _, a := range got {
			fmt.Fprintf(sb, "  %s\n", a)
			for _, r := range a.Reasons {
				fmt.Fprintf(sb, "    %s\n", r)
			}
			paths[dialect][a.Path]++
		}
		got = got[:0]
	})
	for name, text := range out {
		// the paths are taken by these queries (SQLite keeps no day
		// partitions, so has no narrowed or keyed path, and no copies of
		// the latest reports; the day rollup answers groupings no rollup
		// covers, none of these)
		want := []opt.Path{opt.Rollup, opt.StatusCounts, opt.Scan, opt.LatestRollup, opt.Distinct, opt.StoredCounts}
		if name == "postgres" {
			want = append(want, opt.LatestCopies, opt.Narrowed, opt.Keyed)
		}
		for _, p := range want {
			if paths[name][p] == 0 {
				t.Errorf("%s: no query took path %s: %v", name, p, paths[name])
			}
		}
		storetest.Golden(t, filepath.Join("testdata", "access-"+name+".txt"), text, *update)
	}
}

// benchCases are the 16 queries of the bench mix (../shared/bench/queries.py),
// with fixed values: the access depends on their shape.
func benchCases(t *testing.T) []testcorpus.Case {
	const (
		v4   = "/pdb/query/v4"
		node = "node-0001.example.com"
		hash = "0b7e2bcd5c6f1a1e3c9d2e4f5a6b7c8d9e0f1a2b"
		end  = "2026-01-14T12:00:00Z"
		hour = "2026-01-14T11:00:00Z"
		day  = "2026-01-13T12:00:00Z"
	)
	latest := []any{"=", "latest_report?", true}
	q := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	type req struct {
		name, path string
		params     url.Values
	}
	reqs := []req{
		{"pb_index_event_counts", v4 + "/event-counts", url.Values{"query": {q(latest)}, "summarize_by": {"certname"}}},
		{"aggregate_event_counts", v4 + "/aggregate-event-counts", url.Values{"query": {q(latest)}, "summarize_by": {"certname"}}},
		{"node_latest_events", v4 + "/events", url.Values{"query": {q([]any{"and", []any{"=", "certname", node}, latest})}}},
		{"report_events_by_hash", v4 + "/events", url.Values{"query": {q([]any{"=", "report", hash})}}},
		{"report_by_hash", v4 + "/reports", url.Values{"query": {q([]any{"and", []any{"=", "certname", node},
			[]any{"or", []any{"=", "hash", hash}, []any{"=", "configuration_version", hash}}})}}},
		{"failures_last_hour", v4 + "/events", url.Values{"query": {q([]any{"and", []any{"=", "status", "failure"},
			[]any{">", "timestamp", hour}, []any{"<=", "timestamp", end}})},
			"order_by": {`[{"field":"timestamp","order":"desc"}]`}, "limit": {"100"}}},
		{"regex_resource_title", v4 + "/events", url.Values{"query": {q([]any{"~", "resource_title", "^/etc/nginx/"})},
			"order_by": {`[{"field":"timestamp","order":"desc"}]`}, "limit": {"1000"}}},
		{"node_reports_recent", v4 + "/reports", url.Values{"query": {q([]any{"=", "certname", node})},
			"order_by": {`[{"field":"start_time","order":"desc"}]`}, "limit": {"10"}}},
		{"reports_page_first", v4 + "/reports", url.Values{"order_by": {`[{"field":"end_time","order":"desc"}]`},
			"limit": {"100"}, "include_total": {"true"}, "offset": {"0"}}},
		{"reports_page_deep", v4 + "/reports", url.Values{"order_by": {`[{"field":"end_time","order":"desc"}]`},
			"limit": {"100"}, "include_total": {"true"}, "offset": {"10000"}}},
		{"distinct_resources_day", v4 + "/event-counts", url.Values{"query": {q([]any{"and", []any{">", "timestamp", day},
			[]any{"<=", "timestamp", end}})}, "summarize_by": {"resource"}, "distinct_resources": {"true"},
			"distinct_start_time": {day}, "distinct_end_time": {end}}},
		{"latest_events_by_status", v4 + "/events", url.Values{"query": {q([]any{"extract",
			[]any{[]any{"function", "count"}, "status"}, latest, []any{"group_by", "status"}})}}},
		{"pb_daily_chart_8q", v4 + "/reports", url.Values{"query": {q([]any{"extract", []any{[]any{"function", "count"}, "status"},
			[]any{"and", []any{">=", "producer_timestamp", "2026-01-13T00:00:00Z"}, []any{"<", "producer_timestamp", "2026-01-14T00:00:00Z"}},
			[]any{"group_by", "status"}})}}},
		{"reports_per_day", v4 + "/reports", url.Values{"query": {q([]any{"extract",
			[]any{[]any{"function", "count"}, []any{"function", "to_string", "producer_timestamp", "YYYY-MM-DD"}},
			[]any{"and", []any{">=", "producer_timestamp", "2026-01-01T00:00:00Z"}, []any{"<", "producer_timestamp", "2026-01-15T00:00:00Z"}},
			[]any{"group_by", []any{"function", "to_string", "producer_timestamp", "YYYY-MM-DD"}}})}}},
		{"pql_latest_failed_reports", v4, url.Values{"query": {`reports[certname, hash, status, producer_timestamp] { latest_report? = true and status = "failed" order by certname }`}}},
		{"pql_events_by_type_day", v4, url.Values{"query": {`events[resource_type, count()] { timestamp > "` + day + `" and status = "success" group by resource_type }`}}},
	}
	var cs []testcorpus.Case
	for _, r := range reqs {
		endpoint := strings.TrimPrefix(r.path, "/pdb/query/v4")
		endpoint = strings.TrimPrefix(endpoint, "/")
		if endpoint == "" {
			endpoint = "root"
		}
		c := testcorpus.Case{ID: "bench." + r.name, Endpoint: endpoint}
		c.Request.Method = http.MethodGet
		c.Request.Target = r.path + "?" + r.params.Encode()
		cs = append(cs, c)
	}
	return cs
}
