package puppetreport

import (
	"encoding/base64"
	"encoding/binary"
	"slices"
	"sync"
	"unicode/utf8"

	"reportdb/jsonv"
)

// The fast path
//
// Psych writes a report in a small corner of YAML: block mappings and
// sequences indented by spaces, plain, single- and double-quoted scalars
// (folded over lines when long), literal blocks for strings with line
// breaks, {} and [] for empty collections, and tags only for Puppet's
// classes (and !binary, !ruby/sym). parseYAMLFast reads exactly that corner
// straight from the bytes into what the general path (the YAML library's
// node tree, then yamlConv) gives for the same document, with the same
// rules for keys, scalars, classes and nesting, without building a node
// tree: about fifteen times faster, with a fraction of the garbage.
//
// It gives up (ok false) at anything outside the corner or anything the
// general path would refuse: anchors and aliases, flow collections with
// content, explicit and multi-line keys, comments, directives, tabs,
// carriage returns and other line breaks, byte order marks, control
// characters or invalid UTF-8, tags other than the ones above, irregular
// indentation, a second document, duplicate keys, merge keys, scalars
// Psych cannot type (.inf, .nan), nesting deeper than jsonv.MaxDepth, a
// document that is not a tagged report. ParseYAMLLimit then parses the
// document the general way, which decides what is wrong with it, so the
// errors and limits are the general path's. FuzzYAMLFastPath holds the two
// paths to the same answer for every document the fast path accepts.
//
// Memory: the fast path allocates the converted tree (which the general
// path builds as well, after its node tree of about 250 bytes a node) and
// one scratch buffer for scalars folded over lines or escaped, reused; what
// it leaves behind when it gives up is at most that, so YAMLParseCost
// remains a bound for both paths together.

// parseYAMLFast converts data as ParseYAMLLimit does, or reports that it
// cannot (ok false): the caller then takes the general path.
func parseYAMLFast(data []byte) (doc any, ok bool) {
	if !fastYAMLText(data) {
		return nil, false
	}
	p, _ := fastYAMLs.Get().(*fastYAML)
	if p == nil {
		p = new(fastYAML)
	}
	p.data, p.i, p.lineStart, p.maxDepth = data, 0, 0, jsonv.MaxDepth
	doc, ok = p.root()
	p.data, p.objs, p.keySlab, p.valSlab = nil, nil, nil, nil // now the document's
	// what it keeps for the next document is bounded: the scratch and
	// the stacks are dropped when a large document grew them
	if cap(p.buf) > 64<<10 {
		p.buf = nil
	}
	clear(p.vals[:cap(p.vals)]) // keeps nothing of the document alive
	clear(p.keys[:cap(p.keys)])
	if cap(p.keys) > 4096 || cap(p.vals) > 4096 {
		p.keys, p.vals = nil, nil
	}
	p.keys, p.vals = p.keys[:0], p.vals[:0]
	fastYAMLs.Put(p)
	return doc, ok
}

// fastYAMLs keeps readers for reuse, with their string caches: the
// strings and values in them are immutable.
var fastYAMLs sync.Pool

