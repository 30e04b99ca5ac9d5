package pgcompat

import (
	"sort"
	"time"
)

// ParseTimestamp parses a timestamp value given as a string in a query the way
// PuppetDB 7.12.1 does (puppetlabs.puppetdb.time/to-timestamp).
//
// PuppetDB tries the clj-time formatters in this order and keeps the first one
// that parses the whole string:
//
//	:date-time :date :date-time-no-ms :basic-date :basic-date-time
//
// then every other entry of clj-time.format/formatters in the iteration order of
// that Clojure hash map (which is fixed: it depends only on the keyword hashes;
// see formatterOrder). Every formatter is a Joda-Time ISODateTimeFormat
// formatter (or a DateTimeFormat pattern for :rfc822 and :mysql) with its zone
// set to UTC, so a value without an offset is UTC.
//
// This file emulates the Joda-Time parsing machinery that matters here:
// lenient number fields (a field "MM" accepts 1 or 2 digits, years accept up to
// 9 digits and a sign), fixed-width fields of the basic formats,
// case-insensitive literals ("t", "z", "-w" are accepted), the
// longest-alternative rule of Joda's MatchingParser, fractions of hour,
// minute and second (truncated to milliseconds), offsets Z, ±hh, ±hhmm, ±hh:mm
// (also seconds and millis), and Joda's field validation and field-setting
// order (e.g. a week date without a day is the Thursday of that week, because
// parsing starts from 1970-01-01 which is a Thursday; a time without a date is
// on 1970-01-01).
//
// Consequences worth knowing (all follow from the formatter order):
//   - "2024" is year 2024 (Jan 1); so is any string of 1 to 9 digits except
//     exactly 8 digits, which is yyyyMMdd (:basic-date comes first) when that
//     is a valid date. "10" is the year 10, not 10 o'clock.
//   - "1709287200000" (13 digits) is not parseable.
//   - RFC 1123 strings ("Fri, 01 Mar 2024 10:00:00 GMT") are not parseable, but
//     the :rfc822 formatter accepts a numeric offset
//     ("Fri, 01 Mar 2024 10:00:00 +0000"); a wrong day name moves the date to
//     that weekday of the same ISO week, as Joda does.
//
// The result is in UTC and has millisecond precision. ok is false when no
// formatter accepts s (PuppetDB then answers 400 "'s' is not a valid timestamp
// value"). A JSON number (epoch milliseconds) is not handled here.
func ParseTimestamp(s string) (time.Time, bool) {
	for _, f := range formatterOrder {
		if ms, ok := parseWith(f.p, s); ok {
			return time.UnixMilli(ms).UTC(), true
		}
	}
	return time.Time{}, false
}

// ---------------------------------------------------------------------------
// Joda-Time emulation.

// jfield identifies a Joda DateTimeField. The numeric order is the order in
// which Joda's DateTimeParserBucket applies saved fields (sorted by range
// duration field, then duration field, largest first).
type jfield int

const (
	fYear jfield = iota
	fWeekyear
	fMonth
	fDayOfYear
	fWeekOfWeekyear
	fDayOfMonth
	fDayOfWeek
	fHour
	fMinute
	fFracHour // milli of hour (ISO fraction of hour)
	fSecond
	fFracMinute // milli of minute
	fFracSecond // milli of second
)

const (
	msSecond = int64(1000)
	msMinute = 60 * msSecond
	msHour   = 60 * msMinute
	msDay    = 24 * msHour
	msWeek   = 7 * msDay

	jodaMinYear = -292275054
	jodaMaxYear = 292278993
)

type savedField struct {
	f jfield
	v int64
}

type bucket struct {
	fields    []savedField
	offset    int64
	hasOffset bool
}

// bucketState is a snapshot of a bucket (Joda's SavedState).
type bucketState struct {
	fields    []savedField
	offset    int64
	hasOffset bool
}

func (b *bucket) save() bucketState {
	return bucketState{append([]savedField(nil), b.fields...), b.offset, b.hasOffset}
}

func (b *bucket) restore(st bucketState) {
	b.fields = append(b.fields[:0], st.fields...)
	b.offset, b.hasOffset = st.offset, st.hasOffset
}

