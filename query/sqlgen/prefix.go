package sqlgen

import "strings"

// regexPrefix returns the literal text every match of an anchored regular
// expression starts with ("^/etc/nginx/" → "/etc/nginx/"), or "" when there
// is none or the pattern is not simple enough to be sure (alternation,
// embedded options, quantified last character...). With bytewise string
// comparison (C collation, SQLite BINARY) the match then implies
// prefix <= s < prefixEnd(prefix), which an index can serve.
//
// The second result says that the pattern is nothing but the anchor and that literal
// ("^/etc/nginx/", `^C:\\`): then a string matches exactly when it starts with
// the prefix, i.e. (bytewise) when prefix <= s < prefixEnd(prefix), and the
// regular expression need not be evaluated at all.
func regexPrefix(p string) (string, bool) {
	if !strings.HasPrefix(p, "^") || strings.HasPrefix(p, "***") {
		return "", false
	}
	// any top-level alternation makes the anchor apply to one branch only
	depth := 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '(':
			depth++
		case ')':
			depth--
		case '|':
			if depth == 0 {
				return "", false
			}
		}
	}
	var b strings.Builder
	i := 1
	for i < len(p) {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p) && isPunct(p[i+1]):
			b.WriteByte(p[i+1])
			i += 2
		case strings.IndexByte(`.[]()*+?{}|^$\`, c) >= 0:
			goto done
		default:
			b.WriteByte(c)
			i++
		}
	}
done:
	prefix := b.String()
	if i == len(p) {
		return prefix, prefix != "" && prefixEnd(prefix) != ""
	}
	if strings.IndexByte("*?{", p[i]) >= 0 && prefix != "" {
		// the last literal is optional (or repeated zero times)
		prefix = prefix[:len(prefix)-1]
		for len(prefix) > 0 && prefix[len(prefix)-1] >= 0x80 {
			prefix = prefix[:len(prefix)-1] // do not cut a UTF-8 sequence
		}
	}
	return prefix, false
}

func isPunct(c byte) bool {
	return c < 0x80 && !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_')
}

// prefixEnd is the smallest string greater than every string starting with
// prefix ("" when there is none: a prefix of 0xFF bytes).
func prefixEnd(prefix string) string {
	b := []byte(prefix)
	for len(b) > 0 {
		if b[len(b)-1] < 0xFF {
			b[len(b)-1]++
			return string(b)
		}
		b = b[:len(b)-1]
	}
	return ""
}
