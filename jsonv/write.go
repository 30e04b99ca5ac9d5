package jsonv

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

const hexUpper = "0123456789ABCDEF"

const (
	lsb8 = 0x0101010101010101
	msb8 = 0x8080808080808080
)

// load8 is the eight bytes of s at i as a little-endian word (the
// compiler makes one load of it).
func load8(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// plainASCII8 tells whether none of the eight bytes of w is below 0x20,
// a quote, a backslash or above 0x7F: those AppendString copies as they
// are. (A byte b is below n, for n <= 0x80, where (b - n) borrows into its
// top bit while b's own top bit is clear; it equals c where b ^ c is zero.)
func plainASCII8(w uint64) bool {
	hasLess := func(w uint64, n uint64) uint64 { return (w - lsb8*n) & ^w & msb8 }
	hasZero := func(w uint64) uint64 { return (w - lsb8) & ^w & msb8 }
	return (w&msb8)|hasLess(w, 0x20)|hasZero(w^(lsb8*'"'))|hasZero(w^(lsb8*'\\')) == 0
}

// AppendStrings appends ss as a compact JSON array of strings (as
// AppendCompact does, without boxing the slice).
func AppendStrings(dst []byte, ss []string) []byte {
	dst = append(dst, '[')
	for i, e := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendString(dst, e)
	}
	return append(dst, ']')
}

// AppendString appends s as a JSON string escaped the way Jackson does by
// default: '"' and '\\' escaped, control characters as \b \t \n \f \r or
// \u00XX (upper-case hex), everything else (including '/', non-ASCII,
// U+2028/2029) raw. Invalid UTF-8 is replaced by U+FFFD.
func AppendString(dst []byte, s string) []byte { return appendString(dst, s, true) }

// appendString is AppendString; with wordwise false it looks at every
// byte (the tests' reference for the eight-byte skip).
func appendString(dst []byte, s string, wordwise bool) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		// eight bytes at a time while none needs a look: no control
		// character, quote, backslash or non-ASCII byte among them
		for wordwise && len(s)-i >= 8 && plainASCII8(load8(s, i)) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			if c < utf8.RuneSelf {
				i++
				continue
			}
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = append(dst, s[start:i]...)
				dst = append(dst, "\uFFFD"...)
				i++
				start = i
				continue
			}
			i += size
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\r':
			dst = append(dst, '\\', 'r')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexUpper[c>>4], hexUpper[c&0xF])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// AppendCompact appends v in Jackson's compact form (no whitespace), object
// members in their stored order.
func AppendCompact(dst []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...)
	case bool:
		return strconv.AppendBool(dst, x)
	case Number:
		return append(dst, x...)
	case string:
		return AppendString(dst, x)
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendCompact(dst, e)
		}
		return append(dst, ']')
	case []string:
		return AppendStrings(dst, x)
	case *Object:
		dst = append(dst, '{')
		for i, k := range x.Keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendString(dst, k)
			dst = append(dst, ':')
			dst = AppendCompact(dst, x.Values[i])
		}
		return append(dst, '}')
	case int:
		return strconv.AppendInt(dst, int64(x), 10)
	case int64:
		return strconv.AppendInt(dst, x, 10)
	case RawJSON:
		return append(dst, x...)
	}
	panic("jsonv: cannot encode value of this type")
}

// RawJSON is JSON text inserted verbatim by the writers.
type RawJSON []byte

// Compact returns the compact encoding of v as a string.
func Compact(v any) string { return string(AppendCompact(nil, v)) }

// AppendPretty appends v as Jackson's DefaultPrettyPrinter (as PuppetDB
// configures it) writes it: objects one member a line indented by two
// spaces per object level, `"key" : value`; arrays inline as `[ a, b ]`;
// empty containers `[ ]` and `{ }`. RawJSON values are parsed and re-printed.
func AppendPretty(dst []byte, v any) []byte {
	return appendPretty(dst, v, 0)
}

func appendPretty(dst []byte, v any, level int) []byte {
	switch x := v.(type) {
	case []any:
		if len(x) == 0 {
			return append(dst, "[ ]"...)
		}
		dst = append(dst, "[ "...)
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = appendPretty(dst, e, level)
		}
		return append(dst, " ]"...)
	case []string:
		arr := make([]any, len(x))
		for i := range x {
			arr[i] = x[i]
		}
		return appendPretty(dst, arr, level)
	case *Object:
		if len(x.Keys) == 0 {
			return append(dst, "{ }"...)
		}
		dst = append(dst, '{')
		for i, k := range x.Keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = newline(dst, level+1)
			dst = AppendString(dst, k)
			dst = append(dst, " : "...)
			dst = appendPretty(dst, x.Values[i], level+1)
		}
		dst = newline(dst, level)
		return append(dst, '}')
	case RawJSON:
		pv, err := Parse(x)
		if err != nil {
			return append(dst, x...)
		}
		return appendPretty(dst, pv, level)
	default:
		return AppendCompact(dst, v)
	}
}

