package pgcompat

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
)

// This file translates PostgreSQL 15 regular expressions (the `~` operator:
// Henry Spencer's engine, src/backend/regex/regc_lex.c and regcomp.c, in
// ARE mode) into Go RE2 syntax. The lexer and the recursive-descent parser
// are a port of PostgreSQL's, so syntax errors are detected in the same order
// and reported with PostgreSQL's messages.
//
// Only match/no-match matters for `~`, so PostgreSQL's leftmost-longest and
// greediness rules (which decide *which* substring matches) do not have to be
// reproduced; greediness markers are passed through anyway.
//
// Character classes follow a UTF-8 database with LC_CTYPE C.UTF-8 (glibc):
// \w, \s, [[:alpha:]] … are Unicode-aware, \d and [[:digit:]] are 0-9.
//
// Approximations (documented, deliberate):
//   - \y, \m, \M, [[:<:]], [[:>:]] become Go's \b (word boundary over ASCII
//     word characters). \m/\M are exact when the neighbouring atom is a word
//     character (the usual \mfoo\M); boundaries next to non-ASCII letters or
//     digits differ.
//   - \Y becomes \B with the same caveat.
//   - Case-insensitive matching uses Go's Unicode simple case folding;
//     PostgreSQL uses towlower/towupper per character (differs only for a few
//     characters such as the Kelvin sign or titlecase digraphs).
//   - Back-references (\1) and lookahead/lookbehind constraints are valid in
//     PostgreSQL but cannot be expressed in RE2: after the whole pattern has
//     been checked for PostgreSQL syntax errors, CompileRegex returns an
//     *UnsupportedRegexError for them.
//   - Basic REs (the embedded option b) are reported as unsupported.

// RegexError is a syntax error PostgreSQL itself would raise. Error() is the
// text of PostgreSQL's message (the caller adds "ERROR: "), e.g.
// "invalid regular expression: quantifier operand invalid".
type RegexError struct {
	Code int    // PostgreSQL's REG_* code
	Msg  string // regerror text, e.g. "quantifier operand invalid"
}

func (e *RegexError) Error() string { return "invalid regular expression: " + e.Msg }

// UnsupportedRegexError means the pattern is valid for PostgreSQL but cannot
// be evaluated with Go's RE2 engine (back-references, lookaround, BREs, RE2
// size limits).
type UnsupportedRegexError struct {
	Feature string
}

func (e *UnsupportedRegexError) Error() string {
	return "regular expression feature not supported by this implementation: " + e.Feature
}

// ErrUnsupportedRegex matches every *UnsupportedRegexError with errors.Is.
var ErrUnsupportedRegex = errors.New("unsupported regular expression feature")

func (e *UnsupportedRegexError) Is(target error) bool { return target == ErrUnsupportedRegex }

// PostgreSQL's REG_* error codes and regerror texts (regex/regerrs.h).
const (
	regBADPAT   = 2
	regECOLLATE = 3
	regECTYPE   = 4
	regEESCAPE  = 5
	regESUBREG  = 6
	regEBRACK   = 7
	regEPAREN   = 8
	regEBRACE   = 9
	regBADBR    = 10
	regERANGE   = 11
	regBADRPT   = 13
	regBADOPT   = 18
	regETOOBIG  = 15
)

var regErrText = map[int]string{
	regBADPAT:   "invalid regexp (reg version 0.8)",
	regECOLLATE: "invalid collating element",
	regECTYPE:   "invalid character class",
	regEESCAPE:  "invalid escape \\ sequence",
	regESUBREG:  "invalid backreference number",
	regEBRACK:   "brackets [] not balanced",
	regEPAREN:   "parentheses () not balanced",
	regEBRACE:   "braces {} not balanced",
	regBADBR:    "invalid repetition count(s)",
	regERANGE:   "invalid character range",
	regBADRPT:   "quantifier operand invalid",
	regBADOPT:   "invalid embedded option",
	regETOOBIG:  "regular expression is too complex",
}

// CompileRegex compiles a PostgreSQL regular expression (as used by `~`)
// into an equivalent Go regexp. Errors are *RegexError (PostgreSQL would
// reject the pattern too; Error() is its message) or *UnsupportedRegexError.
//
// Results are cached (a *regexp.Regexp is safe for concurrent use): patterns
// with Unicode classes such as \w compile to large Go classes (~1 ms).
func CompileRegex(pattern string) (*regexp.Regexp, error) {
	if c, ok := regexCache.Load(pattern); ok {
		e := c.(regexCacheEntry)
		return e.re, e.err
	}
	re, err := compileRegex(pattern)
	if regexCacheSize.Add(1) > regexCacheMax {
		regexCache.Clear()
		regexCacheSize.Store(1)
	}
	regexCache.Store(pattern, regexCacheEntry{re, err})
	return re, err
}

