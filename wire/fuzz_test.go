package wire_test

import (
	"path/filepath"
	"regexp"
	"testing"

	"reportdb/internal/testcorpus"
	"reportdb/jsonv"
	"reportdb/wire"
)

var hexHash = regexp.MustCompile(`^[0-9a-f]{40}$`)

// FuzzDecode: any payload either decodes into a consistent report or is
// rejected with an error; nothing panics.
func FuzzDecode(f *testing.F) {
	m, dir := testcorpus.LoadManifest(f)
	for _, i := range []int{0, 3, 7} {
		f.Add(8, testcorpus.ReadFile(f, filepath.Join(dir, m.Submissions[i].Wire8)))
	}
	f.Add(5, []byte(`{"certname":"a","puppet_version":"4","report_format":4,"configuration_version":"1","start_time":"2024-03-01T10:00:00Z","end_time":"2024-03-01T10:00:01Z","producer_timestamp":"2024-03-01T10:00:02Z","transaction_uuid":null,"noop":false,"environment":"e","status":"changed","metrics":null,"logs":null,"resource_events":[{"resource_type":"File","resource_title":"/a","file":"f","line":1,"containment_path":["Stage[main]"],"timestamp":"2024-03-01T10:00:00Z","status":"skipped","property":null,"new_value":null,"old_value":null,"message":null}]}`))
	f.Fuzz(func(t *testing.T, version int, payload []byte) {
		v, err := jsonv.Parse(payload)
		if err != nil {
			return
		}
		r, err := wire.Decode(version, v, 0)
		if err != nil {
			return
		}
		if !hexHash.MatchString(r.Hash) {
			t.Fatalf("bad hash %q", r.Hash)
		}
		if r.Type != "agent" && r.Type != "plan" {
			t.Fatalf("bad type %q", r.Type)
		}
		for _, e := range r.Events {
			if _, err := jsonv.Parse([]byte(e.NewValue)); err != nil {
				t.Fatalf("new_value text %q is not JSON", e.NewValue)
			}
		}
		if rendered := wire.RenderResourceEvents(r.Events); rendered != nil {
			if _, err := jsonv.Parse(rendered); err != nil {
				t.Fatalf("resource_events blob is not JSON: %v", err)
			}
		}
	})
}
