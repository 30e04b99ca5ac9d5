package pql

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"reportdb/jsonv"
	"reportdb/query/ast"
)

// flattenChains selects how "a and b and c" is rendered. PuppetDB's grammar
// is right-recursive (expr-and = expr-not | expr-not ws "and" ws expr-and)
// and its transform only collapses single-child nodes, which would give
// ["and", a, ["and", b, c]]; SPEC §20.1 documents one n-ary node
// ["and", a, b, c], which is what we produce. Parenthesised groups are never
// merged into the surrounding chain.
const flattenChains = true

// Values built during parsing that PuppetDB's transform step finishes after
// the parse is complete (so that only the chosen parse can fail).

// dqString is a double-quoted string body, decoded as a JSON string body.
type dqString struct{ raw string }

// chain is one "and"/"or" link: head op tail, tail being the rest of the
// chain (a *chain of the same op) or its last operand.
type chain struct {
	op         string
	head, tail any
}

// group is a parenthesised expression.
type group struct{ v any }

// subq is an implicit subquery: entity { clauses }.
type subq struct {
	entity string
	args   []any
}

// fromNode is ["from", entity, clauses...].
type fromNode struct{ items []any }

// sqString decodes a single-quoted string body: only \' is an escape.
func sqString(body string) string {
	return strings.ReplaceAll(body, `\'`, `'`)
}

// integerValue is PuppetDB's (Integer. digits), negated when neg.
func integerValue(neg bool, digits string) jsonv.Number {
	d := strings.TrimLeft(digits, "0")
	if d == "" {
		return "0"
	}
	if neg {
		return jsonv.Number("-" + d)
	}
	return jsonv.Number(d)
}

// realValue is PuppetDB's (Double. text) as serialised by Jackson: Java's
// Double.toString, infinities as the strings Jackson writes for them.
func realValue(text string) any {
	f, _ := strconv.ParseFloat(text, 64) // the grammar guarantees the syntax
	if math.IsInf(f, 1) {
		return "Infinity"
	}
	if math.IsInf(f, -1) {
		return "-Infinity"
	}
	return jsonv.Number(jsonv.JavaDouble(f))
}

// newFrom assembles a from node like PuppetDB's transform-from: when there
// is a projection and another non-paging clause (filter, group_by), those
// clauses move inside the extract and paging clauses follow it.
func newFrom(entity string, extract any, clauses []any) *fromNode {
	args := make([]any, 0, len(clauses)+1)
	if extract != nil {
		args = append(args, extract)
	}
	args = append(args, clauses...)
	var paging, other []any
	for _, a := range args {
		if ast.IsPaging(a) {
			paging = append(paging, a)
		} else {
			other = append(other, a)
		}
	}
	items := []any{"from", entity}
	if extract != nil && len(other) > 1 {
		ext := append(append([]any{}, extract.([]any)...), other[1:]...)
		items = append(append(items, ext), paging...)
	} else {
		items = append(items, args...)
	}
	return &fromNode{items}
}

// resolver finishes the transform of the chosen parse.
type resolver struct {
	froms [][]any // every from node, outermost first
}

func (r *resolver) resolve(v any) (any, error) {
	switch x := v.(type) {
	case []any:
		return r.list(x)
	case *dqString:
		return decodeDQ(x.raw)
	case *group:
		return r.resolve(x.v)
	case *chain:
		if !flattenChains {
			h, err := r.resolve(x.head)
			if err != nil {
				return nil, err
			}
			t, err := r.resolve(x.tail)
			if err != nil {
				return nil, err
			}
			return []any{x.op, h, t}, nil
		}
		out := []any{x.op}
		var cur any = x
		for {
			c, ok := cur.(*chain)
			if !ok || c.op != x.op {
				break
			}
			h, err := r.resolve(c.head)
			if err != nil {
				return nil, err
			}
			out = append(out, h)
			cur = c.tail
		}
		t, err := r.resolve(cur)
		if err != nil {
			return nil, err
		}
		return append(out, t), nil
	case *subq:
		args, err := r.list(x.args)
		if err != nil {
			return nil, err
		}
		if len(args) > 1 {
			return nil, &TransformError{Msg: fmt.Sprintf(
				"Wrong number of args (%d) passed to: puppetlabs.puppetdb.pql.transform/transform-subquery",
				len(args)+1)}
		}
		return append([]any{"subquery", x.entity}, args...), nil
	case *fromNode:
		i := len(r.froms)
		r.froms = append(r.froms, nil)
		items, err := r.list(x.items)
		if err != nil {
			return nil, err
		}
		r.froms[i] = items
		return items, nil
	}
	return v, nil
}