type regexCacheEntry struct {
	re  *regexp.Regexp
	err error
}

const regexCacheMax = 512

var (
	regexCache     sync.Map
	regexCacheSize atomic.Int64
)

func compileRegex(pattern string) (*regexp.Regexp, error) {
	goPat, err := TranslateRegex(pattern)
	if err != nil {
		return nil, err
	}
	if tooComplex(goPat) {
		return nil, &RegexError{Code: regETOOBIG, Msg: regErrText[regETOOBIG]}
	}
	re, err := regexp.Compile(goPat)
	if err != nil {
		return nil, &UnsupportedRegexError{Feature: err.Error()}
	}
	return re, nil
}

// MaxRegexInstructions bounds the size of a compiled regular expression:
// a larger one is refused as PostgreSQL refuses a pattern whose automaton
// has too many states ("regular expression is too complex"). Go's matcher
// costs up to its size for every byte of every value it reads, and the
// compiled program stays in the pattern caches.
const MaxRegexInstructions = 50000

// tooComplex reports whether a Go pattern compiles to more than
// MaxRegexInstructions (errors are left to regexp.Compile).
func tooComplex(goPat string) bool {
	re, err := syntax.Parse(goPat, syntax.Perl)
	if err != nil {
		return false
	}
	prog, err := syntax.Compile(re.Simplify())
	return err == nil && len(prog.Inst) > MaxRegexInstructions
}

// TranslateRegex returns the Go regexp syntax equivalent to a PostgreSQL ARE
// (see CompileRegex).
func TranslateRegex(pattern string) (string, error) {
	return translateRegex(pattern, false)
}

// TranslateRegexICase is TranslateRegex for the case-insensitive operator
// `~*` (REG_ICASE set from the start).
func TranslateRegexICase(pattern string) (string, error) {
	return translateRegex(pattern, true)
}

// ---------------------------------------------------------------------------
// Lexer (regc_lex.c).

// token types; single characters stand for themselves
const (
	tEMPTY   = 'n'
	tEOS     = 'e'
	tPLAIN   = 'p'
	tDIGIT   = 'd'
	tBACKREF = 'b'
	tCOLLEL  = 'I'
	tECLASS  = 'E'
	tCCLASS  = 'C'
	tEND     = 'X'
	tRANGE   = 'R'
	tLACON   = 'L'
	tSBEGIN  = 'A'
	tSEND    = 'Z'
	tWBDRY   = 'w'
	tNWBDRY  = 'W'
	tCCLASSS = 's'
	tCCLASSC = 'c'
)

// lexical contexts
const (
	lERE = iota + 1
	lQ
	lEBND
	lBRACK
	lCEL
	lECL
	lCCL
)

// class codes for \d \s \w
const (
	ccDigit = iota
	ccSpace
	ccWord
)

type reParseError struct{ code int }

type reVars struct {
	pat       []rune
	now       int
	lexcon    int
	nexttype  int
	nextvalue int64
	lasttype  int

	advf, extended, icase, nlstop, nlanch, expanded, quote bool

	nsubexp     int
	subs        map[int]bool // closed capturing groups
	unsupported string
}

func (v *reVars) fail(code int) {
	v.nexttype = tEOS
	panic(reParseError{code})
}

func (v *reVars) ateos() bool       { return v.now >= len(v.pat) }
func (v *reVars) have(n int) bool   { return len(v.pat)-v.now >= n }
func (v *reVars) next1(c rune) bool { return !v.ateos() && v.pat[v.now] == c }
func (v *reVars) ret(t int)         { v.nexttype = t }
func (v *reVars) retv(t int, val int64) {
	v.nexttype = t
	v.nextvalue = val
}
func (v *reVars) see(t int) bool { return v.nexttype == t }

func (v *reVars) eat(t int) bool {
	if v.see(t) {
		v.next()
		return true
	}
	return false
}

// skip is the expanded-syntax skipper: white space and #-comments.
func (v *reVars) skip() {
	for {
		for !v.ateos() && isSpaceRune(v.pat[v.now]) {
			v.now++
		}
		if v.ateos() || v.pat[v.now] != '#' {
			break
		}
		for !v.ateos() && v.pat[v.now] != '\n' {
			v.now++
		}
	}
}

