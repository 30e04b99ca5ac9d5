package jsonv

import (
	"strconv"
	"strings"
)

// Clojure renders a parsed JSON value the way PuppetDB's error messages
// print it (Clojure's pr-str of the keywordised value): vectors as
// ["a" "b"], maps as {:key value, :key2 value2} in their sent order, null as
// nil, numbers as Clojure reads them (integers plain, decimals as doubles).
func Clojure(v any) string {
	var b strings.Builder
	writeClojure(&b, v)
	return b.String()
}

func writeClojure(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("nil")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case Number:
		if x.IsInteger() {
			b.WriteString(string(x))
			return
		}
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			b.WriteString(string(x))
			return
		}
		b.WriteString(JavaDouble(f))
	case string:
		b.WriteByte('"')
		for _, r := range x {
			switch r {
			case '"':
				b.WriteString(`\"`)
			case '\\':
				b.WriteString(`\\`)
			case '\n':
				b.WriteString(`\n`)
			case '\t':
				b.WriteString(`\t`)
			case '\r':
				b.WriteString(`\r`)
			case '\f':
				b.WriteString(`\f`)
			case '\b':
				b.WriteString(`\b`)
			default:
				b.WriteRune(r)
			}
		}
		b.WriteByte('"')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(' ')
			}
			writeClojure(b, e)
		}
		b.WriteByte(']')
	case *Object:
		b.WriteByte('{')
		for i, k := range x.Keys {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteByte(':')
			b.WriteString(k)
			b.WriteByte(' ')
			writeClojure(b, x.Values[i])
		}
		b.WriteByte('}')
	default:
		b.WriteString(Compact(v))
	}
}

// JavaDouble formats f as Java's Double.toString does (what Clojure prints
// for a double): at least one fraction digit, scientific notation outside
// [1e-3, 1e7).
func JavaDouble(f float64) string {
	if f == 0 {
		if 1/f < 0 {
			return "-0.0"
		}
		return "0.0"
	}
	abs := f
	if abs < 0 {
		abs = -abs
	}
	if abs >= 1e-3 && abs < 1e7 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, exp, _ := strings.Cut(s, "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}
