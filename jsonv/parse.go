package jsonv

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth bounds the nesting of arrays and objects so that hostile input
// cannot exhaust memory through recursion.
var MaxDepth = 512

// SyntaxError describes malformed JSON the way Jackson (PuppetDB's parser)
// does: Line and Column are 1-based and Column points just past the
// offending character, as Jackson reports it.
type SyntaxError struct {
	Line, Column int
	Reason       string
	input        []byte
	offset       int
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("Json parse error at line %d, column %d: %s", e.Line, e.Column, e.Reason)
}

// PuppetDBMessage renders the error exactly as PuppetDB's query endpoints do:
//
//	Json parse error at line L, column C:\n\n<line>\n<C-2 spaces>^\n\n<reason>
func (e *SyntaxError) PuppetDBMessage() string {
	line := lineAt(e.input, e.offset)
	pad := e.Column - 2
	if pad < 0 {
		pad = 0
	}
	return fmt.Sprintf("Json parse error at line %d, column %d:\n\n%s\n%s^\n\n%s",
		e.Line, e.Column, line, strings.Repeat(" ", pad), e.Reason)
}

func lineAt(in []byte, off int) string {
	if off > len(in) {
		off = len(in)
	}
	start := off
	if start == len(in) && start > 0 && in[start-1] == '\n' {
		start--
	}
	for start > 0 && in[start-1] != '\n' {
		start--
	}
	end := off
	for end < len(in) && in[end] != '\n' {
		end++
	}
	return string(in[start:end])
}

// Parse parses exactly one JSON value; only whitespace may follow it.
func Parse(data []byte) (any, error) {
	p := parser{in: data}
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.ws()
	if p.pos < len(p.in) {
		return nil, p.unexpected("expected end-of-input")
	}
	return v, nil
}

// ParseFirst parses the first JSON value of data and returns the unparsed
// remainder (with leading whitespace removed). An input holding only
// whitespace yields (nil, nil, nil) with empty true.
func ParseFirst(data []byte) (v any, rest []byte, empty bool, err error) {
	p := parser{in: data}
	p.ws()
	if p.pos == len(p.in) {
		return nil, nil, true, nil
	}
	v, err = p.value(0)
	if err != nil {
		return nil, nil, false, err
	}
	p.ws()
	return v, p.in[p.pos:], false, nil
}

type parser struct {
	in  []byte
	pos int
	// vals and keys are scratch stacks: elements of the containers being
	// parsed are pushed here and copied out once, at their final size.
	vals []any
	keys []string
}