func (v *reVars) next() {
restart:
	v.lasttype = v.nexttype
	if v.expanded && (v.lexcon == lERE || v.lexcon == lEBND) {
		v.skip()
	}
	if v.ateos() {
		switch v.lexcon {
		case lERE, lQ:
			v.ret(tEOS)
			return
		case lEBND:
			v.fail(regEBRACE)
		default:
			v.fail(regEBRACK)
		}
	}
	c := v.pat[v.now]
	v.now++

	switch v.lexcon {
	case lQ:
		v.retv(tPLAIN, int64(c))
		return
	case lEBND:
		switch {
		case c >= '0' && c <= '9':
			v.retv(tDIGIT, int64(c-'0'))
		case c == ',':
			v.ret(',')
		case c == '}':
			v.lexcon = lERE
			if v.advf && v.next1('?') {
				v.now++
				v.retv('}', 0)
			} else {
				v.retv('}', 1)
			}
		default:
			v.fail(regBADBR)
		}
		return
	case lBRACK:
		switch c {
		case ']':
			if v.lasttype == '[' {
				v.retv(tPLAIN, int64(c))
			} else {
				v.lexcon = lERE
				v.ret(']')
			}
		case '\\':
			if !v.advf {
				v.retv(tPLAIN, int64(c))
				return
			}
			if v.ateos() {
				v.fail(regEESCAPE)
			}
			v.lexescape()
			switch v.nexttype {
			case tPLAIN, tCCLASSS, tCCLASSC:
				return
			}
			v.fail(regEESCAPE)
		case '-':
			if v.lasttype == '[' || v.next1(']') {
				v.retv(tPLAIN, int64(c))
			} else {
				v.retv(tRANGE, int64(c))
			}
		case '[':
			if v.ateos() {
				v.fail(regEBRACK)
			}
			switch v.pat[v.now] {
			case '.':
				v.now++
				v.lexcon = lCEL
				v.ret(tCOLLEL)
			case '=':
				v.now++
				v.lexcon = lECL
				v.ret(tECLASS)
			case ':':
				v.now++
				v.lexcon = lCCL
				v.ret(tCCLASS)
			default:
				v.retv(tPLAIN, int64(c))
			}
		default:
			v.retv(tPLAIN, int64(c))
		}
		return
	case lCEL, lECL, lCCL:
		end := map[int]rune{lCEL: '.', lECL: '=', lCCL: ':'}[v.lexcon]
		if c == end && v.next1(']') {
			v.now++
			v.lexcon = lBRACK
			v.retv(tEND, int64(c))
		} else {
			v.retv(tPLAIN, int64(c))
		}
		return
	}

	// ERE / ARE context
	switch c {
	case '|':
		v.ret('|')
		return
	case '*', '+', '?':
		if v.advf && v.next1('?') {
			v.now++
			v.retv(int(c), 0)
		} else {
			v.retv(int(c), 1)
		}
		return
	case '{':
		if v.expanded {
			v.skip()
		}
		if v.ateos() || !isASCIIDigit(v.pat[v.now]) {
			v.retv(tPLAIN, int64(c))
		} else {
			v.lexcon = lEBND
			v.ret('{')
		}
		return
	case '(':
		if v.advf && v.next1('?') {
			v.now++
			if v.ateos() {
				v.fail(regBADRPT)
			}
			c2 := v.pat[v.now]
			v.now++
			switch c2 {
			case ':':
				v.retv('(', 0)
			case '#':
				for !v.ateos() && v.pat[v.now] != ')' {
					v.now++
				}
				if !v.ateos() {
					v.now++
				}
				v.nexttype = v.lasttype
				goto restart
			case '=', '!':
				v.retv(tLACON, 0)
			case '<':
				if v.ateos() {
					v.fail(regBADRPT)
				}
				c3 := v.pat[v.now]
				v.now++
				if c3 != '=' && c3 != '!' {
					v.fail(regBADRPT)
				}
				v.retv(tLACON, 1)
			default:
				v.fail(regBADRPT)
			}
			return
		}
		v.retv('(', 1)
		return
	case ')':
		v.retv(')', int64(c))
		return
	case '[':
		if v.have(6) && v.pat[v.now] == '[' && v.pat[v.now+1] == ':' &&
			(v.pat[v.now+2] == '<' || v.pat[v.now+2] == '>') &&
			v.pat[v.now+3] == ':' && v.pat[v.now+4] == ']' && v.pat[v.now+5] == ']' {
			c = v.pat[v.now+2]
			v.now += 6
			v.ret(int(c))
			return
		}
		v.lexcon = lBRACK
		if v.next1('^') {
			v.now++
			v.retv('[', 0)
		} else {
			v.retv('[', 1)
		}
		return
	case '.', '^', '$':
		v.ret(int(c))
		return
	case '\\':
		if v.ateos() {
			v.fail(regEESCAPE)
		}
	default:
		v.retv(tPLAIN, int64(c))
		return
	}

	// backslash
	if !v.advf {
		v.retv(tPLAIN, int64(v.pat[v.now]))
		v.now++
		return
	}
	v.lexescape()
}