func newline(dst []byte, level int) []byte {
	dst = append(dst, '\n')
	for i := 0; i < level; i++ {
		dst = append(dst, ' ', ' ')
	}
	return dst
}

// Pretty returns the pretty encoding of v.
func Pretty(v any) string { return string(AppendPretty(nil, v)) }

// AppendPGString appends s as PostgreSQL's escape_json writes it (json and
// jsonb output): like Jackson but control characters other than
// \b \f \n \r \t use lower-case \u00xx.
func AppendPGString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\r':
			dst = append(dst, '\\', 'r')
		default:
			const hexLower = "0123456789abcdef"
			dst = append(dst, '\\', 'u', '0', '0', hexLower[c>>4], hexLower[c&0xF])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// AppendJSONB appends v as PostgreSQL renders a jsonb value: ", " between
// elements and members, ": " after keys, object keys de-duplicated (last
// wins) and ordered shorter-first then bytewise, numbers in numeric's
// canonical text.
func AppendJSONB(dst []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...)
	case bool:
		return strconv.AppendBool(dst, x)
	case Number:
		return AppendPGNumeric(dst, string(x))
	case string:
		return AppendPGString(dst, x)
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = AppendJSONB(dst, e)
		}
		return append(dst, ']')
	case *Object:
		keys, vals := jsonbOrder(x)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = AppendPGString(dst, k)
			dst = append(dst, ": "...)
			dst = AppendJSONB(dst, vals[i])
		}
		return append(dst, '}')
	}
	panic("jsonv: cannot encode value of this type as jsonb")
}

// JSONBLess orders object keys as jsonb stores them.
func JSONBLess(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

func jsonbOrder(o *Object) ([]string, []any) {
	keys := make([]string, 0, len(o.Keys))
	vals := make([]any, 0, len(o.Keys))
	for i, k := range o.Keys {
		dup := false
		for j := range keys {
			if keys[j] == k {
				vals[j] = o.Values[i]
				dup = true
				break
			}
		}
		if !dup {
			keys = append(keys, k)
			vals = append(vals, o.Values[i])
		}
	}
	// insertion sort: objects are small
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && JSONBLess(keys[j], keys[j-1]); j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
			vals[j], vals[j-1] = vals[j-1], vals[j]
		}
	}
	return keys, vals
}

// AppendPGNumeric appends the JSON number literal lit as PostgreSQL's
// numeric type prints it after numeric_in: plain notation, the display
// scale being the literal's fraction digits minus its exponent (never
// negative), e.g. "1.50" -> 1.50, "1.5e3" -> 1500, "1e-5" -> 0.00001.
func AppendPGNumeric(dst []byte, lit string) []byte {
	neg := false
	s := lit
	if strings.HasPrefix(s, "-") {
		neg = true
		s = s[1:]
	}
	exp := 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
		if err != nil || e > 1000 || e < -1000 {
			// beyond what numeric holds (and what a report can mean):
			// keep the literal rather than render megabytes of zeros
			return append(dst, lit...)
		}
		exp = e
		s = s[:i]
	}
	intPart, frac := s, ""
	if i := strings.IndexByte(s, '.'); i >= 0 {
		intPart, frac = s[:i], s[i+1:]
	}
	digits := intPart + frac
	// value = digits * 10^(exp - len(frac))
	point := len(intPart) + exp // position of the decimal point within digits
	scale := len(frac) - exp
	if scale < 0 {
		scale = 0
	}
	var ip, fp string
	switch {
	case point <= 0:
		ip = "0"
		fp = strings.Repeat("0", -point) + digits
	case point >= len(digits):
		ip = digits + strings.Repeat("0", point-len(digits))
	default:
		ip, fp = digits[:point], digits[point:]
	}
	ip = strings.TrimLeft(ip, "0")
	if ip == "" {
		ip = "0"
	}
	if len(fp) > scale {
		fp = fp[:scale]
	} else if len(fp) < scale {
		fp += strings.Repeat("0", scale-len(fp))
	}
	if neg && (strings.Trim(ip, "0") != "" || strings.Trim(fp, "0") != "") {
		dst = append(dst, '-')
	}
	dst = append(dst, ip...)
	if scale > 0 {
		dst = append(dst, '.')
		dst = append(dst, fp...)
	}
	return dst
}
