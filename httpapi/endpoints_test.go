package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"reportdb/httpapi"
	"reportdb/internal/apitest"
)

func corpusServer(t *testing.T, cfg httpapi.Config) http.Handler {
	return apitest.Corpus(t, cfg).API
}

func TestV3Paths(t *testing.T) {
	h := corpusServer(t, httpapi.Config{})
	q := url.Values{"query": {`["=","status","failure"]`}, "order-by": {`[{"field":"timestamp","order":"desc"}]`},
		"include-total": {"true"}, "limit": {"2"}}
	r := do(t, h, "GET", "/v3/events?"+q.Encode(), nil, nil)
	if r.code != 200 || r.h.Get("X-Records") != "18" {
		t.Fatalf("/v3/events: %d X-Records=%q %s", r.code, r.h.Get("X-Records"), r.body)
	}
	var rows []map[string]any
	json.Unmarshal([]byte(r.body), &rows)
	if len(rows) != 2 || rows[0]["timestamp"].(string) < rows[1]["timestamp"].(string) {
		t.Fatalf("order-by not applied: %v", rows)
	}
	r = do(t, h, "GET", "/v3/event-counts?summarize-by=certname&counts-filter="+url.QueryEscape(`[">","failures",0]`), nil, nil)
	if r.code != 200 || !strings.Contains(r.body, `"subject_type":"certname"`) {
		t.Fatalf("/v3/event-counts: %d %s", r.code, r.body)
	}
	for target, want := range map[string]string{
		"/v3/events?order_by=" + url.QueryEscape(`[{"field":"timestamp"}]`):           "Unsupported query parameter 'order_by'",
		"/v3/reports?include_total=true":                                              "Unsupported query parameter 'include_total'",
		"/pdb/query/v4/events?order-by=" + url.QueryEscape(`[{"field":"timestamp"}]`): "Unsupported query parameter 'order-by'",
		"/v3/aggregate-event-counts?summarize_by=certname":                            "Unsupported query parameter 'summarize_by'",
	} {
		if r := do(t, h, "GET", target, nil, nil); r.code != 400 || r.body != want {
			t.Errorf("%s: %d %q, want 400 %q", target, r.code, r.body, want)
		}
	}
}

func TestNodesAndStatus(t *testing.T) {
	h := corpusServer(t, httpapi.Config{})
	r := do(t, h, "GET", "/pdb/query/v4/nodes", nil, nil)
	var nodes []map[string]any
	if err := json.Unmarshal([]byte(r.body), &nodes); err != nil || len(nodes) != 40 {
		t.Fatalf("nodes: %d rows, %v", len(nodes), err)
	}
	r = do(t, h, "GET", "/pdb/query/v4/nodes/web03.prod.example.com", nil, nil)
	if r.code != 200 || !strings.HasPrefix(r.body, "{\n  \"deactivated\" : null,\n  \"latest_report_hash\" : \"") {
		t.Fatalf("node: %d %q", r.code, r.body)
	}
	var node map[string]any
	json.Unmarshal([]byte(r.body), &node)
	latest := do(t, h, "GET", "/pdb/query/v4/reports?"+url.Values{"query": {`["and",["=","certname","web03.prod.example.com"],["=","latest_report?",true]]`}}.Encode(), nil, nil)
	if !strings.Contains(latest.body, node["latest_report_hash"].(string)) {
		t.Fatalf("node's latest_report_hash %v is not its latest report", node["latest_report_hash"])
	}
	if r := do(t, h, "GET", "/pdb/query/v4/nodes/nope", nil, nil); r.code != 404 || r.body != "{\n  \"error\" : \"No information is known about node nope\"\n}" {
		t.Errorf("unknown node: %d %q", r.code, r.body)
	}
	// node-puppetdbquery sends select_nodes subqueries over report-derived node fields
	sub := `["in","certname",["extract","certname",["select_nodes",["=","latest_report_status","failed"]]]]`
	r = do(t, h, "GET", "/pdb/query/v4/reports?"+url.Values{"query": {sub}}.Encode(), nil, nil)
	if r.code != 200 || !strings.Contains(r.body, `"hash"`) {
		t.Errorf("select_nodes subquery: %d %.200s", r.code, r.body)
	}
	r = do(t, h, "GET", "/status/v1/services/puppetdb-status", nil, nil)
	if r.code != 200 || !strings.Contains(r.body, `"state":"running"`) {
		t.Errorf("status: %d %s", r.code, r.body)
	}
	if r := do(t, h, "GET", "/status/v1/services/nope", nil, nil); r.code != 404 {
		t.Errorf("unknown status service: %d", r.code)
	}
}