// lexescape handles an ARE escape; the backslash has been eaten.
func (v *reVars) lexescape() {
	c := v.pat[v.now]
	v.now++
	if !isAlnumRune(c) {
		v.retv(tPLAIN, int64(c))
		return
	}
	switch c {
	case 'a':
		v.retv(tPLAIN, 7)
	case 'A':
		v.ret(tSBEGIN)
	case 'b':
		v.retv(tPLAIN, '\b')
	case 'B':
		v.retv(tPLAIN, '\\')
	case 'c':
		if v.ateos() {
			v.fail(regEESCAPE)
		}
		v.retv(tPLAIN, int64(v.pat[v.now]&037))
		v.now++
	case 'd':
		v.retv(tCCLASSS, ccDigit)
	case 'D':
		v.retv(tCCLASSC, ccDigit)
	case 'e':
		v.retv(tPLAIN, 033)
	case 'f':
		v.retv(tPLAIN, '\f')
	case 'm':
		v.ret('<')
	case 'M':
		v.ret('>')
	case 'n':
		v.retv(tPLAIN, '\n')
	case 'r':
		v.retv(tPLAIN, '\r')
	case 's':
		v.retv(tCCLASSS, ccSpace)
	case 'S':
		v.retv(tCCLASSC, ccSpace)
	case 't':
		v.retv(tPLAIN, '\t')
	case 'u':
		v.retv(tPLAIN, v.chrInRange(v.lexdigits(16, 4, 4)))
	case 'U':
		v.retv(tPLAIN, v.chrInRange(v.lexdigits(16, 8, 8)))
	case 'v':
		v.retv(tPLAIN, '\v')
	case 'w':
		v.retv(tCCLASSS, ccWord)
	case 'W':
		v.retv(tCCLASSC, ccWord)
	case 'x':
		v.retv(tPLAIN, v.chrInRange(v.lexdigits(16, 1, 255)))
	case 'y':
		v.ret(tWBDRY)
	case 'Y':
		v.ret(tNWBDRY)
	case 'Z':
		v.ret(tSEND)
	case '1', '2', '3', '4', '5', '6', '7', '8', '9':
		save := v.now
		v.now--
		n := v.lexdigits(10, 1, 255)
		if v.now == save || (n > 0 && n <= int64(v.nsubexp)) {
			v.retv(tBACKREF, n)
			return
		}
		v.now = save
		fallthrough
	case '0':
		v.now--
		n := v.lexdigits(8, 1, 3)
		if n > 0xff {
			v.now--
			n >>= 3
		}
		v.retv(tPLAIN, n)
	default:
		v.fail(regEESCAPE)
	}
}

// chrInRange is CHR_IS_IN_RANGE: values above CHR_MAX are REG_EESCAPE.
func (v *reVars) chrInRange(n int64) int64 {
	if n > 0x7ffffffe {
		v.fail(regEESCAPE)
	}
	return n
}

// lexdigits reads minlen..maxlen digits of the base (uint32 arithmetic, as
// in C); fewer than minlen is REG_EESCAPE.
func (v *reVars) lexdigits(base, minlen, maxlen int) int64 {
	var n uint32
	l := 0
	for ; l < maxlen && !v.ateos(); l++ {
		c := v.pat[v.now]
		d := -1
		switch {
		case c >= '0' && c <= '9':
			d = int(c - '0')
		case c >= 'a' && c <= 'f':
			d = int(c-'a') + 10
		case c >= 'A' && c <= 'F':
			d = int(c-'A') + 10
		}
		if d < 0 || d >= base {
			break
		}
		v.now++
		n = n*uint32(base) + uint32(d)
	}
	if l < minlen {
		v.fail(regEESCAPE)
	}
	return int64(n)
}

// ---------------------------------------------------------------------------
// Parser (regcomp.c) producing Go syntax.

func translateRegex(pattern string, icase bool) (goPat string, err error) {
	v := &reVars{pat: []rune(pattern), advf: true, extended: true, icase: icase, subs: map[int]bool{}}
	defer func() {
		if r := recover(); r != nil {
			pe, ok := r.(reParseError)
			if !ok {
				panic(r)
			}
			goPat = ""
			if pe.code < 0 {
				err = &UnsupportedRegexError{Feature: "basic regular expressions (embedded option b)"}
				return
			}
			err = &RegexError{Code: pe.code, Msg: regErrText[pe.code]}
		}
	}()

	v.prefixes()
	if v.quote {
		v.lexcon = lQ
	} else {
		v.lexcon = lERE
	}
	v.nexttype = tEMPTY
	v.next()

	body := v.parse(tEOS, false)
	if v.unsupported != "" {
		return "", &UnsupportedRegexError{Feature: v.unsupported}
	}
	var b strings.Builder
	if v.icase {
		b.WriteString("(?i)")
	}
	b.WriteString(body)
	return b.String(), nil
}

