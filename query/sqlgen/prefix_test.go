package sqlgen

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestRegexPrefix(t *testing.T) {
	cases := map[string]string{
		"^/etc/nginx/":       "/etc/nginx/",
		`^/etc/nginx\.conf$`: "/etc/nginx.conf",
		"^abc*":              "ab",
		"^ab?c":              "a",
		"^a{2}":              "",
		"^foo|bar":           "",
		"^(foo|bar)":         "",
		"^web[0-9]":          "web",
		"foo":                "",
		"(?i)^web":           "",
		`^C:\\`:              `C:\`,
		`^\d+`:               "",
		"^ünï.*":             "ünï",
		"^ü?":                "",
	}
	for in, want := range cases {
		if got, _ := regexPrefix(in); got != want {
			t.Errorf("regexPrefix(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRegexPrefixExact(t *testing.T) {
	cases := []struct {
		in    string
		pre   string
		exact bool
	}{
		{"^/etc/nginx/", "/etc/nginx/", true},
		{`^C:\\`, `C:\`, true},
		{`^a\.b`, "a.b", true},
		{"^ünï", "ünï", true},
		{`^/etc/nginx\.conf$`, "/etc/nginx.conf", false}, // the $ still needs the regex
		{"^web[0-9]", "web", false},
		{"^abc*", "ab", false},
		{"^a.", "a", false},
		{`^a\`, "a", false}, // a trailing backslash is an error for the regex to report
		{"^", "", false},
		{"^\xff", "\xff", false}, // no string sorts after every "\xff..." one: no upper bound
		{"/etc", "", false},
	}
	for _, c := range cases {
		pre, exact := regexPrefix(c.in)
		if pre != c.pre || exact != c.exact {
			t.Errorf("regexPrefix(%q) = %q, %v; want %q, %v", c.in, pre, exact, c.pre, c.exact)
		}
	}
}

// FuzzRegexPrefix: every string the (Go-compiled) pattern matches starts
// with the extracted prefix and sorts below prefixEnd.
func FuzzRegexPrefix(f *testing.F) {
	f.Add("^/etc/nginx/", "/etc/nginx/sites")
	f.Add("^ab*c", "ac")
	f.Add(`^a\.b`, "a.b")
	f.Add(`^C:\\`, `C:\x`)
	f.Fuzz(func(t *testing.T, pattern, s string) {
		re, err := regexp.Compile(pattern)
		if err != nil || !utf8.ValidString(s) {
			return
		}
		// an exact prefix decides the match on its own
		if p, exact := regexPrefix(pattern); exact {
			inRange := s >= p && s < prefixEnd(p)
			if inRange != re.MatchString(s) || inRange != strings.HasPrefix(s, p) {
				t.Fatalf("%q on %q: regex %v, range [%q, %q) %v", pattern, s, re.MatchString(s), p, prefixEnd(p), inRange)
			}
		}
		if !re.MatchString(s) {
			return
		}
		p, _ := regexPrefix(pattern)
		if p == "" {
			return
		}
		if len(s) < len(p) || s[:len(p)] != p {
			t.Fatalf("%q matches %q but prefix is %q", pattern, s, p)
		}
		if end := prefixEnd(p); end != "" && !(s < end) {
			t.Fatalf("%q: %q not below %q", pattern, s, end)
		}
	})
}
