package sqlite

import (
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"modernc.org/sqlite"

	"reportdb/internal/pgcompat"
)

// regexCache memoises compiled patterns; queries bind the same pattern for
// every row. It is bounded so hostile queries cannot grow it forever.
type regexCache struct {
	mu sync.Mutex
	m  map[string]*regexp.Regexp
}

var cache = &regexCache{m: map[string]*regexp.Regexp{}}

func (c *regexCache) get(p string) (*regexp.Regexp, error) {
	c.mu.Lock()
	re, ok := c.m[p]
	c.mu.Unlock()
	if ok {
		return re, nil
	}
	re, err := pgcompat.CompileRegex(p)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if len(c.m) > 1024 {
		c.m = map[string]*regexp.Regexp{}
	}
	c.m[p] = re
	c.mu.Unlock()
	return re, nil
}

var registerOnce sync.Once

// registerFunctions installs the Go functions the SQLite dialect uses.
func registerFunctions() {
	registerOnce.Do(func() {
		sqlite.MustRegisterDeterministicScalarFunction("regexp", 2, fnRegexp)
		sqlite.MustRegisterDeterministicScalarFunction("pathkey", 1, fnPathKey)
		sqlite.MustRegisterDeterministicScalarFunction("to_char_ts", 2, fnToCharTS)
		sqlite.MustRegisterDeterministicScalarFunction("to_char_num", 2, fnToCharNum)
	})
}

func text(v driver.Value) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case []byte:
		return string(x), true
	}
	return "", false
}

// fnRegexp(pattern, value): NULL when value is NULL.
func fnRegexp(fc *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	p, ok := text(args[0])
	if !ok {
		return nil, errors.New("regexp: pattern must be text")
	}
	s, ok := text(args[1])
	if !ok {
		if args[1] == nil {
			return nil, nil
		}
		s = fmt.Sprint(args[1])
	}
	re, err := cache.get(p)
	if err != nil {
		return nil, err
	}
	return match(re, s, fc)
}

// longValue is the length from which a value is matched so that its
// query's deadline can stop the match.
const longValue = 4096

// match matches re against s. Go's matcher may cost the pattern's size for
// every byte of s, and a call cannot be interrupted from outside: so a
// literal pattern is searched for as a string (linear), and a long value
// is fed to the matcher by a reader that ends it when the query's context
// ends (the call then fails with errInterrupted).
func match(re *regexp.Regexp, s string, fc *sqlite.FunctionContext) (driver.Value, error) {
	if lit, complete := re.LiteralPrefix(); complete {
		return boolValue(strings.Contains(s, lit)), nil
	}
	if len(s) < longValue {
		return boolValue(re.MatchString(s)), nil
	}
	w := callWatch(fc)
	if w == nil {
		return boolValue(re.MatchString(s)), nil
	}
	r := &watchedReader{s: s, w: w}
	m := re.MatchReader(r)
	if r.stopped {
		return nil, errInterrupted
	}
	return boolValue(m), nil
}

func boolValue(b bool) driver.Value {
	if b {
		return int64(1)
	}
	return int64(0)
}

// watchedReader reads a string rune by rune until its watch's query is
// interrupted, when it reads as ended.
type watchedReader struct {
	s       string
	i, n    int
	w       *watch
	stopped bool
}

func (r *watchedReader) ReadRune() (rune, int, error) {
	if r.n++; r.n&1023 == 0 && r.w.interrupted.Load() {
		r.stopped = true
	}
	if r.stopped || r.i >= len(r.s) {
		return 0, 0, io.EOF
	}
	c, size := utf8.DecodeRuneInString(r.s[r.i:])
	r.i += size
	return c, size, nil
}

// fnPathKey turns a JSON array of strings into a blob that sorts bytewise
// like PostgreSQL compares text[] element-wise: each element escaped
// (0x00 -> 0x01 0x01, 0x01 -> 0x01 0x02) and terminated by 0x00.
func fnPathKey(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	s, ok := text(args[0])
	if !ok {
		return nil, nil
	}
	var elems []string
	if err := json.Unmarshal([]byte(s), &elems); err != nil {
		return nil, nil
	}
	var b []byte
	for _, e := range elems {
		for i := 0; i < len(e); i++ {
			switch e[i] {
			case 0:
				b = append(b, 1, 1)
			case 1:
				b = append(b, 1, 2)
			default:
				b = append(b, e[i])
			}
		}
		b = append(b, 0)
	}
	return b, nil
}

func fnToCharTS(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	ms, ok := args[0].(int64)
	if !ok {
		return nil, nil
	}
	f, _ := text(args[1])
	return pgcompat.ToCharTimestamp(time.UnixMilli(ms).UTC(), f), nil
}

func fnToCharNum(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	f, _ := text(args[1])
	switch x := args[0].(type) {
	case int64:
		return pgcompat.ToCharNumber(strconv.FormatInt(x, 10), f), nil
	case float64:
		return pgcompat.ToCharNumber(strconv.FormatFloat(x, 'f', -1, 64), f), nil
	}
	return nil, nil
}
