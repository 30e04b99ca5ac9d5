package config

import (
	"bytes"
	"strings"
	"testing"
)

// TestAnalyzeRows: the background ANALYZE threshold has its default, is
// set by the environment, and refuses negative values.
func TestAnalyzeRows(t *testing.T) {
	l, err := Load("serve", nil, env(nil), &bytes.Buffer{})
	if err != nil || l.Config.AnalyzeRows != 50000 {
		t.Fatalf("default: %v %+v", err, l)
	}
	l, err = Load("serve", nil, env(map[string]string{"REPORTDB_ANALYZE_ROWS": "0"}), &bytes.Buffer{})
	if err != nil || l.Config.AnalyzeRows != 0 {
		t.Fatalf("env 0: %v %+v", err, l)
	}
	var out bytes.Buffer
	if _, err := Load("serve", []string{"--analyze-rows", "-5"}, env(nil), &out); err == nil || !strings.Contains(err.Error()+out.String(), "analyze-rows must not be negative") {
		t.Errorf("negative: %v %s", err, out.String())
	}
}