// A jparser is a Joda DateTimeParser: it returns the new position, or the
// bitwise complement of the failure position.
type jparser interface {
	parse(b *bucket, s string, pos int) int
}

// seqP is a Composite parser: elements in order, no backtracking.
type seqP []jparser

func (p seqP) parse(b *bucket, s string, pos int) int {
	for _, e := range p {
		if pos < 0 {
			break
		}
		pos = e.parse(b, s, pos)
	}
	return pos
}

// matchP is Joda's MatchingParser: it tries every alternative and keeps the
// one that got furthest; a nil alternative makes the whole thing optional.
type matchP []jparser

func (p matchP) parse(b *bucket, s string, pos int) int {
	orig := b.save()
	isOptional := false
	bestValid := pos
	var best *bucketState
	bestInvalid := pos
	for i, alt := range p {
		if alt == nil {
			// The empty parser wins only if nothing is better.
			if bestValid <= pos {
				return pos
			}
			isOptional = true
			break
		}
		np := alt.parse(b, s, pos)
		if np >= pos {
			if np > bestValid {
				if np >= len(s) || i+1 >= len(p) || p[i+1] == nil {
					// Completely parsed text or no more parsers to check.
					return np
				}
				bestValid = np
				st := b.save()
				best = &st
			}
		} else if f := ^np; f > bestInvalid {
			bestInvalid = f
		}
		b.restore(orig)
	}
	if bestValid > pos || (bestValid == pos && isOptional) {
		if best != nil {
			b.restore(*best)
		}
		return bestValid
	}
	return ^bestInvalid
}

func optional(p jparser) jparser { return matchP{p, nil} }

// charLit is Joda's CharacterLiteral (case-insensitive comparison).
type charLit byte

func (c charLit) parse(_ *bucket, s string, pos int) int {
	if pos >= len(s) {
		return ^pos
	}
	if !eqFold(s[pos], byte(c)) {
		return ^pos
	}
	return pos + 1
}

// strLit is Joda's StringLiteral (case-insensitive prefix match).
type strLit string

func (l strLit) parse(_ *bucket, s string, pos int) int {
	if len(s)-pos < len(l) {
		return ^pos
	}
	for i := 0; i < len(l); i++ {
		if !eqFold(s[pos+i], l[i]) {
			return ^pos
		}
	}
	return pos + len(l)
}

