package puppetreport

import (
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"reportdb/jsonv"
)

// RubyToS renders a parsed JSON value as Ruby's #to_s would after Ruby's
// JSON parser read it: nil -> "", a string -> itself, true/false, an
// integer literal -> its decimal text, a float literal -> Float#to_s, and
// arrays/objects -> #inspect (Ruby < 3.4 syntax: ["a", nil],
// {"a"=>1, "b"=>nil}). This is what the terminus sends as an event's
// new_value/old_value.
func RubyToS(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	return rubyInspect(v)
}

// rubyInspect renders a parsed JSON value as Ruby's #inspect (Ruby < 3.4,
// the form Puppet Server's JRuby uses): strings double-quoted with Ruby's
// escapes, nil as "nil", arrays as [a, b], hashes as {"k"=>v}. A JSON object
// with duplicate keys is shown as Ruby's JSON parser builds the Hash: at the
// first key's position with the last value.
func rubyInspect(v any) string {
	var b strings.Builder
	writeInspect(&b, v)
	return b.String()
}

func writeInspect(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("nil")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case jsonv.Number:
		b.WriteString(rubyNumber(x))
	case string:
		b.WriteString(rubyStringInspect(x))
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeInspect(b, e)
		}
		b.WriteByte(']')
	case *jsonv.Object:
		keys, vals := rubyHash(x)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(rubyStringInspect(k))
			b.WriteString("=>")
			writeInspect(b, vals[i])
		}
		b.WriteByte('}')
	default:
		b.WriteString(jsonv.Compact(v))
	}
}

// rubyHash returns an object's members as a Ruby Hash holds them after
// JSON.parse: duplicate keys keep their first position and last value.
func rubyHash(o *jsonv.Object) ([]string, []any) {
	if o == nil {
		return nil, nil
	}
	seen := make(map[string]int, len(o.Keys))
	keys := make([]string, 0, len(o.Keys))
	vals := make([]any, 0, len(o.Keys))
	for i, k := range o.Keys {
		if j, dup := seen[k]; dup {
			vals[j] = o.Values[i]
			continue
		}
		seen[k] = len(keys)
		keys = append(keys, k)
		vals = append(vals, o.Values[i])
	}
	return keys, vals
}

// rubyNumber renders a JSON number literal as the Ruby object Ruby's JSON
// parser makes of it prints: literals without '.', 'e' or 'E' are Integers
// (arbitrary precision; "-0" is 0), the others Floats (RubyFloatToS).
func rubyNumber(n jsonv.Number) string {
	if n.IsInteger() {
		return canonicalInt(string(n))
	}
	f, _ := strconv.ParseFloat(string(n), 64) // ±Inf on overflow, as strtod
	return RubyFloatToS(f)
}

// canonicalInt normalises a JSON integer literal ("-0" -> "0").
func canonicalInt(s string) string {
	if strings.TrimLeft(strings.TrimPrefix(s, "-"), "0") == "" {
		return "0"
	}
	return s
}

// RubyFloatToS formats f as MRI's Float#to_s (numeric.c flo_to_s): the
// shortest round-trip digits; fixed notation when the decimal exponent
// allows it (decpt < digits, or decpt <= 15 padding with zeros, or
// -4 < decpt <= 0 as 0.000ddd), otherwise d.ddde+XX with at least two
// exponent digits; always at least one fraction digit.
func RubyFloatToS(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	sign := ""
	if f < 0 {
		sign = "-"
		f = -f
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, exp, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	x, _ := strconv.Atoi(exp)
	decpt := x + 1 // value = 0.DIGITS × 10^decpt
	digs := len(digits)
	var s string
	switch {
	case decpt > 0 && decpt < digs:
		s = digits[:decpt] + "." + digits[decpt:]
	case decpt > 0 && decpt <= 15:
		s = digits + strings.Repeat("0", decpt-digs) + ".0"
	case decpt <= 0 && decpt > -4:
		s = "0." + strings.Repeat("0", -decpt) + digits
	default:
		frac := digits[1:]
		if frac == "" {
			frac = "0"
		}
		ex := decpt - 1
		es := "+"
		if ex < 0 {
			es = "-"
			ex = -ex
		}
		xs := strconv.Itoa(ex)
		if len(xs) < 2 {
			xs = "0" + xs
		}
		s = digits[:1] + "." + frac + "e" + es + xs
	}
	return sign + s
}

// rubyStringInspect quotes s as Ruby's String#inspect does for a UTF-8
// string: `"` and `\` backslashed, "#{", "#$", "#@" written as "\#...",
// \n \r \t \f \v \b \a \e named, other non-printable characters (C0/C1
// controls, DEL, line/paragraph separators, unassigned code points) as
// \uXXXX or \u{XXXXX}; everything else, including non-ASCII text, raw.
func rubyStringInspect(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\f':
			b.WriteString(`\f`)
		case '\v':
			b.WriteString(`\v`)
		case '\b':
			b.WriteString(`\b`)
		case '\a':
			b.WriteString(`\a`)
		case 0x1b:
			b.WriteString(`\e`)
		case '#':
			if i+1 < len(s) && (s[i+1] == '{' || s[i+1] == '$' || s[i+1] == '@') {
				b.WriteString(`\#`)
			} else {
				b.WriteByte('#')
			}
		default:
			if rubyPrintable(r) {
				b.WriteRune(r)
			} else if r <= 0xFFFF {
				b.WriteString(`\u`)
				h := strings.ToUpper(strconv.FormatInt(int64(r), 16))
				b.WriteString(strings.Repeat("0", 4-len(h)))
				b.WriteString(h)
			} else {
				b.WriteString(`\u{`)
				b.WriteString(strings.ToUpper(strconv.FormatInt(int64(r), 16)))
				b.WriteByte('}')
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// rubyPrintable mirrors Onigmo's [[:print:]] for UTF-8: printable ASCII,
// and any assigned non-ASCII code point that is not a control, surrogate,
// line or paragraph separator.
func rubyPrintable(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 0x20 && r < 0x7F
	}
	if r == utf8.RuneError || unicode.In(r, unicode.Cc, unicode.Cs, unicode.Zl, unicode.Zp) {
		return r == utf8.RuneError // U+FFFD itself is a printable symbol
	}
	return unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z, unicode.Co, unicode.Cf)
}
