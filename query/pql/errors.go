package pql

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// ParseError is a PQL syntax error (PuppetDB answers 400 with Message()).
// Line and Column (1-based, Column in UTF-16 units as Java counts) locate
// the furthest point any alternative of the grammar reached.
type ParseError struct {
	Line, Column int
	// Text is the echoed input line ("null" for an empty query, "" when the
	// line cannot be found, as Instaparse does).
	Text string
	// Expected lists what the grammar would have accepted at that point,
	// in PuppetDB's order; entries that had to reach the end of the input
	// carry the suffix " (followed by end-of-string)".
	Expected []string
	// Empty is set for a query that is empty or only white space.
	Empty bool

	reasons []reason
}

func (e *ParseError) Error() string { return e.Message() }

// Message renders PuppetDB's error body:
//
//	PQL parse error at line L, column C:\n\n<line>\n<C-1 spaces>^\n\n
//	Expected one of:\n\n<alt>\n<alt>\n...   (or "Expected:\n<alt>\n")
//
// An empty query is said to be empty instead (PuppetDB echoes it as the
// line "null").
//
// Alternatives that had to reach the end of the input come first, each
// followed by " (followed by end-of-string)" and, as in PuppetDB, no newline.
func (e *ParseError) Message() string {
	if e.Empty {
		return "PQL parse error: the query is empty. A PQL query names an entity and, optionally, the fields to return and a filter, e.g. nodes[certname] { certname ~ \"^web\" }"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "PQL parse error at line %s, column %s:\n\n%s\n%s\n\n",
		javaGrouped(e.Line), javaGrouped(e.Column), e.Text, marker(e.Column))
	var full, partial []string
	for _, r := range e.reasons {
		if r.full {
			full = append(full, r.text)
		} else {
			partial = append(partial, r.text)
		}
	}
	switch len(full) + len(partial) {
	case 0:
	case 1:
		b.WriteString("Expected:\n")
	default:
		b.WriteString("Expected one of:\n\n")
	}
	for _, r := range full {
		b.WriteString(r + " (followed by end-of-string)")
	}
	for _, r := range partial {
		b.WriteString(r + "\n")
	}
	return b.String()
}

// StringEscapeError is a double-quoted string that is not a valid JSON
// string body, reported with Jackson's message (PuppetDB answers 500).
type StringEscapeError struct {
	Reason       string
	Line, Column int
}

func (e *StringEscapeError) Error() string {
	return fmt.Sprintf("%s\n at [Source: (StringReader); line: %d, column: %d]", e.Reason, e.Line, e.Column)
}

// ClauseError is a paging clause (limit, offset, order_by) given more than
// once in one query block (PuppetDB answers 400).
type ClauseError struct{ Clause string }

func (e *ClauseError) Error() string {
	return fmt.Sprintf("Multiple '%s' clauses are not permitted", e.Clause)
}

// TransformError is a parse PuppetDB's tree rewrite cannot handle, e.g. an
// implicit subquery with more than one clause (`reports{ a = 1 limit 1 }`),
// which PuppetDB fails on with a Clojure arity exception (an unexpected,
// 500-class error there).
type TransformError struct{ Msg string }

func (e *TransformError) Error() string { return e.Msg }

// newParseError builds the error for the furthest failure f in src.
func newParseError(src string, f failState) *ParseError {
	idx := f.idx
	if idx < 0 {
		idx = 0
	}
	line, lineStart := 1, 0
	for i := 0; i < idx; i++ {
		if src[i] == '\n' {
			line++
			lineStart = i + 1
		}
	}
	col := 1
	for _, r := range src[lineStart:idx] {
		col += utf16.RuneLen(r)
	}
	e := &ParseError{Line: line, Column: col, Text: echoLine(src, line)}
	// Instaparse lists the expected terminals in the reverse of the order
	// our depth-first search recorded them.
	for i := len(f.reasons) - 1; i >= 0; i-- {
		r := f.reasons[i]
		e.reasons = append(e.reasons, r)
		if r.full {
			e.Expected = append(e.Expected, r.text+" (followed by end-of-string)")
		} else {
			e.Expected = append(e.Expected, r.text)
		}
	}
	return e
}

// echoLine is Instaparse's get-line: the n-th line as java.io.BufferedReader
// splits them (\n, \r, \r\n), "null" for empty input, "" past the end.
func echoLine(src string, n int) string {
	if src == "" {
		return "null"
	}
	for k, start := 1, 0; start < len(src); k++ {
		end := start
		for end < len(src) && src[end] != '\n' && src[end] != '\r' {
			end++
		}
		if k == n {
			return src[start:end]
		}
		if end < len(src) && src[end] == '\r' && end+1 < len(src) && src[end+1] == '\n' {
			end++
		}
		start = end + 1
	}
	return ""
}

// marker is Instaparse's caret line for a 1-based column.
func marker(col int) string {
	if col <= 1 {
		return "^"
	}
	return strings.Repeat(" ", col-1) + "^"
}

// javaGrouped formats n as java.text.MessageFormat does (en locale):
// thousands separated by commas.
func javaGrouped(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// sanitize replaces each invalid UTF-8 byte with U+FFFD, as decoding the
// request into a Java string does.
func sanitize(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// DepthError is a query nested deeper than the parser allows (parentheses,
// negations, arrays and subqueries inside each other, or very long and/or
// chains); the parser stops there instead of exhausting the stack.
type DepthError struct{}

func (e *DepthError) Error() string {
	return fmt.Sprintf("PQL parse error: the query is nested too deeply (the parser allows %d nested grammar rules, about 2,000 levels of parentheses)", maxDepth)
}