func eqFold(a, b byte) bool {
	if a == b {
		return true
	}
	lower := func(c byte) byte {
		if c >= 'A' && c <= 'Z' {
			return c + 32
		}
		return c
	}
	return lower(a) == lower(b)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// numP is Joda's NumberFormatter parse (PaddedNumber/UnpaddedNumber): up to
// max digits, an optional leading sign for signed fields. With fixed set it is
// a FixedNumber: exactly max digits.
type numP struct {
	f      jfield
	max    int
	signed bool
	fixed  bool
}

func (p numP) parse(b *bucket, s string, pos int) int {
	limit := min(p.max, len(s)-pos)
	negative := false
	hasSign := false
	length := 0
	for length < limit {
		c := s[pos+length]
		if length == 0 && (c == '-' || c == '+') && p.signed {
			negative = c == '-'
			if length+1 >= limit || !isDigit(s[pos+length+1]) {
				break
			}
			hasSign = true
			length++
			limit = min(limit+1, len(s)-pos)
			continue
		}
		if !isDigit(c) {
			break
		}
		length++
	}
	if length == 0 {
		return ^pos
	}
	start := pos
	if hasSign {
		start++
	}
	var v int64
	for i := start; i < pos+length; i++ {
		v = v*10 + int64(s[i]-'0')
	}
	if negative {
		v = -v
	}
	np := pos + length
	if p.fixed {
		expected := pos + p.max
		if np != expected {
			if p.signed && hasSign {
				expected++
			}
			if np > expected {
				return ^(expected + 1)
			} else if np < expected {
				return ^np
			}
		}
	}
	b.fields = append(b.fields, savedField{p.f, v})
	return np
}

// fracP is Joda's Fraction parser (appendFractionOf{Hour,Minute,Second}):
// digits beyond millisecond precision are truncated.
type fracP struct {
	f    jfield // fFracHour, fFracMinute or fFracSecond
	max  int
	unit int64 // unit millis of the fractioned field
}

func (p fracP) parse(b *bucket, s string, pos int) int {
	limit := min(p.max, len(s)-pos)
	var value int64
	n := p.unit * 10
	length := 0
	for length < limit {
		c := s[pos+length]
		if !isDigit(c) {
			break
		}
		length++
		nn := n / 10
		value += int64(c-'0') * nn
		n = nn
	}
	value /= 10
	if length == 0 {
		return ^pos
	}
	if value > 2147483647 {
		return ^pos
	}
	b.fields = append(b.fields, savedField{p.f, value})
	return pos + length
}

// offsetP is Joda's TimeZoneOffset parser with zero-offset parse text "Z".
type offsetP struct{}

func digitCount(s string, pos, amount int) int {
	n := 0
	for n < amount && pos+n < len(s) && isDigit(s[pos+n]) {
		n++
	}
	return n
}

func (offsetP) parse(b *bucket, s string, pos int) int {
	limit := len(s) - pos
	if limit > 0 && eqFold(s[pos], 'Z') {
		b.offset, b.hasOffset = 0, true
		return pos + 1
	}
	if limit <= 1 {
		return ^pos
	}
	var negative bool
	switch s[pos] {
	case '-':
		negative = true
	case '+':
	default:
		return ^pos
	}
	limit--
	pos++
	if digitCount(s, pos, 2) < 2 {
		return ^pos
	}
	two := func(p int) int64 { return int64(s[p]-'0')*10 + int64(s[p+1]-'0') }
	hours := two(pos)
	if hours > 23 {
		return ^pos
	}
	offset := hours * msHour
	limit -= 2
	pos += 2
	func() {
		if limit <= 0 {
			return
		}
		var expectSep bool
		c := s[pos]
		switch {
		case c == ':':
			expectSep = true
			limit--
			pos++
		case isDigit(c):
		default:
			return
		}
		count := digitCount(s, pos, 2)
		if count == 0 && !expectSep {
			return
		} else if count < 2 {
			pos = ^pos
			return
		}
		minutes := two(pos)
		if minutes > 59 {
			pos = ^pos
			return
		}
		offset += minutes * msMinute
		limit -= 2
		pos += 2
		if limit <= 0 {
			return
		}
		if expectSep {
			if s[pos] != ':' {
				return
			}
			limit--
			pos++
		}
		count = digitCount(s, pos, 2)
		if count == 0 && !expectSep {
			return
		} else if count < 2 {
			pos = ^pos
			return
		}
		seconds := two(pos)
		if seconds > 59 {
			pos = ^pos
			return
		}
		offset += seconds * msSecond
		limit -= 2
		pos += 2
		if limit <= 0 {
			return
		}
		if expectSep {
			if s[pos] != '.' && s[pos] != ',' {
				return
			}
			limit--
			pos++
		}
		count = digitCount(s, pos, 3)
		if count == 0 && !expectSep {
			return
		} else if count < 1 {
			pos = ^pos
			return
		}
		offset += int64(s[pos]-'0') * 100
		pos++
		if count > 1 {
			offset += int64(s[pos]-'0') * 10
			pos++
			if count > 2 {
				offset += int64(s[pos] - '0')
				pos++
			}
		}
	}()
	if pos < 0 {
		return pos
	}
	if negative {
		offset = -offset
	}
	b.offset, b.hasOffset = offset, true
	return pos
}

// textP is Joda's TextField parser for English day-of-week / month names
// (short or long form, as written, all lower case or all upper case).
type textP struct {
	f     jfield
	names []string // index 0 = value 1
}

var (
	enDays   = []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}
	enMonths = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
)

func (p textP) parse(b *bucket, s string, pos int) int {
	maxLen := 0
	for _, n := range p.names {
		maxLen = max(maxLen, len(n))
	}
	limit := min(len(s), pos+maxLen)
	for i := limit; i > pos; i-- {
		m := s[pos:i]
		for idx, n := range p.names {
			for _, cand := range []string{n[:3], n} {
				if m == cand || m == asciiLower(cand) || m == asciiUpper(cand) {
					b.fields = append(b.fields, savedField{p.f, int64(idx + 1)})
					return i
				}
			}
		}
	}
	return ^pos
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 32
		}
	}
	return string(b)
}

func asciiUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 32
		}
	}
	return string(b)
}

// parseWith runs one formatter's parseDateTime: the whole string must be
// consumed, then the saved fields are applied to 1970-01-01T00:00Z.
func parseWith(p jparser, s string) (int64, bool) {
	var b bucket
	pos := p.parse(&b, s, 0)
	if pos < 0 || pos < len(s) {
		return 0, false
	}
	return b.computeMillis()
}

func (b *bucket) computeMillis() (int64, bool) {
	fields := append([]savedField(nil), b.fields...)
	sort.SliceStable(fields, func(i, j int) bool { return fields[i].f < fields[j].f })
	var ms int64
	var ok bool
	// Joda sets every field, then (resetFields) sets every field again.
	for pass := 0; pass < 2; pass++ {
		for _, sf := range fields {
			if ms, ok = setField(ms, sf.f, sf.v); !ok {
				return 0, false
			}
		}
	}
	if b.hasOffset {
		ms -= b.offset
	}
	return ms, true
}

// ---------------------------------------------------------------------------
// ISO chronology arithmetic (proleptic Gregorian, UTC, millis since epoch).

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }

// daysFromCivil returns days since 1970-01-01 (H. Hinnant's algorithm).
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := floorDiv(y, 400)
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

func civilFromDays(z int64) (y, m, d int64) {
	z += 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	if mp < 10 {
		m = mp + 3
	} else {
		m = mp - 9
	}
	if m <= 2 {
		y++
	}
	return
}

func isLeap(y int64) bool {
	return floorMod(y, 4) == 0 && (floorMod(y, 100) != 0 || floorMod(y, 400) == 0)
}