// prefixes handles "***:", "***=" and the leading embedded options "(?...)".
func (v *reVars) prefixes() {
	if v.have(4) && v.pat[0] == '*' && v.pat[1] == '*' && v.pat[2] == '*' {
		switch v.pat[3] {
		case '?':
			v.fail(regBADPAT)
		case '=':
			v.quote = true
			v.advf = false
			v.now += 4
			return
		case ':':
			v.now += 4
		default:
			v.fail(regBADRPT)
		}
	}
	if !v.advf {
		return
	}
	if v.have(3) && v.pat[v.now] == '(' && v.pat[v.now+1] == '?' && isAlphaRune(v.pat[v.now+2]) {
		v.now += 2
		bre := false
		for ; !v.ateos() && isAlphaRune(v.pat[v.now]); v.now++ {
			switch v.pat[v.now] {
			case 'b':
				v.advf, v.extended, v.quote = false, false, false
				bre = true
			case 'c':
				v.icase = false
			case 'e':
				v.extended = true
				v.advf, v.quote = false, false
				bre = false
			case 'i':
				v.icase = true
			case 'm', 'n':
				v.nlstop, v.nlanch = true, true
			case 'p':
				v.nlstop, v.nlanch = true, false
			case 'q':
				v.quote = true
				v.advf = false
				bre = false
			case 's':
				v.nlstop, v.nlanch = false, false
			case 't':
				v.expanded = false
			case 'w':
				v.nlstop, v.nlanch = false, true
			case 'x':
				v.expanded = true
			default:
				v.fail(regBADOPT)
			}
		}
		if !v.next1(')') {
			v.fail(regBADOPT)
		}
		v.now++
		if v.quote {
			v.expanded = false
			v.nlstop, v.nlanch = false, false
		}
		if bre && !v.quote && !v.extended {
			panic(reParseError{-1})
		}
	}
}

// parse parses alternatives up to stopper (')' or EOS).
func (v *reVars) parse(stopper int, lacon bool) string {
	var branches []string
	for {
		branches = append(branches, v.parsebranch(stopper, lacon))
		if !v.eat('|') {
			break
		}
	}
	if !v.see(stopper) {
		v.fail(regEPAREN)
	}
	return strings.Join(branches, "|")
}

func (v *reVars) parsebranch(stopper int, lacon bool) string {
	var b strings.Builder
	for !v.see('|') && !v.see(stopper) && !v.see(tEOS) {
		b.WriteString(v.parseqatom(stopper, lacon))
	}
	return b.String()
}

// parseqatom parses one atom and its quantifier.
func (v *reVars) parseqatom(stopper int, lacon bool) string {
	var atom string
	switch v.nexttype {
	// constraints, which take no quantifier
	case '^':
		v.next()
		if v.nlanch {
			return "(?m:^)"
		}
		return `\A`
	case '$':
		v.next()
		if v.nlanch {
			return "(?m:$)"
		}
		return `\z`
	case tSBEGIN:
		v.next()
		return `\A`
	case tSEND:
		v.next()
		return `\z`
	case '<', '>', tWBDRY:
		v.next()
		return `\b`
	case tNWBDRY:
		v.next()
		return `\B`
	case tLACON:
		v.next()
		v.parse(')', true)
		v.next()
		if v.unsupported == "" {
			v.unsupported = "lookahead/lookbehind constraints"
		}
		return ""
	case '*', '+', '?', '{':
		v.fail(regBADRPT)
	case ')':
		if v.advf || !v.extended {
			v.fail(regEPAREN)
		}
		atom = literal(')')
		v.next()
	case tPLAIN:
		atom = literal(rune(v.nextvalue))
		v.next()
	case '[':
		negated := v.nextvalue == 0
		atom = v.bracket(negated)
		v.next()
	case tCCLASSS:
		atom = classFor(int(v.nextvalue)).String()
		v.next()
	case tCCLASSC:
		set := classFor(int(v.nextvalue))
		if v.nlstop {
			set = set.union(runeSet{{'\n', '\n'}})
		}
		atom = set.negatedString()
		v.next()
	case '.':
		if v.nlstop {
			atom = `[^\n]`
		} else {
			atom = `(?s:.)`
		}
		v.next()
	case '(':
		capture := !lacon && v.nextvalue != 0
		subno := 0
		if capture {
			v.nsubexp++
			subno = v.nsubexp
		}
		v.next()
		inner := v.parse(')', lacon)
		v.next()
		if capture {
			v.subs[subno] = true
			atom = "(" + inner + ")"
		} else {
			atom = "(?:" + inner + ")"
		}
	case tBACKREF:
		if lacon || !v.subs[int(v.nextvalue)] {
			v.fail(regESUBREG)
		}
		if v.unsupported == "" {
			v.unsupported = "back-references"
		}
		atom = ""
		v.next()
	default:
		v.fail(regBADRPT)
	}

	// quantifier
	var q string
	switch v.nexttype {
	case '*', '+', '?':
		q = string(rune(v.nexttype))
		if v.nextvalue == 0 {
			q += "?"
		}
		v.next()
	case '{':
		v.next()
		m := v.scannum()
		n := m
		hasComma := false
		if v.eat(',') {
			hasComma = true
			if v.see(tDIGIT) {
				n = v.scannum()
			} else {
				n = -1
			}
			if n >= 0 && m > n {
				v.fail(regBADBR)
			}
		}
		if !v.see('}') {
			v.fail(regBADBR)
		}
		greedy := v.nextvalue != 0
		v.next()
		switch {
		case !hasComma:
			q = fmt.Sprintf("{%d}", m)
		case n < 0:
			q = fmt.Sprintf("{%d,}", m)
		default:
			q = fmt.Sprintf("{%d,%d}", m, n)
		}
		if !greedy {
			q += "?"
		}
	}
	if q == "" {
		return atom
	}
	if atom == "" { // back-reference: unsupported anyway; keep the syntax valid
		return ""
	}
	return atom + q
}

