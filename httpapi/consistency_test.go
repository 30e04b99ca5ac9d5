package httpapi_test

import (
	"strings"
	"testing"

	"reportdb/httpapi"
	"reportdb/store"
)

// TestConsistencyHeader: X-Reportdb-Consistency takes read-your-writes,
// primary or any; anything else is a 400 that names the choices. The
// embedded store has no database servers: no reportdb-databases service.
func TestConsistencyHeader(t *testing.T) {
	h, _ := metaServer(t, httpapi.Config{})
	for _, v := range []string{"read-your-writes", "primary", "any"} {
		if r := do(t, h, "GET", "/pdb/query/v4/nodes", nil, map[string]string{store.ConsistencyHeader: v}); r.code != 200 {
			t.Errorf("%s: %d %s", v, r.code, r.body)
		}
	}
	r := do(t, h, "GET", "/pdb/query/v4/nodes", nil, map[string]string{store.ConsistencyHeader: "strong"})
	if r.code != 400 || !strings.Contains(r.body, "must be read-your-writes, primary or any") {
		t.Errorf("bad value: %d %s", r.code, r.body)
	}
	if r := do(t, h, "GET", "/status/v1/services/reportdb-databases", nil, nil); r.code != 404 {
		t.Errorf("reportdb-databases on the embedded store: %d %s", r.code, r.body)
	}
	if r := do(t, h, "GET", "/status/v1/services", nil, nil); strings.Contains(r.body, "reportdb-databases") {
		t.Errorf("services on the embedded store: %s", r.body)
	}
}
