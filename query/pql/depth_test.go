package pql

import (
	"errors"
	"runtime"
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

// TestLongListsLinear: a list of n values costs memory linear in n (each
// parse of a list's tail is shared, not copied), so a 4,000-value "in"
// list parses within a few megabytes instead of hundreds.
func TestLongListsLinear(t *testing.T) {
	for name, q := range map[string]string{
		"in":      "reports{certname in ['" + strings.Repeat("a', '", 4000) + "b']}",
		"extract": "reports[" + strings.Repeat("certname, ", 2000) + "hash]{}",
		"regexps": "events{certname ~> ['" + strings.Repeat("a', '", 2000) + "b']}",
	} {
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		_, err := Parse(q)
		runtime.ReadMemStats(&m1)
		if mb := (m1.TotalAlloc - m0.TotalAlloc) >> 20; mb > 64 {
			t.Errorf("%s (%d bytes): %d MB allocated (err %v)", name, len(q), mb, err)
		}
	}
}
