package puppetreport

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"time"

	"reportdb/jsonv"
)

// rubyTime is a parsed report timestamp as Ruby's Time.parse holds it: an
// exact instant (whole seconds since the epoch plus nanoseconds) and the
// UTC offset it was written with, for display. utc is set when the source
// said "Z" (or "-00:00", which Ruby's Time.parse also treats as UTC), so
// that iso8601 prints "Z" rather than "+00:00".
type rubyTime struct {
	sec    int64 // seconds since 1970-01-01T00:00:00Z
	nanos  int64 // 0..999999999
	offset int   // seconds east of UTC
	utc    bool
}

// wireTime is a rubyTime truncated to whole milliseconds (floor), ready to
// be printed as Ruby's Time#iso8601(3).
type wireTime struct {
	ms     int64 // milliseconds since the epoch
	offset int
	utc    bool
}

const timeFormatHint = "must be an ISO 8601 date-time with seconds, 0 to 9 fraction digits and a zone (Z or ±hh:mm), e.g. 2024-03-01T10:00:00.123456789+01:00"

// parseTime accepts exactly YYYY-MM-DDThh:mm:ss[.f{1,9}](Z|±hh:mm) with a
// valid calendar date, hour 00-23, minute and second 00-59 and an offset
// below 24 hours.
func parseTime(s string) (rubyTime, error) {
	bad := errors.New(timeFormatHint)
	num := func(i, n int) (int, bool) {
		if i+n > len(s) {
			return 0, false
		}
		v := 0
		for _, c := range []byte(s[i : i+n]) {
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int(c-'0')
		}
		return v, true
	}
	sep := func(i int, c byte) bool { return i < len(s) && s[i] == c }
	year, ok1 := num(0, 4)
	month, ok2 := num(5, 2)
	day, ok3 := num(8, 2)
	hour, ok4 := num(11, 2)
	minute, ok5 := num(14, 2)
	second, ok6 := num(17, 2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && sep(4, '-') && sep(7, '-') &&
		sep(10, 'T') && sep(13, ':') && sep(16, ':')) {
		return rubyTime{}, bad
	}
	i := 19
	var nanos int64
	if sep(i, '.') {
		i++
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			if n == 9 {
				return rubyTime{}, errors.New("has more than 9 fraction digits; " + timeFormatHint)
			}
			nanos = nanos*10 + int64(s[i]-'0')
			n++
			i++
		}
		if n == 0 {
			return rubyTime{}, bad
		}
		for ; n < 9; n++ {
			nanos *= 10
		}
	}
	var t rubyTime
	switch {
	case i == len(s):
		return rubyTime{}, errors.New("has no zone; " + timeFormatHint)
	case s[i] == 'Z' && i+1 == len(s):
		t.utc = true
	case (s[i] == '+' || s[i] == '-') && len(s) == i+6 && s[i+3] == ':':
		oh, okh := num(i+1, 2)
		om, okm := num(i+4, 2)
		if !okh || !okm || oh > 23 || om > 59 {
			return rubyTime{}, bad
		}
		t.offset = oh*3600 + om*60
		if s[i] == '-' {
			t.offset = -t.offset
			t.utc = t.offset == 0 // Ruby: "-00:00" means UTC
		}
	default:
		return rubyTime{}, bad
	}
	if month < 1 || month > 12 || day < 1 || day > daysIn(year, month) ||
		hour > 23 || minute > 59 || second > 59 {
		return rubyTime{}, errors.New("is not a valid date and time; " + timeFormatHint)
	}
	local := time.Date(year, time.Month(month), day, hour, minute, second, 0, time.UTC).Unix()
	t.sec = local - int64(t.offset)
	t.nanos = nanos
	return t, nil
}

func daysIn(year, month int) int {
	return time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// trunc drops the sub-millisecond part (Time#iso8601(3) truncates).
func (t rubyTime) trunc() wireTime {
	return wireTime{ms: t.sec*1000 + t.nanos/1e6, offset: t.offset, utc: t.utc}
}

// Range of wire times we produce: years 0000-9999 in the local offset.
var (
	minLocalMs = time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).Unix() * 1000
	maxLocalMs = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC).Unix()*1000 - 1
)

// add returns t + seconds as Ruby's Time#+ computes it — exactly: an
// integer literal is an exact Integer, a float literal the exact binary
// value of the Float Ruby's JSON parser makes of it — truncated to whole
// milliseconds. It fails for non-finite floats (Ruby raises
// FloatDomainError) and results outside years 0000-9999.
func (t rubyTime) add(seconds jsonv.Number) (wireTime, error) {
	r := new(big.Rat)
	if seconds.IsInteger() {
		if _, ok := r.SetString(string(seconds)); !ok {
			return wireTime{}, fmt.Errorf("is not a number")
		}
	} else {
		f, _ := strconv.ParseFloat(string(seconds), 64)
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return wireTime{}, fmt.Errorf("must be a finite number; got %s", seconds)
		}
		r.SetFloat64(f)
	}
	start := new(big.Rat).SetFrac(
		new(big.Int).Add(new(big.Int).Mul(big.NewInt(t.sec), big.NewInt(1e9)), big.NewInt(t.nanos)),
		big.NewInt(1e9))
	r.Add(r, start)
	r.Mul(r, big.NewRat(1000, 1))
	ms := new(big.Int).Div(r.Num(), r.Denom()) // Euclidean = floor for a positive divisor
	if !ms.IsInt64() || ms.Int64() > 1<<60 || ms.Int64() < -1<<60 || !inRange(ms.Int64()+int64(t.offset)*1000) {
		return wireTime{}, fmt.Errorf("puts the end time out of range (years 0000-9999); got %s", seconds)
	}
	return wireTime{ms: ms.Int64(), offset: t.offset, utc: t.utc}, nil
}

// String renders w as Ruby's Time#iso8601(3): local time in the kept
// offset, exactly three fraction digits, "Z" for UTC times.
func (w wireTime) String() string {
	local := w.ms + int64(w.offset)*1000
	sec := floorDiv(local, 1000)
	ms := local - sec*1000
	tm := time.Unix(sec, 0).UTC()
	b := make([]byte, 0, 29)
	b = appendInt(b, tm.Year(), 4)
	b = append(b, '-')
	b = appendInt(b, int(tm.Month()), 2)
	b = append(b, '-')
	b = appendInt(b, tm.Day(), 2)
	b = append(b, 'T')
	b = appendInt(b, tm.Hour(), 2)
	b = append(b, ':')
	b = appendInt(b, tm.Minute(), 2)
	b = append(b, ':')
	b = appendInt(b, tm.Second(), 2)
	b = append(b, '.')
	b = appendInt(b, int(ms), 3)
	if w.utc {
		return string(append(b, 'Z'))
	}
	off := w.offset
	if off < 0 {
		b = append(b, '-')
		off = -off
	} else {
		b = append(b, '+')
	}
	b = appendInt(b, off/3600, 2)
	b = append(b, ':')
	b = appendInt(b, off%3600/60, 2)
	return string(b)
}

func inRange(localMs int64) bool { return localMs >= minLocalMs && localMs <= maxLocalMs }

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func appendInt(b []byte, v, width int) []byte {
	s := strconv.Itoa(v)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}
