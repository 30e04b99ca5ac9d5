package pql

import (
	"strings"
	"unicode/utf8"
)

// Printed forms of the grammar's regular expressions, as Instaparse shows
// them in "Expected" lists.
const (
	reWS            = `#"\s+"`
	reDigits        = `#"[0-9]+"`
	reField         = `#"[a-zA-Z0-9_]+\??"`
	reQuotedField   = `#"\".*?\"(?=\.|\s)"`
	reStandardField = `#"[^\s\.\",\[\]!<=>~]+(\[\d+\])?"`
	reMatchField    = `#"match\(.*?\)"`
	notAscDesc      = `NOT "asc" | "desc"`
	endOfString     = ":end-of-string"
)

// maxDepth bounds the nesting of memoised rule invocations (parentheses,
// negations, arrays, subqueries and long and/or chains all nest) so that
// hostile input cannot exhaust the stack; deeper input fails to parse.
const maxDepth = 10000

// reason is one expected terminal at the failure position. full marks a
// terminal that had to reach the end of the input.
type reason struct {
	text string
	full bool
}

// failState is the furthest failure seen: its input index and the
// expected terminals there, in recording order (a re-recorded terminal
// moves to the end).
type failState struct {
	idx     int
	reasons []reason
}

func (f *failState) add(r reason) {
	for i, x := range f.reasons {
		if x == r {
			f.reasons = append(f.reasons[:i], f.reasons[i+1:]...)
			break
		}
	}
	f.reasons = append(f.reasons, r)
}

// res is one parse of a rule: where it ends and the value it builds.
type res struct {
	end int
	val any
}

// resSet collects parses, keeping the first one for each end position (the
// continuation only depends on the end, and the grammar's ambiguities give
// equal values).
type resSet struct {
	list []res
	seen map[int]bool
}

func (s *resSet) add(end int, val any) {
	if s.seen == nil {
		s.seen = map[int]bool{}
	}
	if s.seen[end] {
		return
	}
	s.seen[end] = true
	s.list = append(s.list, res{end, val})
}

type memoKey struct{ kind, pos int }

type memoEntry struct {
	res      []res
	fail     failState
	inFlight bool
}

type parser struct {
	src   string
	fail  failState
	memo  map[memoKey]*memoEntry
	depth int
	// tooDeep is set when the input nested past maxDepth.
	tooDeep bool
}

func newParser(src string) *parser {
	return &parser{src: src, fail: failState{idx: -1}, memo: map[memoKey]*memoEntry{}}
}

// record notes that the terminal r was expected at input index idx.
func (p *parser) record(idx int, r reason) {
	switch {
	case idx > p.fail.idx:
		p.fail.idx = idx
		p.fail.reasons = append(p.fail.reasons[:0:0], r)
	case idx == p.fail.idx:
		p.fail.add(r)
	}
}

// merge replays the failures recorded by a memoised rule.
func (p *parser) merge(f failState) {
	switch {
	case f.idx > p.fail.idx:
		p.fail.idx = f.idx
		p.fail.reasons = append([]reason(nil), f.reasons...)
	case f.idx == p.fail.idx:
		for _, r := range f.reasons {
			p.fail.add(r)
		}
	}
}

// memoize runs rule body f once per (kind, pos); later calls return the same
// parses and replay the failures the first run recorded.
func (p *parser) memoize(kind, pos int, f func() []res) []res {
	k := memoKey{kind, pos}
	if e, ok := p.memo[k]; ok {
		if e.inFlight { // cannot happen with this grammar (no left recursion)
			return nil
		}
		p.merge(e.fail)
		return e.res
	}
	if p.depth >= maxDepth {
		p.tooDeep = true
		return nil
	}
	e := &memoEntry{inFlight: true}
	p.memo[k] = e
	saved := p.fail
	p.fail = failState{idx: -1}
	p.depth++
	r := f()
	p.depth--
	e.res, e.fail, e.inFlight = r, p.fail, false
	p.fail = saved
	p.merge(e.fail)
	return r
}

// lit matches the literal string s at pos (case-sensitively).
func (p *parser) lit(pos int, s string) bool {
	if strings.HasPrefix(p.src[pos:], s) {
		return true
	}
	p.record(pos, reason{text: s})
	return false
}

