package storetest

import (
	"encoding/json"
	"net/url"
	"sort"
	"testing"

	"reportdb/internal/conformance"
)

// RunFormat10Equivalence loads the corpus once as wire v8 through the
// command endpoint and once as Puppet's format 10 through
// PUT /puppet/v3/report/<certname>, and checks that both stores hold the
// same reports and the same events (receive times aside).
func RunFormat10Equivalence(t *testing.T, open Opener) {
	wireH := NewServer(t, open(t))
	conformance.LoadCorpus(t, wireH)
	f10H := NewServer(t, open(t))
	conformance.LoadCorpusFormat10(t, f10H)

	order := `[{"field":"report"},{"field":"timestamp"},{"field":"resource_type"},{"field":"resource_title"},{"field":"property"},{"field":"status"},{"field":"message"}]`
	for _, c := range []struct{ path, order string }{
		{"/pdb/query/v4/events", order},
		{"/pdb/query/v4/reports", `[{"field":"hash"}]`},
	} {
		params := url.Values{"order_by": {c.order}}
		a := fetch(t, wireH, c.path, params)
		b := fetch(t, f10H, c.path, params)
		if len(a) == 0 {
			t.Fatalf("%s: no rows", c.path)
		}
		if len(a) != len(b) {
			t.Fatalf("%s: %d rows via wire v8, %d via format 10", c.path, len(a), len(b))
		}
		ja, jb := canonical(a), canonical(b)
		for i := range ja {
			if ja[i] != jb[i] {
				t.Fatalf("%s row %d differs:\nwire v8:   %s\nformat 10: %s", c.path, i, ja[i], jb[i])
			}
		}
	}
}

// canonical returns the rows as JSON, receive times left out, sorted, for
// comparing answers as multisets: an order_by may leave ties (the one
// above: two events of one resource with the same timestamp, property and
// status, such as a Pending_reboot's), whose order is the plan's.
func canonical(rows []map[string]any) []string {
	out := make([]string, len(rows))
	for i, row := range rows {
		for _, k := range []string{"report_receive_time", "receive_time"} {
			delete(row, k)
		}
		// A report's embedded resource_events are in the order the plan
		// reads them (PuppetDB: json_agg without ORDER BY), which changes
		// once the partitions have statistics: compared as a set too.
		sortEmbeddedEvents(row)
		b, _ := json.Marshal(row)
		out[i] = string(b)
	}
	sort.Strings(out)
	return out
}

func sortEmbeddedEvents(row map[string]any) {
	ev, _ := row["resource_events"].(map[string]any)
	data, _ := ev["data"].([]any)
	key := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	sort.SliceStable(data, func(i, j int) bool { return key(data[i]) < key(data[j]) })
}