// scannum reads a bound (at most DUPMAX = 255).
func (v *reVars) scannum() int {
	n := 0
	for v.see(tDIGIT) && n < 255 {
		n = n*10 + int(v.nextvalue)
		v.next()
	}
	if v.see(tDIGIT) || n > 255 {
		v.fail(regBADBR)
	}
	return n
}

// bracket parses a bracket expression; the '[' token is current.
func (v *reVars) bracket(negated bool) string {
	v.next()
	var set runeSet
	for !v.see(']') && !v.see(tEOS) {
		set = v.brackpart(set)
	}
	if negated {
		if v.nlstop {
			set = set.union(runeSet{{'\n', '\n'}})
		}
		return set.negatedString()
	}
	return set.String()
}

func (v *reVars) brackpart(set runeSet) runeSet {
	var startc rune
	switch v.nexttype {
	case tRANGE:
		v.fail(regERANGE)
	case tPLAIN:
		c := rune(v.nextvalue)
		v.next()
		if !v.see(tRANGE) {
			return set.union(runeSet{{c, c}})
		}
		startc = c
	case tCOLLEL:
		startc = element(v, v.scanplain())
	case tECLASS:
		c := element(v, v.scanplain())
		return set.union(runeSet{{c, c}})
	case tCCLASS:
		name := v.scanplain()
		return set.union(v.cclass(name))
	case tCCLASSS:
		cls := classFor(int(v.nextvalue))
		v.next()
		return set.union(cls)
	case tCCLASSC:
		cls := classFor(int(v.nextvalue))
		if v.nlstop {
			cls = cls.union(runeSet{{'\n', '\n'}})
		}
		v.next()
		return set.union(cls.complement())
	default:
		v.fail(regBADRPT)
	}

	endc := startc
	if v.see(tRANGE) {
		v.next()
		switch v.nexttype {
		case tPLAIN, tRANGE:
			endc = rune(v.nextvalue)
			v.next()
		case tCOLLEL:
			endc = element(v, v.scanplain())
		default:
			v.fail(regERANGE)
		}
	}
	if startc > endc {
		v.fail(regERANGE)
	}
	return set.union(runeSet{{startc, endc}})
}

// scanplain collects the name of [.x.], [=x=] or [:x:] (the opening token is
// current) and consumes the closing token.
func (v *reVars) scanplain() string {
	v.next()
	var b []rune
	for v.see(tPLAIN) {
		b = append(b, rune(v.nextvalue))
		v.next()
	}
	v.next() // END
	return string(b)
}

// element is the value of a collating element name.
func element(v *reVars, name string) rune {
	r := []rune(name)
	if len(r) == 1 {
		return r[0]
	}
	if c, ok := collatingNames[name]; ok {
		return c
	}
	v.fail(regECOLLATE)
	return 0
}

