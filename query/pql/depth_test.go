package pql

import (
	"errors"
	"strings"
	"testing"
)

// A 100,000-deep query is an error with a clear message, not a stack
// overflow or a misleading "expected ..." parse error.
func TestDeepNesting(t *testing.T) {
	n := 100000
	for name, q := range map[string]string{
		"parentheses": "reports { " + strings.Repeat("(", n) + `certname = "a"` + strings.Repeat(")", n) + " }",
		"negations":   "reports { " + strings.Repeat("!", n) + `certname = "a" }`,
		"subqueries":  strings.Repeat("reports { certname in reports[certname] { ", n/10) + `certname = "a"` + strings.Repeat(" } }", n/10),
	} {
		_, err := Parse(q)
		var de *DepthError
		if !errors.As(err, &de) || !strings.Contains(err.Error(), "nested too deeply") {
			t.Errorf("%s: %v", name, err)
		}
	}
	// ordinary nesting still parses
	if _, err := Parse("reports { " + strings.Repeat("(", 50) + `certname = "a"` + strings.Repeat(")", 50) + " }"); err != nil {
		t.Fatal(err)
	}
}
