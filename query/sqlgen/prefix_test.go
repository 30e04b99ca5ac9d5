package sqlgen

import (
	"regexp"
	"testing"
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
		if got := regexPrefix(in); got != want {
			t.Errorf("regexPrefix(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzRegexPrefix: every string the (Go-compiled) pattern matches starts
// with the extracted prefix and sorts below prefixEnd.
func FuzzRegexPrefix(f *testing.F) {
	f.Add("^/etc/nginx/", "/etc/nginx/sites")
	f.Add("^ab*c", "ac")
	f.Add(`^a\.b`, "a.b")
	f.Fuzz(func(t *testing.T, pattern, s string) {
		re, err := regexp.Compile(pattern)
		if err != nil || !re.MatchString(s) {
			return
		}
		p := regexPrefix(pattern)
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