func (v *reVars) cclass(name string) runeSet {
	switch name {
	case "alnum", "alpha", "ascii", "blank", "cntrl", "digit", "graph",
		"lower", "print", "punct", "space", "upper", "xdigit", "word":
	default:
		v.fail(regECTYPE)
	}
	if v.icase && (name == "lower" || name == "upper") {
		name = "alpha"
	}
	return posixClass(name)
}

// ---------------------------------------------------------------------------
// Rune sets and character classes.

type runeRange struct{ lo, hi rune }

// runeSet is a sorted, non-overlapping, non-adjacent list of ranges.
type runeSet []runeRange

func (s runeSet) union(t runeSet) runeSet {
	all := append(append(runeSet(nil), s...), t...)
	sort.Slice(all, func(i, j int) bool { return all[i].lo < all[j].lo })
	var out runeSet
	for _, r := range all {
		if n := len(out); n > 0 && r.lo <= out[n-1].hi+1 {
			if r.hi > out[n-1].hi {
				out[n-1].hi = r.hi
			}
			continue
		}
		out = append(out, r)
	}
	return out
}

func (s runeSet) complement() runeSet {
	var out runeSet
	next := rune(0)
	for _, r := range s {
		if r.lo > next {
			out = append(out, runeRange{next, r.lo - 1})
		}
		next = r.hi + 1
	}
	if next <= unicode.MaxRune {
		out = append(out, runeRange{next, unicode.MaxRune})
	}
	return out
}

// clip removes what can never occur in UTF-8 text (surrogates, values above
// U+10FFFF).
func (s runeSet) clip() runeSet {
	var out runeSet
	for _, r := range s {
		for _, part := range []runeRange{{r.lo, min(r.hi, 0xD7FF)}, {max(r.lo, 0xE000), min(r.hi, unicode.MaxRune)}} {
			if part.lo <= part.hi {
				out = append(out, part)
			}
		}
	}
	return out
}

func writeClassRune(b *strings.Builder, r rune) {
	if r < 0x80 && (r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
		b.WriteRune(r)
		return
	}
	b.WriteString(`\x{`)
	b.WriteString(strconv.FormatInt(int64(r), 16))
	b.WriteString("}")
}

func (s runeSet) body() string {
	var b strings.Builder
	for _, r := range s.clip() {
		writeClassRune(&b, r.lo)
		if r.hi != r.lo {
			b.WriteByte('-')
			writeClassRune(&b, r.hi)
		}
	}
	return b.String()
}

const neverMatch = `[^\x00-\x{10FFFF}]`

// String renders the set as a Go character class.
func (s runeSet) String() string {
	body := s.body()
	if body == "" {
		return neverMatch
	}
	return "[" + body + "]"
}

// negatedString renders the complement as a Go negated class (so that Go's
// case folding is applied before the negation, as PostgreSQL does).
func (s runeSet) negatedString() string {
	body := s.body()
	if body == "" {
		return `[\x00-\x{10FFFF}]`
	}
	return "[^" + body + "]"
}

// literal renders one character outside a class.
func literal(r rune) string {
	if r > unicode.MaxRune || (r >= 0xD800 && r <= 0xDFFF) {
		return neverMatch
	}
	var b strings.Builder
	writeClassRune(&b, r)
	return b.String()
}

func isASCIIDigit(r rune) bool { return r >= '0' && r <= '9' }

func classFor(cc int) runeSet {
	switch cc {
	case ccDigit:
		return posixClass("digit")
	case ccSpace:
		return posixClass("space")
	default:
		return posixClass("word")
	}
}

var (
	classMu    sync.Mutex
	classCache = map[string]runeSet{}
)

// posixClass returns the members of a POSIX class under glibc's C.UTF-8
// LC_CTYPE (localedata i18n_ctype, generated from Unicode data).
func posixClass(name string) runeSet {
	classMu.Lock()
	defer classMu.Unlock()
	if s, ok := classCache[name]; ok {
		return s
	}
	var s runeSet
	switch name {
	case "digit":
		s = runeSet{{'0', '9'}}
	case "xdigit":
		s = runeSet{{'0', '9'}, {'A', 'F'}, {'a', 'f'}}
	case "ascii":
		s = runeSet{{0, 0x7f}}
	case "space":
		s = runeSet{{'\t', '\r'}, {' ', ' '}, {0x1680, 0x1680}, {0x2000, 0x2006}, {0x2008, 0x200A},
			{0x2028, 0x2029}, {0x205F, 0x205F}, {0x3000, 0x3000}}
	case "blank":
		s = runeSet{{'\t', '\t'}, {' ', ' '}, {0x1680, 0x1680}, {0x2000, 0x2006}, {0x2008, 0x200A},
			{0x205F, 0x205F}, {0x3000, 0x3000}}
	case "cntrl":
		s = runeSet{{0, 0x1f}, {0x7f, 0x9f}, {0x2028, 0x2029}}
	case "alpha":
		s = scanRunes(isAlphaRune)
	case "alnum":
		s = scanRunes(isAlnumRune)
	case "word":
		s = scanRunes(func(r rune) bool { return r == '_' || isAlnumRune(r) })
	case "upper":
		s = scanRunes(func(r rune) bool { return unicode.ToLower(r) != r })
	case "lower":
		s = scanRunes(func(r rune) bool { return unicode.ToUpper(r) != r || r == 0xDF })
	case "graph":
		s = scanRunes(isGraphRune)
	case "print":
		s = scanRunes(func(r rune) bool {
			return isAssigned(r) && !unicode.Is(unicode.Cc, r) && !unicode.Is(unicode.Zl, r) && !unicode.Is(unicode.Zp, r)
		})
	case "punct":
		s = scanRunes(func(r rune) bool { return isGraphRune(r) && !isAlnumRune(r) })
	}
	classCache[name] = s
	return s
}