func TestCorrectiveCounts(t *testing.T) {
	plain := corpusServer(t, httpapi.Config{})
	pe := corpusServer(t, httpapi.Config{CorrectiveCounts: true})
	type counts struct {
		Successes            *int `json:"successes"`
		Noops                *int `json:"noops"`
		IntentionalSuccesses *int `json:"intentional_successes"`
		CorrectiveSuccesses  *int `json:"corrective_successes"`
		IntentionalNoops     *int `json:"intentional_noops"`
		CorrectiveNoops      *int `json:"corrective_noops"`
	}
	get := func(h http.Handler, extra string) []counts {
		r := do(t, h, "GET", "/pdb/query/v4/event-counts?summarize_by=certname"+extra, nil, nil)
		var rows []counts
		if err := json.Unmarshal([]byte(r.body), &rows); err != nil || r.code != 200 {
			t.Fatalf("%d %s", r.code, r.body)
		}
		return rows
	}
	a, b := get(plain, ""), get(pe, "")
	if len(a) != len(b) {
		t.Fatalf("%d vs %d subjects", len(a), len(b))
	}
	sumA, sumB, corrective := 0, 0, 0
	for i := range a {
		if a[i].IntentionalSuccesses != nil || b[i].Successes != nil {
			t.Fatal("wrong shape")
		}
		sumA += *a[i].Successes + *a[i].Noops
		sumB += *b[i].IntentionalSuccesses + *b[i].CorrectiveSuccesses + *b[i].IntentionalNoops + *b[i].CorrectiveNoops
		corrective += *b[i].CorrectiveSuccesses + *b[i].CorrectiveNoops
	}
	if sumA != sumB || corrective == 0 {
		t.Fatalf("split does not add up: %d vs %d, corrective %d", sumA, sumB, corrective)
	}
	filtered := get(pe, "&counts_filter="+url.QueryEscape(`[">","corrective_successes",0]`))
	if len(filtered) == 0 || len(filtered) >= len(b) {
		t.Fatalf("counts_filter on corrective_successes kept %d of %d", len(filtered), len(b))
	}
	if r := do(t, plain, "GET", "/pdb/query/v4/event-counts?summarize_by=certname&counts_filter="+url.QueryEscape(`[">","corrective_successes",0]`), nil, nil); r.code != 400 {
		t.Fatalf("corrective filter without the split: %d", r.code)
	}
	agg := do(t, pe, "GET", "/pdb/query/v4/aggregate-event-counts?summarize_by=certname", nil, nil)
	if !strings.Contains(agg.body, `"corrective_noops"`) {
		t.Fatalf("aggregate: %s", agg.body)
	}
}

func TestRootEndpoint(t *testing.T) {
	h := corpusServer(t, httpapi.Config{})
	for _, c := range []struct{ query, params, want string }{
		{`events[certname]{ certname = "mail01.example.com" limit 1 }`, "&limit=2", `2 rows`},
		{`events[certname]{ order by certname desc limit 1 }`, "&order_by=" + url.QueryEscape(`[{"field":"certname"}]`), `app01.prod.example.com`},
		{`["from","environments",["=","name","qa"]]`, "", `[{"name":"qa"}]`},
		{`nodes[certname]{ certname ~ "^web0[12]\\.prod" order by certname }`, "", `[{"certname":"web01.prod.example.com"},{"certname":"web02.prod.example.com"}]`},
		{`facts{ name = "os" }`, "", `[]`},
	} {
		r := do(t, h, "GET", "/pdb/query/v4?query="+url.QueryEscape(c.query)+c.params, nil, nil)
		if r.code != 200 {
			t.Errorf("%s: %d %s", c.query, r.code, r.body)
			continue
		}
		var rows []any
		json.Unmarshal([]byte(r.body), &rows)
		if strings.HasSuffix(c.want, " rows") {
			if want := c.want[:1]; len(rows) != int(want[0]-'0') {
				t.Errorf("%s: %d rows, want %s", c.query, len(rows), want)
			}
		} else if !strings.Contains(r.body, c.want) {
			t.Errorf("%s: %s, want %s", c.query, r.body, c.want)
		}
	}
	if r := do(t, h, "GET", "/pdb/query/v4?query="+url.QueryEscape(`["from","event_counts"]`), nil, nil); r.code != 400 {
		t.Errorf("event_counts entity: %d %s", r.code, r.body)
	}
}
