package config

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/configuration.md from Settings")

// TestReference: docs/configuration.md is what Reference makes of the
// settings, so a setting added, renamed or re-documented in the code
// without regenerating the page fails here.
func TestReference(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "configuration.md")
	want := Reference()
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the settings in internal/config: run go test ./internal/config -run Reference -update", path)
	}
	for _, s := range Settings {
		if !bytes.Contains(got, []byte("`"+s.Env()+"`")) {
			t.Errorf("%s does not document %s", path, s.Env())
		}
	}
}