func (p *parser) ws() {
	for p.pos < len(p.in) {
		switch p.in[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// errAt builds a SyntaxError whose column is that of the character before
// offset 'after' plus one (Jackson reports the position after consuming).
func (p *parser) errAt(after int, reason string) *SyntaxError {
	line, col := 1, 1
	for i := 0; i < after && i < len(p.in); i++ {
		if p.in[i] == '\n' {
			line++
			col = 1
		} else if p.in[i] < 0x80 || p.in[i] >= 0xC0 {
			col++
		}
	}
	off := after - 1
	if off < 0 {
		off = 0
	}
	return &SyntaxError{Line: line, Column: col, Reason: reason, input: p.in, offset: off}
}

func charDesc(r rune) string {
	if r < 0x20 {
		return fmt.Sprintf("(CTRL-CHAR, code %d)", r)
	}
	return fmt.Sprintf("'%c' (code %d)", r, r)
}

func (p *parser) unexpected(what string) *SyntaxError {
	r, size := utf8.DecodeRune(p.in[p.pos:])
	return p.errAt(p.pos+size, fmt.Sprintf("Unexpected character (%s): %s", charDesc(r), what))
}

const expectedValue = "expected a valid value (JSON String, Number, Array, Object or token 'null', 'true' or 'false')"

func (p *parser) value(depth int) (any, error) {
	p.ws()
	if p.pos >= len(p.in) {
		return nil, p.errAt(len(p.in)+1, "Unexpected end-of-input: expected a valid value")
	}
	if depth > MaxDepth {
		return nil, p.errAt(p.pos+1, fmt.Sprintf("Document nesting depth exceeds the maximum allowed (%d)", MaxDepth))
	}
	switch c := p.in[p.pos]; {
	case c == '[':
		return p.array(depth)
	case c == '{':
		return p.object(depth)
	case c == '"':
		return p.str()
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == 't' || c == 'f' || c == 'n' || isTokenChar(c):
		return p.token()
	default:
		return nil, p.unexpected(expectedValue)
	}
}

func isTokenChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80
}

func (p *parser) token() (any, error) {
	start := p.pos
	end := start
	for end < len(p.in) && (isTokenChar(p.in[end]) || p.in[end] >= '0' && p.in[end] <= '9') {
		end++
	}
	word := string(p.in[start:end])
	switch word {
	case "true":
		p.pos = end
		return true, nil
	case "false":
		p.pos = end
		return false, nil
	case "null":
		p.pos = end
		return nil, nil
	}
	if word == "" {
		return nil, p.unexpected(expectedValue)
	}
	return nil, p.errAt(end, fmt.Sprintf("Unrecognized token '%s': was expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false')", word))
}

func (p *parser) number() (any, error) {
	start := p.pos
	i := p.pos
	if p.in[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(p.in) && p.in[i] >= '0' && p.in[i] <= '9' {
			i++
			n++
		}
		return n
	}
	intStart := i
	n := digits()
	if n == 0 {
		p.pos = i
		if i >= len(p.in) {
			return nil, p.errAt(i+1, "Unexpected end-of-input in numeric value")
		}
		r, size := utf8.DecodeRune(p.in[i:])
		return nil, p.errAt(i+size, fmt.Sprintf("Unexpected character (%s) in numeric value: expected digit (0-9) to follow minus sign, for valid numeric value", charDesc(r)))
	}
	if n > 1 && p.in[intStart] == '0' {
		return nil, p.errAt(intStart+2, "Invalid numeric value: Leading zeroes not allowed")
	}
	if i < len(p.in) && p.in[i] == '.' {
		i++
		if digits() == 0 {
			return nil, p.errAt(i+1, "Unexpected character in numeric value: Decimal point not followed by a digit")
		}
	}
	if i < len(p.in) && (p.in[i] == 'e' || p.in[i] == 'E') {
		i++
		if i < len(p.in) && (p.in[i] == '+' || p.in[i] == '-') {
			i++
		}
		if digits() == 0 {
			return nil, p.errAt(i+1, "Unexpected character in numeric value: Exponent indicator not followed by a digit")
		}
	}
	if i < len(p.in) && isTokenChar(p.in[i]) {
		r, size := utf8.DecodeRune(p.in[i:])
		return nil, p.errAt(i+size, fmt.Sprintf("Unexpected character (%s) in numeric value: Expected space separating root-level values", charDesc(r)))
	}
	p.pos = i
	return Number(p.in[start:i]), nil
}

func (p *parser) str() (string, error) {
	p.pos++ // opening quote
	start := p.pos
	// fast path: no escapes
	ascii := true
	for i := start; i < len(p.in); i++ {
		c := p.in[i]
		if c == '"' {
			s := string(p.in[start:i])
			if !ascii && !utf8.ValidString(s) {
				s = strings.ToValidUTF8(s, "\uFFFD")
			}
			p.pos = i + 1
			return s, nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
		if c >= 0x80 {
			ascii = false
		}
	}
	var b strings.Builder
	i := start
	for {
		if i >= len(p.in) {
			return "", p.errAt(len(p.in)+1, "Unexpected end-of-input: was expecting closing quote for a string value")
		}
		c := p.in[i]
		switch {
		case c == '"':
			p.pos = i + 1
			s := b.String()
			if !utf8.ValidString(s) {
				s = strings.ToValidUTF8(s, "\uFFFD")
			}
			return s, nil
		case c < 0x20:
			return "", p.errAt(i+1, fmt.Sprintf("Illegal unquoted character (%s): has to be escaped using backslash to be included in string value", charDesc(rune(c))))
		case c == '\\':
			i++
			if i >= len(p.in) {
				return "", p.errAt(len(p.in)+1, "Unexpected end-of-input in character escape sequence")
			}
			e := p.in[i]
			i++
			switch e {
			case '"', '\\', '/':
				b.WriteByte(e)
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				r, ok := p.hex4(i)
				if !ok {
					return "", p.errAt(i+1, "Unexpected character in character escape sequence: expected a hex-digit for character escape sequence")
				}
				i += 4
				if utf16.IsSurrogate(r) {
					if i+6 <= len(p.in) && p.in[i] == '\\' && p.in[i+1] == 'u' {
						if r2, ok := p.hex4(i + 2); ok {
							if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
								b.WriteRune(d)
								i += 6
								continue
							}
						}
					}
					r = utf8.RuneError
				}
				b.WriteRune(r)
			default:
				r, size := utf8.DecodeRune(p.in[i-1:])
				return "", p.errAt(i-1+size, fmt.Sprintf("Unrecognized character escape %s", charDesc(r)))
			}
		default:
			b.WriteByte(c)
			i++
		}
	}
}

func (p *parser) hex4(i int) (rune, bool) {
	if i+4 > len(p.in) {
		return 0, false
	}
	var r rune
	for _, c := range p.in[i : i+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c-'a') + 10
		case c >= 'A' && c <= 'F':
			r |= rune(c-'A') + 10
		default:
			return 0, false
		}
	}
	return r, true
}

