package jolokia_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"reportdb/httpapi"
	"reportdb/internal/apitest"
	"reportdb/upstream"
)

// TestUpstreamNodeCounts: in front of an upstream PuppetDB, the node
// beans count the merged nodes exactly as the API lists them (/nodes,
// node_state inactive): a node only the upstream knows is counted, a node
// the upstream deactivated is inactive.
func TestUpstreamNodeCounts(t *testing.T) {
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/pdb/query/v4/nodes" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json;charset=utf-8")
		io.WriteString(w, `[{"certname":"web03.prod.example.com","facts_timestamp":"2026-11-20T10:00:00.000Z","catalog_timestamp":null,"catalog_environment":"production","facts_environment":"production","deactivated":"2026-11-22T00:00:00.000Z","expired":null},
 {"certname":"factsonly.example.com","facts_timestamp":"2026-11-22T10:00:00.000Z","catalog_timestamp":null,"catalog_environment":null,"facts_environment":"other","deactivated":null,"expired":null}]`)
	}))
	t.Cleanup(fake.Close)
	up, err := upstream.New(upstream.Options{URL: fake.URL})
	if err != nil {
		t.Fatal(err)
	}
	h := apitest.Corpus(t, httpapi.Config{Upstream: up}).API

	listed := func(query string) int {
		r := do(t, h, "GET", "/pdb/query/v4/nodes?"+url.Values{"query": {query}}.Encode(), nil)
		var rows []any
		if err := json.Unmarshal([]byte(r.body), &rows); r.code != 200 || err != nil {
			t.Fatalf("nodes %s: %d %s", query, r.code, r.body)
		}
		return len(rows)
	}
	active, inactive := listed(`["=","node_state","active"]`), listed(`["=","node_state","inactive"]`)
	if active != 40 || inactive != 1 { // the corpus's 40, web03 deactivated upstream, factsonly added
		t.Fatalf("the API lists %d active and %d inactive nodes", active, inactive)
	}
	for bean, want := range map[string]int{"num-nodes": active, "num-active-nodes": active, "num-inactive-nodes": inactive} {
		r := do(t, h, "GET", "/metrics/v2/read/puppetlabs.puppetdb.population:name="+bean, nil)
		if !strings.Contains(r.body, fmt.Sprintf(`"value":{"Value":%d}`, want)) {
			t.Errorf("%s: %s, want %d", bean, r.body, want)
		}
	}
}