func (r *resolver) list(l []any) ([]any, error) {
	out := make([]any, len(l))
	for i, e := range l {
		v, err := r.resolve(e)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// checkClauses enforces "each paging clause at most once" on every from.
func (r *resolver) checkClauses() error {
	for _, f := range r.froms {
		seen := map[string]bool{}
		for _, c := range f[2:] {
			if !ast.IsPaging(c) {
				continue
			}
			name := c.([]any)[0].(string)
			if seen[name] {
				return &ClauseError{Clause: name}
			}
			seen[name] = true
		}
	}
	return nil
}

// decodeDQ decodes a double-quoted string body as Jackson (through
// cheshire's defaults, which accept raw control characters) decodes the
// JSON string "\"" + body + "\"".
func decodeDQ(body string) (string, error) {
	if !strings.Contains(body, `\`) {
		return body, nil
	}
	var b strings.Builder
	units := 1 // UTF-16 units consumed so far: the opening quote
	fail := func(msg string) (string, error) {
		return "", &StringEscapeError{Reason: msg, Line: 1, Column: units + 1}
	}
	// next reads one char (UTF-16 unit as Jackson sees it); past the end of
	// the body it is the closing quote.
	i := 0
	next := func() rune {
		if i >= len(body) {
			units++
			return '"'
		}
		r, size := utf8.DecodeRuneInString(body[i:])
		i += size
		if r > 0xFFFF {
			units += 2
			hi, _ := utf16.EncodeRune(r)
			return hi
		}
		units++
		return r
	}
	var pendingHigh rune = -1
	emit := func(r rune) {
		if pendingHigh >= 0 {
			if utf16.IsSurrogate(r) && r >= 0xDC00 {
				b.WriteRune(utf16.DecodeRune(pendingHigh, r))
				pendingHigh = -1
				return
			}
			b.WriteRune(utf8.RuneError)
			pendingHigh = -1
		}
		switch {
		case r >= 0xD800 && r < 0xDC00:
			pendingHigh = r
		case utf16.IsSurrogate(r):
			b.WriteRune(utf8.RuneError)
		default:
			b.WriteRune(r)
		}
	}
	for i < len(body) {
		if body[i] != '\\' {
			r, size := utf8.DecodeRuneInString(body[i:])
			emitRaw := body[i : i+size]
			i += size
			units += utf16.RuneLen(r)
			if pendingHigh >= 0 {
				emit(r)
			} else {
				b.WriteString(emitRaw)
			}
			continue
		}
		i++
		units++
		switch c := next(); c {
		case 'b':
			emit('\b')
		case 't':
			emit('\t')
		case 'n':
			emit('\n')
		case 'f':
			emit('\f')
		case 'r':
			emit('\r')
		case '"', '/', '\\':
			emit(c)
		case 'u':
			var v rune
			for k := 0; k < 4; k++ {
				h := next()
				d := hexVal(h)
				if d < 0 {
					return fail("Unexpected character (" + charDesc(h) + "): expected a hex-digit for character escape sequence")
				}
				v = v<<4 | d
			}
			emit(v)
		default:
			return fail("Unrecognized character escape " + charDesc(c))
		}
	}
	if pendingHigh >= 0 {
		b.WriteRune(utf8.RuneError)
	}
	return b.String(), nil
}

func hexVal(r rune) rune {
	switch {
	case r >= '0' && r <= '9':
		return r - '0'
	case r >= 'a' && r <= 'f':
		return r - 'a' + 10
	case r >= 'A' && r <= 'F':
		return r - 'A' + 10
	}
	return -1
}

// charDesc is Jackson's _getCharDesc for one UTF-16 unit.
func charDesc(r rune) string {
	shown := r
	if utf16.IsSurrogate(r) {
		shown = utf8.RuneError
	}
	switch {
	case r < 0x20 || r >= 0x7F && r <= 0x9F:
		return fmt.Sprintf("(CTRL-CHAR, code %d)", r)
	case r > 255:
		return fmt.Sprintf("'%c' (code %d / 0x%x)", shown, r, r)
	}
	return fmt.Sprintf("'%c' (code %d)", r, r)
}