func scanRunes(pred func(rune) bool) runeSet {
	var out runeSet
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if r == 0xD800 {
			r = 0xE000
		}
		if !pred(r) {
			continue
		}
		if n := len(out); n > 0 && out[n-1].hi == r-1 {
			out[n-1].hi = r
		} else {
			out = append(out, runeRange{r, r})
		}
	}
	return out
}

func isAssigned(r rune) bool {
	return unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z, unicode.C)
}

// isAlphaRune: Unicode Alphabetic plus non-ASCII decimal digits (glibc puts
// them in "alpha" because C forbids them in "digit").
func isAlphaRune(r rune) bool {
	if r < 0x80 {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
	}
	return unicode.In(r, unicode.L, unicode.Nl, unicode.Other_Alphabetic, unicode.Nd)
}

func isAlnumRune(r rune) bool { return isASCIIDigit(r) || isAlphaRune(r) }

func isSpaceRune(r rune) bool {
	switch {
	case r >= '\t' && r <= '\r', r == ' ', r == 0x1680, r >= 0x2000 && r <= 0x2006,
		r >= 0x2008 && r <= 0x200A, r == 0x2028, r == 0x2029, r == 0x205F, r == 0x3000:
		return true
	}
	return false
}

func isGraphRune(r rune) bool {
	return isAssigned(r) && !unicode.Is(unicode.Cc, r) && !isSpaceRune(r)
}

// collatingNames is regc_locale.c's cnames table (names usable in [.name.]).
var collatingNames = map[string]rune{
	"NUL": 0, "SOH": 1, "STX": 2, "ETX": 3, "EOT": 4, "ENQ": 5, "ACK": 6, "BEL": 7,
	"alert": 7, "BS": 8, "backspace": 8, "HT": 9, "tab": 9, "LF": 10, "newline": 10,
	"VT": 11, "vertical-tab": 11, "FF": 12, "form-feed": 12, "CR": 13, "carriage-return": 13,
	"SO": 14, "SI": 15, "DLE": 16, "DC1": 17, "DC2": 18, "DC3": 19, "DC4": 20, "NAK": 21,
	"SYN": 22, "ETB": 23, "CAN": 24, "EM": 25, "SUB": 26, "ESC": 27, "IS4": 28, "FS": 28,
	"IS3": 29, "GS": 29, "IS2": 30, "RS": 30, "IS1": 31, "US": 31, "space": ' ',
	"exclamation-mark": '!', "quotation-mark": '"', "number-sign": '#', "dollar-sign": '$',
	"percent-sign": '%', "ampersand": '&', "apostrophe": '\'', "left-parenthesis": '(',
	"right-parenthesis": ')', "asterisk": '*', "plus-sign": '+', "comma": ',', "hyphen": '-',
	"hyphen-minus": '-', "period": '.', "full-stop": '.', "slash": '/', "solidus": '/',
	"zero": '0', "one": '1', "two": '2', "three": '3', "four": '4', "five": '5', "six": '6',
	"seven": '7', "eight": '8', "nine": '9', "colon": ':', "semicolon": ';',
	"less-than-sign": '<', "equals-sign": '=', "greater-than-sign": '>', "question-mark": '?',
	"commercial-at": '@', "left-square-bracket": '[', "backslash": '\\', "reverse-solidus": '\\',
	"right-square-bracket": ']', "circumflex": '^', "circumflex-accent": '^', "underscore": '_',
	"low-line": '_', "grave-accent": '`', "left-brace": '{', "left-curly-bracket": '{',
	"vertical-line": '|', "right-brace": '}', "right-curly-bracket": '}', "tilde": '~', "DEL": 0x7f,
}