// isWS is Java's \s: ASCII space, \t, \n, \x0B, \f, \r.
func isWS(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func (p *parser) wsEnd(pos int) int {
	i := pos
	for i < len(p.src) && isWS(p.src[i]) {
		i++
	}
	return i
}

// ws matches the mandatory <whitespace> (#"\s+", greedy).
func (p *parser) ws(pos int) (int, bool) {
	if end := p.wsEnd(pos); end > pos {
		return end, true
	}
	p.record(pos, reason{text: reWS})
	return pos, false
}

// optWS is [<whitespace>]: the position after the whitespace (if any), then
// pos itself.
func (p *parser) optWS(pos int) []int {
	if end, ok := p.ws(pos); ok {
		return []int{end, pos}
	}
	return []int{pos}
}

// starWS is {<whitespace>}: like optWS, but a second repetition is tried
// (and fails) after the first.
func (p *parser) starWS(pos int) []int {
	if end, ok := p.ws(pos); ok {
		p.ws(end)
		return []int{end, pos}
	}
	return []int{pos}
}

// digits matches #"[0-9]+".
func (p *parser) digits(pos int) (int, bool) {
	i := pos
	for i < len(p.src) && p.src[i] >= '0' && p.src[i] <= '9' {
		i++
	}
	if i == pos {
		p.record(pos, reason{text: reDigits})
		return pos, false
	}
	return i, true
}

func isFieldChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// fieldRe matches #"[a-zA-Z0-9_]+\??".
func (p *parser) fieldRe(pos int) (int, bool) {
	i := pos
	for i < len(p.src) && isFieldChar(p.src[i]) {
		i++
	}
	if i == pos {
		p.record(pos, reason{text: reField})
		return pos, false
	}
	if i < len(p.src) && p.src[i] == '?' {
		i++
	}
	return i, true
}

// isLineTerm reports the characters Java's "." does not match.
func isLineTerm(r rune) bool {
	return r == '\n' || r == '\r' || r == '\u0085' || r == '\u2028' || r == '\u2029'
}

// quotedField matches #"\".*?\"(?=\.|\s)".
func (p *parser) quotedField(pos int) (int, bool) {
	s := p.src
	if pos < len(s) && s[pos] == '"' {
		for j := pos + 1; j < len(s); {
			if s[j] == '"' && j+1 < len(s) && (s[j+1] == '.' || isWS(s[j+1])) {
				return j + 1, true
			}
			r, size := utf8.DecodeRuneInString(s[j:])
			if isLineTerm(r) {
				break
			}
			j += size
		}
	}
	p.record(pos, reason{text: reQuotedField})
	return pos, false
}

func isStandardExcluded(c byte) bool {
	switch c {
	case '.', '"', ',', '[', ']', '!', '<', '=', '>', '~':
		return true
	}
	return isWS(c)
}

// standardField matches #"[^\s\.\",\[\]!<=>~]+(\[\d+\])?".
func (p *parser) standardField(pos int) (int, bool) {
	s := p.src
	j := pos
	for j < len(s) && !isStandardExcluded(s[j]) {
		j++
	}
	if j == pos {
		p.record(pos, reason{text: reStandardField})
		return pos, false
	}
	if j < len(s) && s[j] == '[' {
		k := j + 1
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		if k > j+1 && k < len(s) && s[k] == ']' {
			j = k + 1
		}
	}
	return j, true
}

// matchField matches #"match\(.*?\)".
func (p *parser) matchField(pos int) (int, bool) {
	s := p.src
	if strings.HasPrefix(s[pos:], "match(") {
		for j := pos + len("match("); j < len(s); {
			if s[j] == ')' {
				return j + 1, true
			}
			r, size := utf8.DecodeRuneInString(s[j:])
			if isLineTerm(r) {
				break
			}
			j += size
		}
	}
	p.record(pos, reason{text: reMatchField})
	return pos, false
}

// quotedBody matches #"(?:[^q\\]|\\.)*" (q the quote character) greedily and
// returns where it stops; it never fails.
func (p *parser) quotedBody(pos int, q byte) int {
	s := p.src
	j := pos
	for j < len(s) && s[j] != q {
		if s[j] == '\\' {
			if j+1 >= len(s) {
				break
			}
			r, size := utf8.DecodeRuneInString(s[j+1:])
			if isLineTerm(r) {
				break
			}
			j += 1 + size
			continue
		}
		_, size := utf8.DecodeRuneInString(s[j:])
		j += size
	}
	return j
}