// fastYAMLText reports whether data holds only the characters the fast
// path reads: line feeds, printable ASCII, and valid UTF-8 of characters
// YAML allows that are not line breaks (NEL, LS, PS) or byte order marks.
// Tabs, carriage returns and control characters take the general path.
func fastYAMLText(data []byte) bool {
	const hi, lo7 = 0x8080808080808080, 0x7f7f7f7f7f7f7f7f
	for i := 0; i < len(data); {
		if i+8 <= len(data) {
			// eight ASCII bytes at a time: each 0x20-0x7e or a line feed
			w := binary.LittleEndian.Uint64(data[i:])
			if w&hi == 0 {
				printable := (w + 0x6060606060606060) & hi // >= 0x20
				x := w ^ 0x0a0a0a0a0a0a0a0a
				lf := ^((x & lo7) + lo7 | x) & hi
				y := w ^ lo7
				del := ^((y & lo7) + lo7 | y) & hi
				if (printable|lf)&^del == hi {
					i += 8
					continue
				}
			}
		}
		b := data[i]
		if b < utf8.RuneSelf {
			if (b < 0x20 && b != '\n') || b == 0x7f {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n == 1 || r < 0xA0 || r == 0x2028 || r == 0x2029 || r == 0xFEFF ||
			(r >= 0xD800 && r <= 0xDFFF) || r == 0xFFFE || r == 0xFFFF {
			return false
		}
		i += n
	}
	return true
}

type fyKind uint8

const (
	fyScalar fyKind = iota
	fyMap
	fySeq
)

// fyNode is the start of a node: a whole scalar, or where a collection's
// entries begin.
type fyNode struct {
	kind  fyKind
	tag   string // "" when untagged, else one of fastTags
	plain bool   // an untagged plain scalar (typed by rubyPlainScalar)
	value string // a scalar's text
	slot  int    // where value is in fastYAML.strs, plus one (0: not there)
	// col is the column of a block collection's keys or dashes; -1 for an
	// empty flow collection ({} or []).
	col int
}

// fastTags are the tags the fast path reads, as the YAML library reports
// them.
var fastTags = func() map[string]string {
	m := map[string]string{}
	for _, t := range []string{tagTagSet, tagSet, "!ruby/sym", "!ruby/symbol", "!binary", "!!binary", "!!str", "!str"} {
		m[t] = t
	}
	for _, k := range yamlClasses {
		t := "!ruby/object:" + k.name // k.tag() is set by init, after this
		m[t] = t
	}
	return m
}()

// fastYAML reads one document. Between nodes, i is at the first
// character of the next line that is not blank (or at the end), and
// lineStart at the start of that line.
type fastYAML struct {
	data      []byte
	i         int
	lineStart int
	maxDepth  int
	buf       []byte // scratch for folded and escaped scalars
	// strs are recent short strings, by hash, with what they are as
	// values: reports repeat their keys, tags, types, levels, false, 0...
	strs [1024]fyString
	slot int // where str put its last string, plus one (0: nowhere)
	// keys and vals are the stacks of the members and entries being read
	keys []string
	vals []any
	// the slabs the document is cut from (see allocKeys)
	objs    []jsonv.Object
	keySlab []string
	valSlab []any
}

type fyString struct {
	s      string
	quoted any    // s as a string value
	plain  any    // s typed as a plain scalar (when typed)
	key    string // s as a plain key (when keyed)
	typed  bool
	keyed  bool
}

func (p *fastYAML) col() int { return p.i - p.lineStart }

// blankz: a space, a line break or the end.
func (p *fastYAML) blankz(i int) bool {
	return i >= len(p.data) || p.data[i] == ' ' || p.data[i] == '\n'
}

func (p *fastYAML) eol() bool { return p.i >= len(p.data) || p.data[p.i] == '\n' }

func (p *fastYAML) skipSpaces() {
	for p.i < len(p.data) && p.data[p.i] == ' ' {
		p.i++
	}
}

// nextLine goes from the end of a line (i at its line feed or the end of
// the data) to the first character of the next line that is not blank.
func (p *fastYAML) nextLine() {
	d := p.data
	for p.i < len(d) {
		p.i++ // the line feed
		p.lineStart = p.i
		for p.i < len(d) && d[p.i] == ' ' {
			p.i++
		}
		if p.i < len(d) && d[p.i] != '\n' {
			return
		}
	}
}

// endLine ends a node that ends on its line: only spaces may follow.
func (p *fastYAML) endLine() bool {
	p.skipSpaces()
	if !p.eol() {
		return false
	}
	p.nextLine()
	return true
}

// isDash reports whether a block sequence entry ("- ") starts at i.
func (p *fastYAML) isDash(i int) bool {
	return i < len(p.data) && p.data[i] == '-' && p.blankz(i+1)
}

// str makes a string of b, reusing a recent equal one when b is short,
// and sets p.slot to where it is in p.strs, plus one (0: not there).
func (p *fastYAML) str(b []byte) string {
	n := len(b)
	if n > 48 || n == 0 {
		p.slot = 0
		return string(b)
	}
	h := uint32(n)*0x9E3779B1 ^ uint32(b[0])<<16 ^ uint32(b[n-1])<<8 ^ uint32(b[n/2]) ^ uint32(b[n*3/4])<<4 ^ uint32(b[n/4])<<12
	h ^= h >> 13
	i := int(h % uint32(len(p.strs)))
	e := &p.strs[i]
	if e.s != string(b) {
		*e = fyString{s: string(b)}
	}
	p.slot = i + 1
	return e.s
}

// plainStart reports whether a plain scalar may start at i (block
// context): not at an indicator, unless -, ? or : is followed by a
// non-space.
func (p *fastYAML) plainStart(i int) bool {
	d := p.data
	if i >= len(d) {
		return false
	}
	switch d[i] {
	case ' ', '\n', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
		return false
	case '-', '?', ':':
		return !p.blankz(i + 1)
	}
	return true
}

func (p *fastYAML) root() (any, bool) {
	d := p.data
	if len(d) >= 3 && d[0] == '-' && d[1] == '-' && d[2] == '-' && p.blankz(3) {
		p.i = 3
	} else {
		// the document starts at its first line that is not blank
		p.skipSpaces()
		if p.eol() {
			p.nextLine()
		}
	}
	h, ok := p.header(-1, false)
	if !ok || h.kind != fyMap || h.tag != yamlReport.tag() || 0 > p.maxDepth {
		return nil, false
	}
	o, ok := p.object(h, 0, yamlReport, true)
	if !ok || p.i < len(d) {
		return nil, false
	}
	return o, true
}

// header reads the start of a node at i: after "key:", "- ", "---" or at
// the document's start, the spaces before the node not yet skipped.
// parent is the column of the innermost block collection around it (-1:
// none); item says that the node is a sequence entry, which may then be a
// mapping or sequence starting on the same line ("- a: 1", "- - 1").
func (p *fastYAML) header(parent int, item bool) (fyNode, bool) {
	d := p.data
	p.skipSpaces()
	tag := ""
	if p.i < len(d) && d[p.i] == '!' {
		j := p.i
		for j < len(d) && d[j] != ' ' && d[j] != '\n' {
			j++
		}
		t, ok := fastTags[string(d[p.i:j])]
		if !ok {
			return fyNode{}, false
		}
		tag, p.i = t, j
		p.skipSpaces()
		if p.eol() {
			// a tagged collection on the lines below
			p.nextLine()
			if p.i >= len(d) || p.col() <= parent {
				return fyNode{}, false
			}
			return p.block(tag), true
		}
		item = false // "!tag a: b" tags the key
	}
	if p.eol() {
		p.nextLine()
		if p.i < len(d) {
			if c := p.col(); c > parent {
				return p.block(""), true
			} else if c == parent && !item && p.isDash(p.i) {
				// a sequence at the column of its mapping's keys
				return fyNode{kind: fySeq, col: c}, true
			}
		}
		if parent < 0 {
			return fyNode{}, false
		}
		return fyNode{kind: fyScalar, plain: true}, true // null
	}
	start, startLine := p.i, p.lineStart
	var n fyNode
	switch c := d[p.i]; c {
	case '{', '[':
		if p.i+1 >= len(d) || d[p.i+1] != c+2 { // } and ]
			return fyNode{}, false
		}
		p.i += 2
		if !p.endLine() {
			return fyNode{}, false
		}
		if c == '{' {
			return fyNode{kind: fyMap, tag: tag, col: -1}, true
		}
		return fyNode{kind: fySeq, tag: tag, col: -1}, true
	case '|', '>':
		v, ok := p.blockScalar(parent, c == '|')
		if !ok {
			return fyNode{}, false
		}
		n = fyNode{kind: fyScalar, tag: tag, value: v}
	case '\'', '"':
		p.slot = 0
		v, ok := p.quoted(c == '\'')
		slot := p.slot
		if !ok {
			return fyNode{}, false
		}
		if item && p.i < len(d) && d[p.i] == ':' && p.blankz(p.i+1) {
			// "- 'key': value": read again as a mapping's key
			p.i, p.lineStart = start, startLine
			return fyNode{kind: fyMap, col: start - startLine}, true
		}
		if !p.endLine() {
			return fyNode{}, false
		}
		n = fyNode{kind: fyScalar, tag: tag, value: v, slot: slot}
	case '-':
		if p.blankz(p.i + 1) {
			if !item {
				return fyNode{}, false
			}
			return fyNode{kind: fySeq, col: p.col()}, true
		}
		fallthrough
	default:
		if !p.plainStart(p.i) {
			return fyNode{}, false
		}
		p.slot = 0
		v, key, ok := p.plain(parent)
		if !ok {
			return fyNode{}, false
		}
		if key {
			if !item {
				return fyNode{}, false
			}
			p.i = start
			return fyNode{kind: fyMap, col: start - startLine}, true
		}
		n = fyNode{kind: fyScalar, tag: tag, plain: tag == "", value: v, slot: p.slot}
	}
	if parent < 0 {
		return fyNode{}, false
	}
	return n, true
}

// block is the block collection whose first entry is at i.
func (p *fastYAML) block(tag string) fyNode {
	if p.isDash(p.i) {
		return fyNode{kind: fySeq, tag: tag, col: p.col()}
	}
	return fyNode{kind: fyMap, tag: tag, col: p.col()}
}

// plain reads a plain scalar value at i, folded over the lines that
// follow it indented past parent. key reports a scalar that ends in ": "
// on its first line instead (i is then left there).
func (p *fastYAML) plain(parent int) (v string, key bool, ok bool) {
	d := p.data
	start := p.i
	j := p.i
	for j < len(d) && d[j] != '\n' {
		if d[j] == ':' && p.blankz(j+1) {
			return "", true, true
		}
		if d[j] == ' ' && j+1 < len(d) && d[j+1] == '#' {
			return "", false, false // a comment
		}
		j++
	}
	end := j
	for d[end-1] == ' ' {
		end--
	}
	p.i = j
	// continuation lines: indented past parent, not blank
	indent := parent + 1
	folded := false
	for p.i < len(d) {
		k, breaks, ls := p.i, 0, 0
		for {
			k++
			breaks++
			ls = k
			for k < len(d) && d[k] == ' ' {
				k++
			}
			if k >= len(d) || d[k] != '\n' {
				break
			}
		}
		if k >= len(d) || k-ls < indent {
			p.i, p.lineStart = k, ls
			break
		}
		if d[k] == '#' {
			return "", false, false
		}
		e := k
		for e < len(d) && d[e] != '\n' {
			if d[e] == ':' && p.blankz(e+1) || d[e] == ' ' && e+1 < len(d) && d[e+1] == '#' {
				return "", false, false
			}
			e++
		}
		te := e
		for d[te-1] == ' ' {
			te--
		}
		if !folded {
			p.buf = append(p.buf[:0], d[start:end]...)
			folded = true
		}
		if breaks == 1 {
			p.buf = append(p.buf, ' ')
		} else {
			for ; breaks > 1; breaks-- {
				p.buf = append(p.buf, '\n')
			}
		}
		p.buf = append(p.buf, d[k:te]...)
		p.i, p.lineStart = e, ls
	}
	if folded {
		p.slot = 0
		return string(p.buf), false, true
	}
	return p.str(d[start:end]), false, true
}

// quoted reads a single- or double-quoted scalar at i as the YAML
// library's scanner does (yaml_parser_scan_flow_scalar), leaving i after
// the closing quote.
func (p *fastYAML) quoted(single bool) (string, bool) {
	d := p.data
	q := d[p.i]
	p.i++
	start := p.i
	// the common case: on one line, without escapes
	for j := p.i; j < len(d); j++ {
		c := d[j]
		if c == q {
			if single && j+1 < len(d) && d[j+1] == '\'' {
				break
			}
			p.i = j + 1
			return p.str(d[start:j]), true
		}
		if c == '\n' || c == '\\' && !single {
			break
		}
	}
	p.slot = 0
	s := p.buf[:0]
	defer func() { p.buf = s[:0] }()
	for {
		// a document marker at the start of a line
		if p.i == p.lineStart && p.i+3 <= len(d) && (string(d[p.i:p.i+3]) == "---" || string(d[p.i:p.i+3]) == "...") && p.blankz(p.i+3) {
			return "", false
		}
		if p.i >= len(d) {
			return "", false
		}
		leadingBlanks := false
		for p.i < len(d) && d[p.i] != ' ' && d[p.i] != '\n' {
			c := d[p.i]
			if single && c == '\'' {
				if p.i+1 < len(d) && d[p.i+1] == '\'' {
					s = append(s, '\'')
					p.i += 2
					continue
				}
				break
			}
			if !single && c == '"' {
				break
			}
			if !single && c == '\\' {
				if p.i+1 < len(d) && d[p.i+1] == '\n' {
					p.i += 2
					p.lineStart = p.i
					leadingBlanks = true
					break
				}
				if p.i+1 >= len(d) {
					return "", false
				}
				n := 0
				switch d[p.i+1] {
				case '0':
					s = append(s, 0)
				case 'a':
					s = append(s, '\a')
				case 'b':
					s = append(s, '\b')
				case 't', '\t':
					s = append(s, '\t')
				case 'n':
					s = append(s, '\n')
				case 'v':
					s = append(s, '\v')
				case 'f':
					s = append(s, '\f')
				case 'r':
					s = append(s, '\r')
				case 'e':
					s = append(s, 0x1b)
				case ' ':
					s = append(s, ' ')
				case '"':
					s = append(s, '"')
				case '\'':
					s = append(s, '\'')
				case '\\':
					s = append(s, '\\')
				case 'N':
					s = append(s, 0xC2, 0x85)
				case '_':
					s = append(s, 0xC2, 0xA0)
				case 'L':
					s = append(s, 0xE2, 0x80, 0xA8)
				case 'P':
					s = append(s, 0xE2, 0x80, 0xA9)
				case 'x':
					n = 2
				case 'u':
					n = 4
				case 'U':
					n = 8
				default:
					return "", false
				}
				p.i += 2
				if n > 0 {
					if p.i+n > len(d) {
						return "", false
					}
					v := 0
					for k := 0; k < n; k++ {
						h := hexVal(d[p.i+k])
						if h < 0 {
							return "", false
						}
						v = v<<4 + h
					}
					if v >= 0xD800 && v <= 0xDFFF || v > 0x10FFFF {
						return "", false
					}
					// the scanner's own encoding (it writes any value it
					// accepts, as utf8.AppendRune does for these)
					s = utf8.AppendRune(s, rune(v))
					p.i += n
				}
				continue
			}
			s = append(s, c)
			p.i++
		}
		if p.i < len(d) && d[p.i] == q {
			break
		}
		// blanks and line breaks
		ws := 0
		leadingBreak, trailing := false, 0
		for p.i < len(d) && (d[p.i] == ' ' || d[p.i] == '\n') {
			if d[p.i] == ' ' {
				if !leadingBlanks {
					ws++
				}
				p.i++
				continue
			}
			if !leadingBlanks {
				ws = 0
				leadingBreak, leadingBlanks = true, true
			} else {
				trailing++
			}
			p.i++
			p.lineStart = p.i
		}
		if leadingBlanks {
			if leadingBreak && trailing == 0 {
				s = append(s, ' ')
			}
			for ; trailing > 0; trailing-- {
				s = append(s, '\n')
			}
		} else {
			for ; ws > 0; ws-- {
				s = append(s, ' ')
			}
		}
	}
	p.i++ // the closing quote
	return string(s), true
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// blockScalar reads a literal (|) or folded (>) scalar at i as the YAML
// library's scanner does (yaml_parser_scan_block_scalar); parent is the
// column of the collection around it.
func (p *fastYAML) blockScalar(parent int, literal bool) (string, bool) {
	d := p.data
	p.i++
	chomping, increment := 0, 0
	digit := func() bool {
		if p.i < len(d) && d[p.i] >= '0' && d[p.i] <= '9' {
			if d[p.i] == '0' {
				return false
			}
			increment = int(d[p.i] - '0')
			p.i++
		}
		return true
	}
	if p.i < len(d) && (d[p.i] == '+' || d[p.i] == '-') {
		chomping = 1
		if d[p.i] == '-' {
			chomping = -1
		}
		p.i++
		if !digit() {
			return "", false
		}
	} else if p.i < len(d) && d[p.i] >= '0' && d[p.i] <= '9' {
		if !digit() {
			return "", false
		}
		if p.i < len(d) && (d[p.i] == '+' || d[p.i] == '-') {
			chomping = 1
			if d[p.i] == '-' {
				chomping = -1
			}
			p.i++
		}
	}
	p.skipSpaces()
	if !p.eol() {
		return "", false // a comment, or anything else
	}
	if p.i < len(d) {
		p.i++
		p.lineStart = p.i
	}
	indent := 0
	if increment > 0 {
		if parent >= 0 {
			indent = parent + increment
		} else {
			indent = increment
		}
	}
	s := p.buf[:0]
	defer func() { p.buf = s[:0] }()
	trailing := 0
	// breaks eats indentation and empty lines, counting the line breaks
	// in trailing, and settles the indentation when it is not yet known.
	breaks := func() {
		maxIndent := 0
		for {
			for (indent == 0 || p.col() < indent) && p.i < len(d) && d[p.i] == ' ' {
				p.i++
			}
			if p.col() > maxIndent {
				maxIndent = p.col()
			}
			if p.i >= len(d) || d[p.i] != '\n' {
				break
			}
			p.i++
			p.lineStart = p.i
			trailing++
		}
		if indent == 0 {
			indent = max(maxIndent, parent+1, 1)
		}
	}
	breaks()
	leadingBreak, leadingBlank := false, false
	for p.col() == indent && p.i < len(d) {
		trailingBlank := d[p.i] == ' '
		if !literal && !leadingBlank && !trailingBlank && leadingBreak {
			if trailing == 0 {
				s = append(s, ' ')
			}
		} else if leadingBreak {
			s = append(s, '\n')
		}
		leadingBreak = false
		for ; trailing > 0; trailing-- {
			s = append(s, '\n')
		}
		leadingBlank = d[p.i] == ' '
		j := p.i
		for j < len(d) && d[j] != '\n' {
			j++
		}
		s = append(s, d[p.i:j]...)
		p.i = j
		if p.i < len(d) {
			p.i++
			p.lineStart = p.i
			leadingBreak = true
		}
		breaks()
	}
	if chomping != -1 && leadingBreak {
		s = append(s, '\n')
	}
	if chomping == 1 {
		for ; trailing > 0; trailing-- {
			s = append(s, '\n')
		}
	}
	// i is at what follows: the first character of a line indented less,
	// or the end
	return string(s), true
}

// key reads a mapping key at i (a plain or quoted scalar on one line,
// ":" right after it) and the ":", returning its text and whether it is
// plain.
func (p *fastYAML) key() (string, bool, bool) {
	d := p.data
	start, line := p.i, p.lineStart
	if c := d[p.i]; c == '\'' || c == '"' {
		s, ok := p.quoted(c == '\'')
		if !ok || p.lineStart != line || p.i >= len(d) || d[p.i] != ':' || !p.blankz(p.i+1) || p.i-start > 1000 {
			return "", false, false
		}
		p.i++
		return s, false, true
	}
	if !p.plainStart(p.i) {
		return "", false, false
	}
	j := p.i
	for {
		if j >= len(d) || d[j] == '\n' || j-start > 1000 {
			return "", false, false
		}
		if d[j] == ':' && p.blankz(j+1) {
			break
		}
		if d[j] == ' ' && j+1 < len(d) && d[j+1] == '#' {
			return "", false, false
		}
		j++
	}
	if d[j-1] == ' ' {
		return "", false, false
	}
	p.i = j + 1
	return p.str(d[start:j]), true, true
}

// entries calls f for each entry of block collection h (a mapping's key
// and ":" or a sequence's "-" already read), i at what follows them.
func (p *fastYAML) entries(h fyNode, f func() bool) bool {
	if h.col < 0 {
		return true // {} or []
	}
	d := p.data
	for {
		if h.kind == fySeq {
			p.i++ // the dash
		}
		if !f() {
			return false
		}
		if p.i >= len(d) {
			return true
		}
		switch c := p.col(); {
		case c < h.col:
			return true
		case c > h.col:
			return false
		}
		// at the collection's column: its next entry, or the end of a
		// sequence at its mapping's column
		//
		// A line at a sequence's column that is not an entry ends it:
		// that is right for a sequence at its mapping's keys' column,
		// whose mapping goes on there, and an error for a sequence
		// indented past its parent, which the parent's own check of the
		// line then finds (the line is past the parent's column).
		if p.isDash(p.i) != (h.kind == fySeq) {
			return h.kind == fySeq
		}
	}
}

// scalar types a scalar node as yamlConv.scalar does.
func (p *fastYAML) scalar(h fyNode) (any, bool) {
	switch h.tag {
	case "":
		var e *fyString
		if h.slot > 0 && p.strs[h.slot-1].s == h.value {
			e = &p.strs[h.slot-1]
		}
		if !h.plain {
			if e == nil {
				return h.value, true
			}
			if e.quoted == nil {
				e.quoted = h.value
			}
			return e.quoted, true
		}
		if e != nil && e.typed {
			return e.plain, true
		}
		v, err := rubyPlainScalar(h.value)
		if e != nil && err == nil {
			e.plain, e.typed = v, true
		}
		return v, err == nil
	case "!!str", "!str", "!ruby/sym", "!ruby/symbol":
		return h.value, true
	case "!binary", "!!binary":
		return base64.StdEncoding.EncodeToString(rubyUnpackBase64(h.value)), true
	}
	return nil, false
}

// keyString types a key as yamlConv.key does.
func keyString(s string, plain bool) (string, bool) {
	if !plain {
		return s, true
	}
	if s == "<<" {
		return "", false // a merge key
	}
	v, err := rubyPlainScalar(s)
	if err != nil {
		return "", false
	}
	switch x := v.(type) {
	case nil:
		return "", true
	case bool:
		if x {
			return "true", true
		}
		return "false", true
	case string:
		return x, true
	case jsonv.Number:
		return string(x), true
	case yamlTime:
		return x.toS, true
	}
	return "", false
}

// omitted stands, on fastYAML.vals, for a member a tagged object leaves
// out.
var omitted = &struct{ omitted bool }{true}

// members reads the entries of mapping h (depth its depth): for each, it
// pushes the key, typed as yamlConv.key types it, on p.keys, and calls f,
// i at the value, which pushes one value on p.vals. A repeated key gives
// up. The entries are then p.keys[m.keys:] and p.vals[m.vals:].
func (p *fastYAML) members(h fyNode, depth int, f func(key string) bool) (m stackMark, ok bool) {
	m = stackMark{len(p.keys), len(p.vals)}
	start := m.keys
	var seen map[string]struct{} // past a few keys
	ok = p.entries(h, func() bool {
		if depth+1 > p.maxDepth {
			return false
		}
		raw, plain, ok := p.key()
		if !ok {
			return false
		}
		var key string
		if e := &p.strs[max(p.slot-1, 0)]; plain && p.slot > 0 && e.keyed && e.s == raw {
			key = e.key
		} else if key, ok = keyString(raw, plain); !ok {
			return false
		} else if plain && p.slot > 0 && e.s == raw {
			e.key, e.keyed = key, true
		}
		if n := len(p.keys) - start; seen == nil && n < 24 {
			for _, k := range p.keys[start:] {
				if k == key {
					return false
				}
			}
		} else {
			if seen == nil {
				seen = make(map[string]struct{}, 2*n)
				for _, k := range p.keys[start:] {
					seen[k] = struct{}{}
				}
			}
			if _, dup := seen[key]; dup {
				return false
			}
			seen[key] = struct{}{}
		}
		p.keys = append(p.keys, key)
		return f(key)
	})
	return m, ok
}

// stackMark is where an object's members start on p.keys and p.vals.
type stackMark struct{ keys, vals int }

// pop makes an object of the members from m on (less the omitted ones)
// and takes them off the stacks.
func (p *fastYAML) pop(m stackMark) *jsonv.Object {
	if len(p.objs) == cap(p.objs) {
		p.objs = make([]jsonv.Object, 0, 64)
	}
	p.objs = p.objs[:len(p.objs)+1]
	out := &p.objs[len(p.objs)-1]
	n := 0
	for _, v := range p.vals[m.vals:] {
		if v != omitted {
			n++
		}
	}
	if n > 0 {
		out.Keys, out.Values = p.allocKeys(n)[:0], p.allocVals(n)[:0]
		for i, v := range p.vals[m.vals:] {
			if v != omitted {
				out.Keys, out.Values = append(out.Keys, p.keys[m.keys+i]), append(out.Values, v)
			}
		}
	}
	p.keys = p.keys[:m.keys]
	p.truncate(m.vals)
	return out
}

// The document's objects, keys and values are cut from larger arrays
// (slabs), a few allocations for hundreds; a slab lives as long as the
// document, all of whose parts live as long.
const slabLen = 512

// allocKeys is a slice of n strings, of capacity n.
func (p *fastYAML) allocKeys(n int) []string { return fromSlab(&p.keySlab, n) }

// allocVals is a slice of n values, of capacity n.
func (p *fastYAML) allocVals(n int) []any {
	if n == 0 {
		return []any{} // not nil, as the general path's
	}
	return fromSlab(&p.valSlab, n)
}

// fromSlab cuts a slice of n elements, of capacity n, from *slab (a new
// slab when it has no room; a slice of its own when n is large).
func fromSlab[T any](slab *[]T, n int) []T {
	if n > slabLen/4 {
		return make([]T, n)
	}
	if cap(*slab)-len(*slab) < n {
		*slab = make([]T, 0, slabLen)
	}
	i := len(*slab)
	*slab = (*slab)[:i+n]
	return (*slab)[i : i+n : i+n]
}

// truncate takes the values from start on off p.vals (what is beyond its
// top is overwritten as the document goes on, and cleared after it).
func (p *fastYAML) truncate(start int) {
	p.vals = p.vals[:start]
}

// object is yamlConv.object.
func (p *fastYAML) object(h fyNode, depth int, k *yamlClass, isTagged bool) (*jsonv.Object, bool) {
	start, ok := p.members(h, depth, func(key string) bool {
		vh, ok := p.header(h.col, false)
		if !ok {
			return false
		}
		var v any
		if sub := k.nestedOf(key); sub != nil {
			v, ok = p.collection(vh, depth+1, sub)
		} else {
			v, ok = p.value(vh, depth+1)
		}
		if isTagged && k.omits(key, v) {
			v = omitted
		}
		p.vals = append(p.vals, v)
		return ok
	})
	if !ok {
		return nil, false
	}
	if !isTagged {
		return p.pop(start), true
	}
	keys := p.keys[start.keys:]
	out := p.pop(start) // keys stays valid until the next push
	k.complete(out, func(key string) bool { return slices.Contains(keys, key) })
	return out, true
}

// seq reads the entries of sequence h, each converted by f (which
// pushes one value on p.vals).
func (p *fastYAML) seq(h fyNode, f func(fyNode) bool) ([]any, bool) {
	start := len(p.vals)
	ok := p.entries(h, func() bool {
		eh, ok := p.header(h.col, true)
		return ok && f(eh)
	})
	if !ok {
		return nil, false
	}
	out := p.allocVals(len(p.vals) - start)
	copy(out, p.vals[start:])
	p.truncate(start)
	return out, true
}

// collection is yamlConv.collection.
func (p *fastYAML) collection(h fyNode, depth int, k *yamlClass) (any, bool) {
	if depth > p.maxDepth {
		return nil, false
	}
	switch {
	case h.kind == fySeq && h.tag == "":
		return p.seq(h, func(eh fyNode) bool {
			v, ok := p.element(eh, depth+1, k)
			p.vals = append(p.vals, v)
			return ok
		})
	case h.kind == fyMap && h.tag == "":
		start, ok := p.members(h, depth, func(key string) bool {
			vh, ok := p.header(h.col, false)
			if !ok {
				return false
			}
			v, ok := p.element(vh, depth+1, k)
			p.vals = append(p.vals, v)
			return ok
		})
		if !ok {
			return nil, false
		}
		return p.pop(start), true
	}
	return p.convert(h, depth)
}

// element is yamlConv.element.
func (p *fastYAML) element(h fyNode, depth int, k *yamlClass) (any, bool) {
	if depth > p.maxDepth {
		return nil, false
	}
	if h.kind == fyMap {
		switch {
		case h.tag == "":
			return p.object(h, depth, k, false)
		case h.tag == k.tag():
			return p.object(h, depth, k, true)
		case isClassTag(h.tag):
			return nil, false
		}
	}
	return p.convert(h, depth)
}

// value is yamlConv.value.
func (p *fastYAML) value(h fyNode, depth int) (any, bool) {
	if depth > p.maxDepth {
		return nil, false
	}
	return p.convert(h, depth)
}

// convert is yamlConv.convert.
func (p *fastYAML) convert(h fyNode, depth int) (any, bool) {
	switch h.kind {
	case fyScalar:
		v, ok := p.scalar(h)
		if yt, isTime := v.(yamlTime); isTime {
			return yt.iso, ok
		}
		return v, ok
	case fySeq:
		if h.tag != "" {
			return nil, false
		}
		return p.seq(h, func(eh fyNode) bool {
			v, ok := p.value(eh, depth+1)
			p.vals = append(p.vals, v)
			return ok
		})
	}
	switch h.tag {
	case "":
		return p.object(h, depth, nil, false)
	case tagTagSet, tagSet:
		return p.set(h, depth)
	}
	return nil, false
}

// set is yamlConv.set: {hash: {element: true, ...}}.
func (p *fastYAML) set(h fyNode, depth int) (any, bool) {
	var out []any
	members := 0
	ok := p.entries(h, func() bool {
		if members++; members > 1 || depth+1 > p.maxDepth {
			return false
		}
		raw, plain, ok := p.key()
		if !ok {
			return false
		}
		if key, ok := keyString(raw, plain); !ok || key != "hash" {
			return false
		}
		hh, ok := p.header(h.col, false)
		if !ok || hh.kind != fyMap || hh.tag != "" {
			return false
		}
		start := len(p.vals)
		if !p.entries(hh, func() bool {
			if depth+2 > p.maxDepth {
				return false
			}
			raw, plain, ok := p.key()
			if !ok {
				return false
			}
			e, ok := p.scalar(fyNode{kind: fyScalar, plain: plain, value: raw, slot: p.slot})
			if !ok {
				return false
			}
			if yt, isTime := e.(yamlTime); isTime {
				e = yt.iso
			}
			vh, ok := p.header(hh.col, false)
			if !ok {
				return false
			}
			v, ok := p.value(vh, depth+2)
			if !ok || v != true {
				return false
			}
			p.vals = append(p.vals, e)
			return true
		}) {
			return false
		}
		out = make([]any, len(p.vals)-start)
		copy(out, p.vals[start:])
		p.truncate(start)
		return true
	})
	if !ok || members != 1 {
		return nil, false
	}
	return out, true
}
