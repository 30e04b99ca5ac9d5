package upstream_test

import (
	"bytes"
	"compress/gzip"
	"testing"

	"reportdb/upstream"
)

func TestKept(t *testing.T) {
	for name, want := range map[string]bool{
		"store report": true, "store_report": true, "STORE_REPORT": true, "deactivate node": true, "deactivate_node": true,
		"replace facts": false, "replace_catalog": false, "replace catalog inputs": false, "configure expiration": false, "": false,
	} {
		if got := upstream.Kept(name); got != want {
			t.Errorf("Kept(%q) = %v", name, got)
		}
	}
}

func TestEnvelopeCommand(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(`{"command":"replace facts","version":5,"payload":{}}`))
	zw.Close()
	for _, c := range []struct {
		body string
		gz   bool
		want string
		ok   bool
	}{
		{`{"command":"deactivate node","version":3,"payload":{"certname":"a"}}`, false, "deactivate node", true},
		{gz.String(), true, "replace facts", true},
		{gz.String(), false, "", false}, // compressed, not said so
		{`{"command":"store report"`, false, "", false},
		{`["store report"]`, false, "", false},
		{`{"command":3}`, false, "", false},
		{`{"version":3}`, false, "", false},
		{`{"command":"x"}`, true, "", false}, // said compressed, is not
	} {
		got, ok := upstream.EnvelopeCommand([]byte(c.body), c.gz, 1<<20)
		if got != c.want || ok != c.ok {
			t.Errorf("%.40q gz=%v: %q %v, want %q %v", c.body, c.gz, got, ok, c.want, c.ok)
		}
	}
}