func (p *parser) markerDesc(open int) string {
	e := p.errAt(open+1, "")
	return fmt.Sprintf("[Source: (StringReader); line: %d, column: %d]", e.Line, e.Column-1)
}

func (p *parser) array(depth int) (any, error) {
	open := p.pos
	p.pos++
	p.ws()
	if p.pos < len(p.in) && p.in[p.pos] == ']' {
		p.pos++
		return []any{}, nil
	}
	base := len(p.vals)
	defer func() { p.vals = p.vals[:base] }()
	for {
		p.ws()
		if p.pos >= len(p.in) {
			return nil, p.errAt(len(p.in)+1, "Unexpected end-of-input: expected close marker for Array (start marker at "+p.markerDesc(open)+")")
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		p.vals = append(p.vals, v)
		p.ws()
		if p.pos >= len(p.in) {
			return nil, p.errAt(len(p.in)+1, "Unexpected end-of-input: expected close marker for Array (start marker at "+p.markerDesc(open)+")")
		}
		switch p.in[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			return append([]any(nil), p.vals[base:]...), nil
		default:
			return nil, p.unexpected("was expecting comma to separate Array entries")
		}
	}
}

func (p *parser) object(depth int) (any, error) {
	open := p.pos
	p.pos++
	p.ws()
	if p.pos < len(p.in) && p.in[p.pos] == '}' {
		p.pos++
		return &Object{}, nil
	}
	kbase, vbase := len(p.keys), len(p.vals)
	defer func() { p.keys, p.vals = p.keys[:kbase], p.vals[:vbase] }()
	eof := func() error {
		return p.errAt(len(p.in)+1, "Unexpected end-of-input: expected close marker for Object (start marker at "+p.markerDesc(open)+")")
	}
	for {
		p.ws()
		if p.pos >= len(p.in) {
			return nil, eof()
		}
		if p.in[p.pos] != '"' {
			return nil, p.unexpected("was expecting double-quote to start field name")
		}
		k, err := p.key()
		if err != nil {
			return nil, err
		}
		p.ws()
		if p.pos >= len(p.in) {
			return nil, p.errAt(len(p.in)+1, "Unexpected end-of-input within/between Object entries")
		}
		if p.in[p.pos] != ':' {
			return nil, p.unexpected("was expecting a colon to separate field name and value")
		}
		p.pos++
		p.ws()
		if p.pos >= len(p.in) {
			return nil, p.errAt(len(p.in)+1, "Unexpected end-of-input within/between Object entries")
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		p.keys = append(p.keys, k)
		p.vals = append(p.vals, v)
		p.ws()
		if p.pos >= len(p.in) {
			return nil, eof()
		}
		switch p.in[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			return &Object{Keys: append([]string(nil), p.keys[kbase:]...), Values: append([]any(nil), p.vals[vbase:]...)}, nil
		default:
			return nil, p.unexpected("was expecting comma to separate Object entries")
		}
	}
}

// Object keys repeat across documents (every event has "status",
// "timestamp", ...): short escape-free keys are interned so that parsing
// does not allocate them again and again.
var (
	internMu sync.RWMutex
	interned = map[string]string{}
)

const maxInterned = 4096

func (p *parser) key() (string, error) {
	start := p.pos + 1
	for i := start; i < len(p.in) && i-start <= 64; i++ {
		c := p.in[i]
		if c == '"' {
			b := p.in[start:i]
			internMu.RLock()
			s, ok := interned[string(b)]
			internMu.RUnlock()
			if ok {
				p.pos = i + 1
				return s, nil
			}
			break
		}
		if c == '\\' || c < 0x20 || c >= 0x80 {
			break
		}
	}
	s, err := p.str()
	if err == nil && len(s) <= 64 {
		internMu.Lock()
		if len(interned) < maxInterned {
			interned[s] = s
		}
		internMu.Unlock()
	}
	return s, err
}

// CountValues is an upper bound, from one quick pass and without
// validating, of the values (arrays, objects, object keys and scalars) that
// Parse would allocate for data: what parsing costs in memory is about 40
// bytes a value beside the strings, up to 35 times the document's size for
// a document of tiny values, so callers bound and budget it before parsing.
func CountValues(data []byte) int {
	n := 1
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case ',', ':', '[', '{':
			n++
		case '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		}
	}
	return n
}