func daysInMonth(y, m int64) int64 {
	switch m {
	case 2:
		if isLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

func daysInYear(y int64) int64 {
	if isLeap(y) {
		return 366
	}
	return 365
}

type civil struct {
	y, m, d, doy, msOfDay, days int64
}

func toCivil(ms int64) civil {
	days := floorDiv(ms, msDay)
	y, m, d := civilFromDays(days)
	return civil{y, m, d, days - daysFromCivil(y, 1, 1) + 1, ms - days*msDay, days}
}

// isoDow: Monday=1 … Sunday=7.
func isoDow(days int64) int64 { return floorMod(days+3, 7) + 1 }

// firstWeekStart returns the day number of the Monday starting ISO week 1 of
// week-year y.
func firstWeekStart(y int64) int64 {
	jan4 := daysFromCivil(y, 1, 4)
	return jan4 - (isoDow(jan4) - 1)
}

func weeksInWeekyear(y int64) int64 { return (firstWeekStart(y+1) - firstWeekStart(y)) / 7 }

// isoWeek returns the ISO week-year and week number of a day number.
func isoWeek(days int64) (wy, w int64) {
	thursday := days - (isoDow(days) - 1) + 3
	wy, _, _ = civilFromDays(thursday)
	w = (days-firstWeekStart(wy))/7 + 1
	return
}

// setYear is Joda's BasicChronology.setYear.
func setYear(ms, year int64) int64 {
	c := toCivil(ms)
	doy := c.doy
	if doy > 31+28 {
		if isLeap(c.y) {
			if !isLeap(year) {
				doy--
			}
		} else if isLeap(year) {
			doy++
		}
	}
	return (daysFromCivil(year, 1, 1)+doy-1)*msDay + c.msOfDay
}

func inRange(v, lo, hi int64) bool { return v >= lo && v <= hi }

// setField is DateTimeField.set for the ISO chronology in UTC, including the
// bounds check (false = IllegalFieldValueException).
func setField(ms int64, f jfield, v int64) (int64, bool) {
	switch f {
	case fYear:
		if !inRange(v, jodaMinYear, jodaMaxYear) {
			return 0, false
		}
		return setYear(ms, v), true
	case fWeekyear:
		av := v
		if av < 0 {
			av = -av
		}
		if !inRange(av, jodaMinYear, jodaMaxYear) {
			return 0, false
		}
		days := floorDiv(ms, msDay)
		thisWY, thisWeek := isoWeek(days)
		if thisWY == v {
			return ms, true
		}
		thisDow := isoDow(days)
		maxOut := min(weeksInWeekyear(thisWY), weeksInWeekyear(v))
		setTo := min(thisWeek, maxOut)
		work := setYear(ms, v)
		wwy, _ := isoWeek(floorDiv(work, msDay))
		if wwy < v {
			work += msWeek
		} else if wwy > v {
			work -= msWeek
		}
		_, cur := isoWeek(floorDiv(work, msDay))
		work += (setTo - cur) * msWeek
		wd := floorDiv(work, msDay)
		work += (thisDow - isoDow(wd)) * msDay
		return work, true
	case fMonth:
		if !inRange(v, 1, 12) {
			return 0, false
		}
		c := toCivil(ms)
		dom := min(c.d, daysInMonth(c.y, v))
		return daysFromCivil(c.y, v, dom)*msDay + c.msOfDay, true
	case fDayOfMonth:
		c := toCivil(ms)
		if !inRange(v, 1, daysInMonth(c.y, c.m)) {
			return 0, false
		}
		return ms + (v-c.d)*msDay, true
	case fDayOfYear:
		c := toCivil(ms)
		if !inRange(v, 1, daysInYear(c.y)) {
			return 0, false
		}
		return ms + (v-c.doy)*msDay, true
	case fWeekOfWeekyear:
		days := floorDiv(ms, msDay)
		wy, w := isoWeek(days)
		hi := int64(52)
		if v > 52 {
			hi = weeksInWeekyear(wy)
		}
		if !inRange(v, 1, hi) {
			return 0, false
		}
		return ms + (v-w)*msWeek, true
	case fDayOfWeek:
		if !inRange(v, 1, 7) {
			return 0, false
		}
		return ms + (v-isoDow(floorDiv(ms, msDay)))*msDay, true
	case fHour:
		return setPrecise(ms, v, msHour, 24)
	case fMinute:
		return setPrecise(ms, v, msMinute, 60)
	case fSecond:
		return setPrecise(ms, v, msSecond, 60)
	case fFracHour:
		return setPrecise(ms, v, 1, msHour)
	case fFracMinute:
		return setPrecise(ms, v, 1, msMinute)
	case fFracSecond:
		return setPrecise(ms, v, 1, msSecond)
	}
	return 0, false
}

// setPrecise is PreciseDateTimeField.set: value in [0, rng).
func setPrecise(ms, v, unit, rng int64) (int64, bool) {
	if !inRange(v, 0, rng-1) {
		return 0, false
	}
	cur := floorMod(floorDiv(ms, unit), rng)
	return ms + (v-cur)*unit, true
}

// ---------------------------------------------------------------------------
// The formatters (Joda-Time 2.x ISODateTimeFormat definitions).

var (
	// elements
	yearEl     = numP{f: fYear, max: 9, signed: true}
	monthEl    = seqP{charLit('-'), numP{f: fMonth, max: 2}}
	domEl      = seqP{charLit('-'), numP{f: fDayOfMonth, max: 2}}
	weekyearEl = numP{f: fWeekyear, max: 9, signed: true}
	weekEl     = seqP{strLit("-W"), numP{f: fWeekOfWeekyear, max: 2}}
	dowEl      = seqP{charLit('-'), numP{f: fDayOfWeek, max: 1}}
	doyEl      = seqP{charLit('-'), numP{f: fDayOfYear, max: 3}}
	hourEl     = numP{f: fHour, max: 2}
	minuteEl   = seqP{charLit(':'), numP{f: fMinute, max: 2}}
	secondEl   = seqP{charLit(':'), numP{f: fSecond, max: 2}}
	fractionEl = seqP{charLit('.'), fracP{f: fFracSecond, max: 9, unit: msSecond}}
	offsetEl   = offsetP{}
	tEl        = charLit('T')

	// printer/parser formatters
	ymdF     = seqP{yearEl, monthEl, domEl}
	hmsF     = seqP{hourEl, minuteEl, secondEl}
	hmslF    = seqP{hourEl, minuteEl, secondEl, charLit('.'), fracP{f: fFracSecond, max: 3, unit: msSecond}}
	hmsfF    = seqP{hourEl, minuteEl, secondEl, fractionEl}
	timeF    = seqP{hmsfF, offsetEl}
	timeNoMs = seqP{hmsF, offsetEl}
	tTimeF   = seqP{tEl, timeF}
	tTimeNMs = seqP{tEl, timeNoMs}
	ordF     = seqP{yearEl, doyEl}
	weekF    = seqP{weekyearEl, weekEl, dowEl}

	basicYear     = numP{f: fYear, max: 4, signed: true}
	basicDateF    = seqP{basicYear, numP{f: fMonth, max: 2, fixed: true}, numP{f: fDayOfMonth, max: 2, fixed: true}}
	basicHMS      = seqP{numP{f: fHour, max: 2, fixed: true}, numP{f: fMinute, max: 2, fixed: true}, numP{f: fSecond, max: 2, fixed: true}}
	basicTimeF    = seqP{basicHMS, charLit('.'), fracP{f: fFracSecond, max: 9, unit: msSecond}, offsetEl}
	basicTimeNMs  = seqP{basicHMS, offsetEl}
	basicOrdF     = seqP{basicYear, numP{f: fDayOfYear, max: 3, fixed: true}}
	basicWeekF    = seqP{numP{f: fWeekyear, max: 4, signed: true}, charLit('W'), numP{f: fWeekOfWeekyear, max: 2, fixed: true}, numP{f: fDayOfWeek, max: 1, fixed: true}}
	decimalPointP = matchP{charLit('.'), charLit(',')}

	timeElementParser = seqP{hourEl, matchP{
		seqP{minuteEl, matchP{
			seqP{secondEl, optional(seqP{decimalPointP, fracP{f: fFracSecond, max: 9, unit: msSecond}})},
			seqP{decimalPointP, fracP{f: fFracMinute, max: 9, unit: msMinute}},
			nil,
		}},
		seqP{decimalPointP, fracP{f: fFracHour, max: 9, unit: msHour}},
		nil,
	}}
	dateElementParser = matchP{
		seqP{yearEl, optional(seqP{monthEl, optional(domEl)})},
		seqP{weekyearEl, weekEl, optional(dowEl)},
		seqP{yearEl, doyEl},
	}
	dateOptTimeParser = seqP{dateElementParser, optional(seqP{tEl, optional(timeElementParser), optional(offsetEl)})}
)

type namedFormatter struct {
	name string
	p    jparser
}

var allFormatters = map[string]jparser{
	"basic-date":                       basicDateF,
	"basic-date-time":                  seqP{basicDateF, tEl, basicTimeF},
	"basic-date-time-no-ms":            seqP{basicDateF, tEl, basicTimeNMs},
	"basic-ordinal-date":               basicOrdF,
	"basic-ordinal-date-time":          seqP{basicOrdF, tEl, basicTimeF},
	"basic-ordinal-date-time-no-ms":    seqP{basicOrdF, tEl, basicTimeNMs},
	"basic-time":                       basicTimeF,
	"basic-time-no-ms":                 basicTimeNMs,
	"basic-t-time":                     seqP{tEl, basicTimeF},
	"basic-t-time-no-ms":               seqP{tEl, basicTimeNMs},
	"basic-week-date":                  basicWeekF,
	"basic-week-date-time":             seqP{basicWeekF, tEl, basicTimeF},
	"basic-week-date-time-no-ms":       seqP{basicWeekF, tEl, basicTimeNMs},
	"date":                             ymdF,
	"date-element-parser":              dateElementParser,
	"date-hour":                        seqP{ymdF, tEl, hourEl},
	"date-hour-minute":                 seqP{ymdF, tEl, hourEl, minuteEl},
	"date-hour-minute-second":          seqP{ymdF, tEl, hmsF},
	"date-hour-minute-second-fraction": seqP{ymdF, tEl, hmsfF},
	"date-hour-minute-second-ms":       seqP{ymdF, tEl, hmslF},
	"date-opt-time":                    dateOptTimeParser,
	"date-parser":                      seqP{dateElementParser, optional(seqP{tEl, offsetEl})},
	"date-time":                        seqP{ymdF, tTimeF},
	"date-time-no-ms":                  seqP{ymdF, tTimeNMs},
	"date-time-parser":                 matchP{seqP{tEl, timeElementParser, optional(offsetEl)}, dateOptTimeParser},
	"hour":                             hourEl,
	"hour-minute":                      seqP{hourEl, minuteEl},
	"hour-minute-second":               hmsF,
	"hour-minute-second-fraction":      hmsfF,
	"hour-minute-second-ms":            hmslF,
	"local-date-opt-time":              seqP{dateElementParser, optional(seqP{tEl, timeElementParser})},
	"local-date":                       dateElementParser,
	"local-time":                       seqP{optional(tEl), timeElementParser},
	"ordinal-date":                     ordF,
	"ordinal-date-time":                seqP{ordF, tTimeF},
	"ordinal-date-time-no-ms":          seqP{ordF, tTimeNMs},
	"time":                             timeF,
	"time-element-parser":              timeElementParser,
	"time-no-ms":                       timeNoMs,
	"time-parser":                      seqP{optional(tEl), timeElementParser, optional(offsetEl)},
	"t-time":                           tTimeF,
	"t-time-no-ms":                     tTimeNMs,
	"week-date":                        weekF,
	"week-date-time":                   seqP{weekF, tTimeF},
	"week-date-time-no-ms":             seqP{weekF, tTimeNMs},
	"weekyear":                         weekyearEl,
	"weekyear-week":                    seqP{weekyearEl, weekEl},
	"weekyear-week-day":                weekF,
	"year":                             yearEl,
	"year-month":                       seqP{yearEl, monthEl},
	"year-month-day":                   ymdF,
	// (formatter "EEE, dd MMM yyyy HH:mm:ss Z"), English names.
	"rfc822": seqP{textP{fDayOfWeek, enDays}, strLit(", "), numP{f: fDayOfMonth, max: 2}, charLit(' '),
		textP{fMonth, enMonths}, charLit(' '), yearEl, charLit(' '), hourEl, charLit(':'),
		numP{f: fMinute, max: 2}, charLit(':'), numP{f: fSecond, max: 2}, charLit(' '), offsetEl},
	// (formatter "yyyy-MM-dd HH:mm:ss")
	"mysql": seqP{yearEl, charLit('-'), numP{f: fMonth, max: 2}, charLit('-'), numP{f: fDayOfMonth, max: 2},
		charLit(' '), hourEl, charLit(':'), numP{f: fMinute, max: 2}, charLit(':'), numP{f: fSecond, max: 2}},
}

// formatterNames is PuppetDB's ordered-formatters: the five "likely" formats,
// then the keys of clj-time.format/formatters in the seq order of the Clojure
// PersistentHashMap. That order is the keys sorted by their hasheq read in
// 5-bit chunks from the least significant end (Keyword.hasheq =
// hashCombine(Murmur3.hashUnencodedChars(name), 0) + 0x9e3779b9); it was
// computed once and is pinned by TestFormatterOrderMatchesClojureHashOrder.
var formatterNames = []string{
	"date-time", "date", "date-time-no-ms", "basic-date", "basic-date-time",
	"date-element-parser", "hour-minute", "t-time", "basic-ordinal-date",
	"hour", "time-no-ms", "weekyear-week-day", "week-date-time",
	"date-hour-minute-second-fraction", "basic-time-no-ms", "date-parser",
	"basic-week-date", "basic-t-time-no-ms", "local-time", "year-month-day",
	"date-opt-time", "rfc822", "date-hour-minute-second-ms",
	"basic-ordinal-date-time", "ordinal-date", "hour-minute-second-fraction",
	"date-hour-minute", "time", "basic-week-date-time", "weekyear",
	"basic-time", "hour-minute-second", "ordinal-date-time",
	"ordinal-date-time-no-ms", "hour-minute-second-ms", "time-parser",
	"date-time-parser", "year", "t-time-no-ms", "basic-week-date-time-no-ms",
	"weekyear-week", "local-date", "basic-ordinal-date-time-no-ms",
	"year-month", "local-date-opt-time", "week-date", "date-hour",
	"time-element-parser", "date-hour-minute-second", "week-date-time-no-ms",
	"basic-date-time-no-ms", "mysql", "basic-t-time",
}

var formatterOrder = func() []namedFormatter {
	out := make([]namedFormatter, 0, len(formatterNames))
	for _, n := range formatterNames {
		p, ok := allFormatters[n]
		if !ok {
			panic("pgcompat: unknown formatter " + n)
		}
		out = append(out, namedFormatter{n, p})
	}
	return out
}()
