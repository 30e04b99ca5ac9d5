package pgcompat

import (
	"errors"
	"regexp"
	"strings"
	"testing"
)

func TestCompileRegexErrors(t *testing.T) {
	cases := []struct{ pattern, msg string }{
		{"*", "quantifier operand invalid"}, // conformance events.err-regex.01
		{"+a", "quantifier operand invalid"},
		{"a|*b", "quantifier operand invalid"},
		{"(*a)", "quantifier operand invalid"},
		{"a**", "quantifier operand invalid"},
		{"a+*", "quantifier operand invalid"},
		{"^*", "quantifier operand invalid"},
		{"$+", "quantifier operand invalid"},
		{`\y?`, "quantifier operand invalid"},
		{"{1}", "quantifier operand invalid"},
		{"a(?i)b", "quantifier operand invalid"}, // embedded options only at the start
		{"a(?P<n>b)", "quantifier operand invalid"},
		{"(?P<n>a)", "invalid embedded option"}, // at the start it is read as options
		{"(?", "quantifier operand invalid"},
		{"***", "quantifier operand invalid"},
		{"***x", "quantifier operand invalid"},
		{"[a", "brackets [] not balanced"},
		{"[", "brackets [] not balanced"},
		{"[]", "brackets [] not balanced"},
		{"[[:alpha:]", "brackets [] not balanced"},
		{"[[:alpha", "brackets [] not balanced"},
		{"(a", "parentheses () not balanced"},
		{"a)", "parentheses () not balanced"},
		{"((a)", "parentheses () not balanced"},
		{")", "parentheses () not balanced"},
		{`a\`, `invalid escape \ sequence`},
		{`\q`, `invalid escape \ sequence`},
		{`\z`, `invalid escape \ sequence`},
		{`\é`, `invalid escape \ sequence`},
		{`\u12`, `invalid escape \ sequence`},
		{`\x`, `invalid escape \ sequence`},
		{`\c`, `invalid escape \ sequence`},
		{`[\y]`, `invalid escape \ sequence`},
		{`[\A]`, `invalid escape \ sequence`},
		{`(a)[\1]`, `invalid escape \ sequence`},
		{`\1`, "invalid backreference number"},
		{`(a\1)`, "invalid backreference number"},
		{`(a)\2`, "invalid backreference number"},
		{`(?=(a)\1)`, "invalid backreference number"},
		{"a{1", "braces {} not balanced"},
		{"a{1,", "braces {} not balanced"},
		{"a{1,2", "braces {} not balanced"},
		{"a{256}", "invalid repetition count(s)"},
		{"a{2,1}", "invalid repetition count(s)"},
		{"a{1,x}", "invalid repetition count(s)"},
		{"a{1a}", "invalid repetition count(s)"},
		{"[z-a]", "invalid character range"},
		{"[a-z-0]", "invalid character range"},
		{`[\d-z]`, "invalid character range"},
		{"[a-[:digit:]]", "invalid character range"},
		{"[[:foo:]]", "invalid character class"},
		{"[[::]]", "invalid character class"},
		{"[[.foo.]]", "invalid collating element"},
		{"[[=ab=]]", "invalid collating element"},
		{"(?z)a", "invalid embedded option"},
		{"(?i", "invalid embedded option"},
		{"(?ix", "invalid embedded option"},
		{"***?", "invalid regexp (reg version 0.8)"},
		// a program larger than MaxRegexInstructions (PostgreSQL refuses
		// an automaton with too many states)
		{strings.Repeat("(a{250}){4}", 60), "regular expression is too complex"},
		{strings.Repeat("x", MaxRegexInstructions+1), "regular expression is too complex"},
	}
	for _, c := range cases {
		re, err := CompileRegex(c.pattern)
		var pe *RegexError
		if !errors.As(err, &pe) {
			t.Errorf("CompileRegex(%q) = %v, %v; want PostgreSQL error %q", c.pattern, re, err, c.msg)
			continue
		}
		if want := "invalid regular expression: " + c.msg; err.Error() != want {
			t.Errorf("CompileRegex(%q): %q, want %q", c.pattern, err.Error(), want)
		}
	}
}

func TestCompileRegexUnsupported(t *testing.T) {
	for _, p := range []string{`(a)\1`, `(a)(b)\2+`, "(?=a)b", "a(?!b)", "(?<=a)b", "(?<!a)b", "(?b)a"} {
		_, err := CompileRegex(p)
		if !errors.Is(err, ErrUnsupportedRegex) {
			t.Errorf("CompileRegex(%q): %v, want unsupported", p, err)
		}
	}
	// syntax errors are still found after an unsupported construct
	if _, err := CompileRegex(`(a)\1(`); err == nil || err.Error() != "invalid regular expression: parentheses () not balanced" {
		t.Errorf("got %v", err)
	}
}

func TestCompileRegexMatch(t *testing.T) {
	cases := []struct {
		pattern, text string
		want          bool
	}{
		// SPEC.md §12.5 and the conformance suite
		{"(?i)^WEB", "web01.example.com", true},
		{"^WEB", "web01.example.com", false},
		{`web\d+\.prod`, "web12.prod.example.com", true},
		{`web\d+\.prod`, "webx.prod", false},
		{`\.stage\.`, "app01.stage.example.com", true},
		{`^devbox-10\.`, "devbox-10.example.com", true},
		{`^devbox-10\.`, "devbox-100.example.com", false},
		{`corp\.example\.com$`, "host.corp.example.com", true},
		{`corp\.example\.com$`, "host.corp.example.com\n", false},
		{`Foo::Bar\[x\]`, "Foo::Bar[x]", true},
		{`returned [0-9]+`, "returned 1 instead of", true},
		{"ü|☃", "snow ☃", true},
		{"ünï", "ünïcode", true},
		{`^/etc/nginx/sites-(available|enabled)/`, "/etc/nginx/sites-enabled/default", true},
		{`regex\.\*\+\?`, "title regex.*+? x", true},
		{`^C:\\\\`, `C:\\x`, true},
		{`^C:\\\\`, `C:\x`, false},
		{`"present"`, `"present"`, true},
		{`"present"`, `present`, false},
		// dot, anchors and newlines
		{"a.b", "a\nb", true}, // . matches newline by default
		{"(?n)a.b", "a\nb", false},
		{"(?p)a.b", "a\nb", false},
		{"(?w)a.b", "a\nb", true},
		{"^b", "a\nb", false},
		{"(?n)^b", "a\nb", true},
		{"(?w)a$", "a\nb", true},
		{"(?p)a$", "a\nb", false},
		{"[^x]", "\n", true},
		{"(?n)[^x]", "\n", false},
		{`(?n)\D`, "\n", false},
		{`\D`, "\n", true},
		{`\Aab\Z`, "ab", true},
		{`\Aab\Z`, "ab\n", false},
		// escapes
		{`\B`, `a\b`, true}, // \B is a backslash in AREs
		{`a\bb`, "a\bb", true},
		{`\y`, "a b", true},
		{`\mfoo\M`, "a foo b", true},
		{`\mfoo\M`, "afoob", false},
		{`[[:<:]]foo[[:>:]]`, "a foo", true},
		{`\Yoo`, "foo", true},
		{`\x41\101\u0042\U00000043\0`, "AABC\x00", true},
		{`\n\t\r\f\v\a\e`, "\n\t\r\f\v\a\x1b", true},
		{`\cA`, "\x01", true},
		{`\-\.\/\!\ \#`, "-./! #", true},
		{`\18`, "\x018", true}, // 18 > number of groups: octal \1, then "8"
		// classes
		{`\w+`, "é", true}, // C.UTF-8: Unicode-aware
		{`^\w+$`, "ünï_1", true},
		{`^\W$`, "☃", true},
		{`^\d$`, "٣", false}, // only 0-9
		{`^[[:alpha:]]$`, "٣", true},
		{`^\s$`, "\u3000", true},
		{`^\s$`, "\u00a0", false},
		{`^[[:upper:]]+$`, "ÉA", true},
		{`(?i)^[[:upper:]]+$`, "éa", true},
		{`(?i)ÉTÉ`, "été", true},
		{`(?c)a`, "A", false},
		{`[[:digit:][:punct:]]+`, "1.2", true},
		{`^[[:xdigit:]]+$`, "DEADbeef09", true},
		{`^[[:word:]]+$`, "a_b", true},
		{`^[[:blank:]]$`, "\t", true},
		{`^[[:cntrl:]]$`, "\x7f", true},
		{`^[[:print:]]$`, " ", true},
		{`^[[:graph:]]$`, " ", false},
		{`^[[.space.][.hyphen.]]+$`, " - ", true},
		{`^[[=a=]]$`, "a", true},
		{`^[]a]+$`, "]a]", true},
		{`^[^]a]$`, "b", true},
		{`^[a-]$`, "-", true},
		{`^[!--]$`, ",", true},
		{`^[\d\s]+$`, "1 2", true},
		{`^[\Wa]+$`, "a!", true},
		{`^[\W]$`, "a", false},
		{`^[[]$`, "[", true},
		// quantifiers and groups
		{"^a{2}$", "aa", true},
		{"^a{2,}$", "aaa", true},
		{"^a{0}$", "", true},
		{"^a{1,2}?$", "aa", true},
		{"^(ab)+$", "abab", true},
		{"^(?:ab)*?$", "", true},
		{"a{", "a{", true},
		{"a{,1}", "a{,1}", true},
		{"a|", "x", true},
		{"()", "", true},
		{"", "x", true},
		{"x(?#comment)y", "xy", true},
		{"(?x) a b # comment\n c", "abc", true},
		{`(?x)a\ b`, "a b", true},
		{"(?x)a{ 2 }", "aa", true},
		// literal modes
		{"***=a.b", "a.b", true},
		{"***=a.b", "axb", false},
		{"(?q)(a", "(a", true},
		{"***:a+", "aaa", true},
		{"(?e)a\\d", "ad", true}, // EREs have no \d
		{"(?e)a)", "a)", true},   // an unmatched ) is literal in EREs
	}
	for _, c := range cases {
		re, err := CompileRegex(c.pattern)
		if err != nil {
			t.Errorf("CompileRegex(%q): %v", c.pattern, err)
			continue
		}
		if got := re.MatchString(c.text); got != c.want {
			t.Errorf("%q ~ %q = %v, want %v (go: %.120s)", c.text, c.pattern, got, c.want, re.String())
		}
	}
}

func TestTranslateRegexICase(t *testing.T) {
	g, err := TranslateRegexICase("^WEB")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(g).MatchString("web01") {
		t.Errorf("%q does not match", g)
	}
	g, err = TranslateRegexICase("(?c)^WEB")
	if err != nil || regexp.MustCompile(g).MatchString("web01") {
		t.Errorf("(?c) must turn case-insensitivity off: %q %v", g, err)
	}
}

func FuzzCompileRegex(f *testing.F) {
	for _, s := range []string{"*", "(?i)^WEB", `web\d+\.prod`, "[[:alpha:]-]", `a{1,3}?(b|c)\1`, `[^]\-a-z]`,
		"(?x) a # b\n", "***=x", `\mfoo\M\y`, "[[.hyphen.]]", `(?n).$`, `\u00e9\x{`, "(?=x)", "a{255}{255}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, pattern string) {
		goPat, err := TranslateRegex(pattern)
		if err != nil {
			var pe *RegexError
			if !errors.As(err, &pe) && !errors.Is(err, ErrUnsupportedRegex) {
				t.Fatalf("TranslateRegex(%q): unexpected error type %T %v", pattern, err, err)
			}
			return
		}
		if _, err := regexp.Compile(goPat); err != nil {
			msg := err.Error()
			if strings.Contains(msg, "invalid repeat count") || strings.Contains(msg, "expression too large") ||
				strings.Contains(msg, "nests too deeply") {
				return // RE2 size limits; CompileRegex reports these as unsupported
			}
			t.Fatalf("TranslateRegex(%q) = %q does not compile: %v", pattern, goPat, err)
		}
	})
}
