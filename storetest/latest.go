package storetest

import (
	"encoding/json"
	"fmt"
	"net/url"
	"testing"

	"reportdb/internal/conformance"
)

// RunLatestOfNode checks the planner's narrowing of latest_report? beside
// certname = X (only X's row of certnames is read) against the same
// filter written so that it is not narrowed (certname in [X]), for every
// node of the corpus, latest true and false, on events, event-counts and
// reports.
func RunLatestOfNode(t *testing.T, open Opener) {
	h := NewServer(t, open(t))
	conformance.LoadCorpus(t, h)
	get := func(path, q string, extra url.Values) []map[string]any {
		t.Helper()
		v := url.Values{"query": {q}}
		for k, vs := range extra {
			v[k] = vs
		}
		return fetch(t, h, path, v)
	}
	var nodes []string
	for _, r := range get("/pdb/query/v4/nodes", `["~","certname",""]`, nil) {
		nodes = append(nodes, r["certname"].(string))
	}
	if len(nodes) < 10 {
		t.Fatalf("the corpus has %d nodes", len(nodes))
	}
	latestRows := 0
	for _, node := range nodes {
		for _, latest := range []bool{true, false} {
			n, _ := json.Marshal(node)
			narrowed := fmt.Sprintf(`["and",["=","certname",%s],["=","latest_report?",%v]]`, n, latest)
			general := fmt.Sprintf(`["and",["in","certname",["array",[%s]]],["=","latest_report?",%v]]`, n, latest)
			for _, c := range []struct {
				path  string
				extra url.Values
			}{
				{"/pdb/query/v4/events", nil},
				{"/pdb/query/v4/reports", nil},
				{"/pdb/query/v4/event-counts", url.Values{"summarize_by": {"resource"}}},
			} {
				a := canonical(get(c.path, narrowed, c.extra))
				b := canonical(get(c.path, general, c.extra))
				if fmt.Sprint(a) != fmt.Sprint(b) {
					t.Errorf("%s %s: %d rows, %d with certname in [X]\n%v\n%v", c.path, narrowed, len(a), len(b), a, b)
				}
				if latest && c.path == "/pdb/query/v4/reports" {
					latestRows += len(a)
				}
			}
		}
	}
	if latestRows != len(nodes) {
		t.Errorf("latest reports of the corpus's %d nodes: %d", len(nodes), latestRows)
	}
}
