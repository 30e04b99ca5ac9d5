package pgcompat

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// This file ports the to_char() half of PostgreSQL 15's
// src/backend/utils/adt/formatting.c for a database in the C.UTF-8 locale
// (lc_numeric / lc_monetary give "-", "+", ".", "," and a blank currency
// symbol; day and month names are English) and a UTC session time zone.

// ---------------------------------------------------------------------------
// Format-string parsing (parse_format).

type fmtNode struct {
	kw     *keyword // nil: literal text in lit
	lit    string
	suffix int
}

type keyword struct {
	name string
	id   int
}

const (
	sufFM = 1 << iota // DCH_S_FM
	sufTH             // DCH_S_TH
	sufth             // DCH_S_th
	sufSP             // DCH_S_SP
	sufTM             // DCH_S_TM
)

type suffix struct {
	name   string
	id     int
	prefix bool
}

var dchSuffixes = []suffix{
	{"FM", sufFM, true}, {"fm", sufFM, true},
	{"TM", sufTM, true}, {"tm", sufTM, true},
	{"TH", sufTH, false}, {"th", sufth, false},
	{"SP", sufSP, false},
}

func suffixSearch(s string, prefix bool) *suffix {
	for i := range dchSuffixes {
		sf := &dchSuffixes[i]
		if sf.prefix == prefix && strings.HasPrefix(s, sf.name) {
			return sf
		}
	}
	return nil
}

// keywordSearch is index_seq_search: the first keyword (in table order) that
// is a prefix of s. Only printable ASCII starts a keyword.
func keywordSearch(s string, table []keyword) *keyword {
	if s == "" || s[0] <= ' ' || s[0] >= '~' { // KeyWord_INDEX_FILTER
		return nil
	}
	for i := range table {
		if strings.HasPrefix(s, table[i].name) {
			return &table[i]
		}
	}
	return nil
}

// parseFormat splits a to_char pattern into keyword and literal nodes.
// Literal characters are copied to the output as they are; inside "..."
// a backslash quotes the next character; outside, a backslash is only
// special right before a double quote.
func parseFormat(str string, table []keyword, dch bool) []fmtNode {
	var out []fmtNode
	for len(str) > 0 {
		suf := 0
		if dch {
			if s := suffixSearch(str, true); s != nil {
				suf |= s.id
				str = str[len(s.name):]
			}
		}
		if str == "" {
			break
		}
		if kw := keywordSearch(str, table); kw != nil {
			n := fmtNode{kw: kw, suffix: suf}
			str = str[len(kw.name):]
			if dch && str != "" {
				if s := suffixSearch(str, false); s != nil {
					n.suffix |= s.id
					str = str[len(s.name):]
				}
			}
			out = append(out, n)
			continue
		}
		if str[0] == '"' {
			str = str[1:]
			for len(str) > 0 {
				if str[0] == '"' {
					str = str[1:]
					break
				}
				if str[0] == '\\' && len(str) > 1 {
					str = str[1:]
				}
				l := charLen(str)
				out = append(out, fmtNode{lit: str[:l]})
				str = str[l:]
			}
			continue
		}
		if str[0] == '\\' && len(str) > 1 && str[1] == '"' {
			str = str[1:]
		}
		l := charLen(str)
		out = append(out, fmtNode{lit: str[:l]})
		str = str[l:]
	}
	return out
}

func charLen(s string) int {
	_, l := utf8.DecodeRuneInString(s)
	if l < 1 {
		l = 1
	}
	return l
}

// ---------------------------------------------------------------------------
// Timestamps.

const (
	dchAD = iota + 1
	dchAM
	dchAD2 // A.D.
	dchAM2 // A.M.
	dchBC
	dchBC2
	dchPM
	dchPM2
	dchad
	dcham
	dchad2
	dcham2
	dchbc
	dchbc2
	dchpm
	dchpm2
	dchCC
	dchDAY
	dchDay
	dchday
	dchDDD
	dchDD
	dchDY
	dchDy
	dchdy
	dchD
	dchFF1
	dchFF2
	dchFF3
	dchFF4
	dchFF5
	dchFF6
	dchFX
	dchHH24
	dchHH12
	dchHH
	dchIDDD
	dchID
	dchIW
	dchIYYY
	dchIYY
	dchIY
	dchI
	dchJ
	dchMI
	dchMM
	dchMONTH
	dchMonth
	dchmonth
	dchMON
	dchMon
	dchmon
	dchMS
	dchOF
	dchQ
	dchRM
	dchrm
	dchSSSS
	dchSS
	dchTZH
	dchTZM
	dchTZ
	dchtz
	dchUS
	dchWW
	dchW
	dchYCommaYYY
	dchYYYY
	dchYYY
	dchYY
	dchY
)

// dchKeywords is DCH_keywords of PostgreSQL 15, in table order.
var dchKeywords = []keyword{
	{"A.D.", dchAD2}, {"A.M.", dchAM2}, {"AD", dchAD}, {"AM", dchAM},
	{"B.C.", dchBC2}, {"BC", dchBC},
	{"CC", dchCC},
	{"DAY", dchDAY}, {"DDD", dchDDD}, {"DD", dchDD}, {"DY", dchDY}, {"Day", dchDay}, {"Dy", dchDy}, {"D", dchD},
	{"FF1", dchFF1}, {"FF2", dchFF2}, {"FF3", dchFF3}, {"FF4", dchFF4}, {"FF5", dchFF5}, {"FF6", dchFF6}, {"FX", dchFX},
	{"HH24", dchHH24}, {"HH12", dchHH12}, {"HH", dchHH},
	{"IDDD", dchIDDD}, {"ID", dchID}, {"IW", dchIW}, {"IYYY", dchIYYY}, {"IYY", dchIYY}, {"IY", dchIY}, {"I", dchI},
	{"J", dchJ},
	{"MI", dchMI}, {"MM", dchMM}, {"MONTH", dchMONTH}, {"MON", dchMON}, {"MS", dchMS}, {"Month", dchMonth}, {"Mon", dchMon},
	{"OF", dchOF},
	{"P.M.", dchPM2}, {"PM", dchPM},
	{"Q", dchQ},
	{"RM", dchRM},
	{"SSSSS", dchSSSS}, {"SSSS", dchSSSS}, {"SS", dchSS},
	{"TZH", dchTZH}, {"TZM", dchTZM}, {"TZ", dchTZ},
	{"US", dchUS},
	{"WW", dchWW}, {"W", dchW},
	{"Y,YYY", dchYCommaYYY}, {"YYYY", dchYYYY}, {"YYY", dchYYY}, {"YY", dchYY}, {"Y", dchY},
	{"a.d.", dchad2}, {"a.m.", dcham2}, {"ad", dchad}, {"am", dcham},
	{"b.c.", dchbc2}, {"bc", dchbc},
	{"cc", dchCC},
	{"day", dchday}, {"ddd", dchDDD}, {"dd", dchDD}, {"dy", dchdy}, {"d", dchD},
	{"ff1", dchFF1}, {"ff2", dchFF2}, {"ff3", dchFF3}, {"ff4", dchFF4}, {"ff5", dchFF5}, {"ff6", dchFF6}, {"fx", dchFX},
	{"hh24", dchHH24}, {"hh12", dchHH12}, {"hh", dchHH},
	{"iddd", dchIDDD}, {"id", dchID}, {"iw", dchIW}, {"iyyy", dchIYYY}, {"iyy", dchIYY}, {"iy", dchIY}, {"i", dchI},
	{"j", dchJ},
	{"mi", dchMI}, {"mm", dchMM}, {"month", dchmonth}, {"mon", dchmon}, {"ms", dchMS},
	{"of", dchOF},
	{"p.m.", dchpm2}, {"pm", dchpm},
	{"q", dchQ},
	{"rm", dchrm},
	{"sssss", dchSSSS}, {"ssss", dchSSSS}, {"ss", dchSS},
	{"tzh", dchTZH}, {"tzm", dchTZM}, {"tz", dchtz},
	{"us", dchUS},
	{"ww", dchWW}, {"w", dchW},
	{"y,yyy", dchYCommaYYY}, {"yyyy", dchYYYY}, {"yyy", dchYYY}, {"yy", dchYY}, {"y", dchY},
}

var (
	pgDays      = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
	pgMonths    = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
	rmUpper     = []string{"XII", "XI", "X", "IX", "VIII", "VII", "VI", "V", "IV", "III", "II", "I"}
	rmLower     = []string{"xii", "xi", "x", "ix", "viii", "vii", "vi", "v", "iv", "iii", "ii", "i"}
	sessionZone = "UTC"
)

// ToCharTimestamp is PostgreSQL 15's to_char(timestamptz, text) in a session
// whose TimeZone is UTC (t is converted to UTC first).
//
// Every DCH pattern of PostgreSQL 15 is supported, with the FM, TM (English
// names, no padding), FX (no-op) prefixes and TH/th/SP suffixes, "quoted
// text" and backslash escapes. Note: PostgreSQL returns NULL for an empty
// format; this function returns "" (see ToCharTimestampNull).
func ToCharTimestamp(t time.Time, format string) string {
	t = t.UTC()
	var out strings.Builder
	y, mon, mday := t.Date()
	year := int64(y)
	month := int64(mon)
	hour := int64(t.Hour())
	minute := int64(t.Minute())
	sec := int64(t.Second())
	fsec := int64(t.Nanosecond() / 1000)
	wday := int64(t.Weekday()) // 0 = Sunday
	yday := int64(t.YearDay())
	days := daysFromCivil(year, month, int64(mday))

	for _, n := range parseFormat(format, dchKeywords, true) {
		if n.kw == nil {
			out.WriteString(n.lit)
			continue
		}
		fm := n.suffix&sufFM != 0
		pad := func(w int) int {
			if fm {
				return 0
			}
			return w
		}
		num := func(width int, v int64) {
			s := zeroPad(v, pad(width))
			out.WriteString(withTH(s, n.suffix))
		}
		// width for fields that may be negative (intervals): 2, else 3
		w2 := func(v int64) int {
			if v >= 0 {
				return 2
			}
			return 3
		}
		name := func(s string, padTo int) {
			if n.suffix&sufTM != 0 || fm {
				out.WriteString(s)
			} else {
				out.WriteString(fmt.Sprintf("%-*s", padTo, s))
			}
		}
		switch n.kw.id {
		case dchAM2, dchPM2:
			out.WriteString(pick(hour%24 >= 12, "P.M.", "A.M."))
		case dchAM, dchPM:
			out.WriteString(pick(hour%24 >= 12, "PM", "AM"))
		case dcham2, dchpm2:
			out.WriteString(pick(hour%24 >= 12, "p.m.", "a.m."))
		case dcham, dchpm:
			out.WriteString(pick(hour%24 >= 12, "pm", "am"))
		case dchHH, dchHH12:
			h := hour % 12
			if h == 0 {
				h = 12
			}
			num(w2(hour), h)
		case dchHH24:
			num(w2(hour), hour)
		case dchMI:
			num(w2(minute), minute)
		case dchSS:
			num(w2(sec), sec)
		case dchFF1:
			out.WriteString(withTH(fmt.Sprintf("%01d", fsec/100000), n.suffix))
		case dchFF2:
			out.WriteString(withTH(fmt.Sprintf("%02d", fsec/10000), n.suffix))
		case dchFF3, dchMS:
			out.WriteString(withTH(fmt.Sprintf("%03d", fsec/1000), n.suffix))
		case dchFF4:
			out.WriteString(withTH(fmt.Sprintf("%04d", fsec/100), n.suffix))
		case dchFF5:
			out.WriteString(withTH(fmt.Sprintf("%05d", fsec/10), n.suffix))
		case dchFF6, dchUS:
			out.WriteString(withTH(fmt.Sprintf("%06d", fsec), n.suffix))
		case dchSSSS:
			out.WriteString(withTH(strconv.FormatInt(hour*3600+minute*60+sec, 10), n.suffix))
		case dchtz:
			out.WriteString(strings.ToLower(sessionZone))
		case dchTZ:
			out.WriteString(sessionZone)
		case dchTZH:
			out.WriteString("+00")
		case dchTZM:
			out.WriteString("00")
		case dchOF:
			out.WriteString("+" + zeroPad(0, pad(2)))
		case dchAD2, dchBC2:
			out.WriteString(pick(year <= 0, "B.C.", "A.D."))
		case dchAD, dchBC:
			out.WriteString(pick(year <= 0, "BC", "AD"))
		case dchad2, dchbc2:
			out.WriteString(pick(year <= 0, "b.c.", "a.d."))
		case dchad, dchbc:
			out.WriteString(pick(year <= 0, "bc", "ad"))
		case dchMONTH:
			name(strings.ToUpper(pgMonths[month-1]), 9)
		case dchMonth:
			name(pgMonths[month-1], 9)
		case dchmonth:
			name(strings.ToLower(pgMonths[month-1]), 9)
		case dchMON:
			out.WriteString(strings.ToUpper(pgMonths[month-1][:3]))
		case dchMon:
			out.WriteString(pgMonths[month-1][:3])
		case dchmon:
			out.WriteString(strings.ToLower(pgMonths[month-1][:3]))
		case dchMM:
			num(w2(month), month)
		case dchDAY:
			name(strings.ToUpper(pgDays[wday]), 9)
		case dchDay:
			name(pgDays[wday], 9)
		case dchday:
			name(strings.ToLower(pgDays[wday]), 9)
		case dchDY:
			out.WriteString(strings.ToUpper(pgDays[wday][:3]))
		case dchDy:
			out.WriteString(pgDays[wday][:3])
		case dchdy:
			out.WriteString(strings.ToLower(pgDays[wday][:3]))
		case dchDDD:
			num(3, yday)
		case dchIDDD:
			_, w := isoWeek(days)
			num(3, (w-1)*7+isoDow(days))
		case dchDD:
			num(2, int64(mday))
		case dchD:
			out.WriteString(withTH(strconv.FormatInt(wday+1, 10), n.suffix))
		case dchID:
			d := wday
			if d == 0 {
				d = 7
			}
			out.WriteString(withTH(strconv.FormatInt(d, 10), n.suffix))
		case dchWW:
			num(2, (yday-1)/7+1)
		case dchIW:
			_, w := isoWeek(days)
			num(2, w)
		case dchQ:
			out.WriteString(withTH(strconv.FormatInt((month-1)/3+1, 10), n.suffix))
		case dchCC:
			var i int64
			if year > 0 {
				i = (year-1)/100 + 1
			} else {
				i = year/100 - 1
			}
			if i <= 99 && i >= -99 {
				num(w2(i), i)
			} else {
				out.WriteString(withTH(strconv.FormatInt(i, 10), n.suffix))
			}
		case dchYCommaYYY:
			ay := adjustYear(year)
			i := ay / 1000
			out.WriteString(withTH(fmt.Sprintf("%d,%03d", i, ay-i*1000), n.suffix))
		case dchYYYY, dchIYYY:
			v := yearFor(n.kw.id == dchIYYY, year, days)
			num(pick(adjustYear(year) >= 0, 4, 5), v)
		case dchYYY, dchIYY:
			v := yearFor(n.kw.id == dchIYY, year, days)
			num(pick(adjustYear(year) >= 0, 3, 4), v%1000)
		case dchYY, dchIY:
			v := yearFor(n.kw.id == dchIY, year, days)
			num(pick(adjustYear(year) >= 0, 2, 3), v%100)
		case dchY, dchI:
			v := yearFor(n.kw.id == dchI, year, days)
			out.WriteString(withTH(strconv.FormatInt(v%10, 10), n.suffix))
		case dchRM, dchrm:
			months := rmUpper
			if n.kw.id == dchrm {
				months = rmLower
			}
			s := months[12-month]
			if fm {
				out.WriteString(s)
			} else {
				out.WriteString(fmt.Sprintf("%-4s", s))
			}
		case dchW:
			out.WriteString(withTH(strconv.FormatInt((int64(mday)-1)/7+1, 10), n.suffix))
		case dchJ:
			out.WriteString(withTH(strconv.FormatInt(days+2440588, 10), n.suffix))
		case dchFX:
			// no output
		}
	}
	return out.String()
}

// ToCharTimestampNull is ToCharTimestamp plus PostgreSQL's NULL result: ok is
// false when format is empty (to_char(ts, ”) IS NULL).
func ToCharTimestampNull(t time.Time, format string) (s string, ok bool) {
	if format == "" {
		return "", false
	}
	return ToCharTimestamp(t, format), true
}

func pick[T any](c bool, a, b T) T {
	if c {
		return a
	}
	return b
}

// adjustYear is ADJUST_YEAR for timestamps: year 0 is 1 BC.
func adjustYear(y int64) int64 {
	if y <= 0 {
		return -(y - 1)
	}
	return y
}

func yearFor(iso bool, year, days int64) int64 {
	if iso {
		wy, _ := isoWeek(days)
		return adjustYear(wy)
	}
	return adjustYear(year)
}

// zeroPad is sprintf("%0*lld", width, v).
func zeroPad(v int64, width int) string {
	return fmt.Sprintf("%0*d", width, v)
}

// withTH applies the TH/th suffix (str_numth).
func withTH(s string, suf int) string {
	if suf&(sufTH|sufth) == 0 {
		return s
	}
	return s + numTH(s, suf&sufTH != 0)
}

// numTH is get_th: the ordinal suffix for the decimal text s.
func numTH(s string, upper bool) string {
	if s == "" {
		return ""
	}
	last := s[len(s)-1]
	if len(s) > 1 && s[len(s)-2] == '1' {
		last = 0
	}
	var r string
	switch last {
	case '1':
		r = "st"
	case '2':
		r = "nd"
	case '3':
		r = "rd"
	default:
		r = "th"
	}
	if upper {
		r = strings.ToUpper(r)
	}
	return r
}

// ---------------------------------------------------------------------------
// Numbers.

const (
	numCOMMA = iota + 1
	numDEC
	num0
	num9
	numB
	numC
	numD
	numE
	numFM
	numG
	numL
	numMI
	numPL
	numPR
	numRN
	numrn
	numSG
	numSP
	numS
	numKwTH
	numKwth
	numV
)

var numKeywords = []keyword{
	{",", numCOMMA}, {".", numDEC}, {"0", num0}, {"9", num9},
	{"B", numB}, {"C", numC}, {"D", numD}, {"EEEE", numE}, {"FM", numFM}, {"G", numG}, {"L", numL},
	{"MI", numMI}, {"PL", numPL}, {"PR", numPR}, {"RN", numRN}, {"SG", numSG}, {"SP", numSP}, {"S", numS},
	{"TH", numKwTH}, {"V", numV},
	{"b", numB}, {"c", numC}, {"d", numD}, {"eeee", numE}, {"fm", numFM}, {"g", numG}, {"l", numL},
	{"mi", numMI}, {"pl", numPL}, {"pr", numPR}, {"rn", numrn}, {"sg", numSG}, {"sp", numSP}, {"s", numS},
	{"th", numKwth}, {"v", numV},
}

const (
	nfDECIMAL = 1 << iota
	nfLDECIMAL
	nfZERO
	nfBLANK
	nfFILLMODE
	nfLSIGN
	nfBRACKET
	nfMINUS
	nfPLUS
	nfROMAN
	nfMULTI
	nfPLUSPOST
	nfMINUSPOST
	nfEEEE
)

const (
	lsignNone = iota
	lsignPre
	lsignPost
)

type numDesc struct {
	pre, post, lsign, flag, preLsignNum, multi, zeroStart, zeroEnd int
}

func (d *numDesc) has(f int) bool { return d.flag&f != 0 }

// ErrNumFormat is the class of errors ToCharNumberErr returns for an invalid
// number format; Error() is PostgreSQL's message text.
var ErrNumFormat = errors.New("invalid number format")

type numFormatError struct{ msg string }

func (e *numFormatError) Error() string        { return e.msg }
func (e *numFormatError) Is(target error) bool { return target == ErrNumFormat }

func numErr(msg string) error { return &numFormatError{msg} }

// prepare is NUMDesc_prepare.
func (d *numDesc) prepare(n fmtNode) error {
	if n.kw == nil {
		return nil
	}
	id := n.kw.id
	if d.has(nfEEEE) && id != numE {
		return numErr(`"EEEE" must be the last pattern used`)
	}
	switch id {
	case num9:
		if d.has(nfBRACKET) {
			return numErr(`"9" must be ahead of "PR"`)
		}
		if d.has(nfMULTI) {
			d.multi++
			break
		}
		if d.has(nfDECIMAL) {
			d.post++
		} else {
			d.pre++
		}
	case num0:
		if d.has(nfBRACKET) {
			return numErr(`"0" must be ahead of "PR"`)
		}
		if !d.has(nfZERO) && !d.has(nfDECIMAL) {
			d.flag |= nfZERO
			d.zeroStart = d.pre + 1
		}
		if !d.has(nfDECIMAL) {
			d.pre++
		} else {
			d.post++
		}
		d.zeroEnd = d.pre + d.post
	case numB:
		if d.pre == 0 && d.post == 0 && !d.has(nfZERO) {
			d.flag |= nfBLANK
		}
	case numD, numDEC:
		if id == numD {
			d.flag |= nfLDECIMAL
		}
		if d.has(nfDECIMAL) {
			return numErr("multiple decimal points")
		}
		if d.has(nfMULTI) {
			return numErr(`cannot use "V" and decimal point together`)
		}
		d.flag |= nfDECIMAL
	case numFM:
		d.flag |= nfFILLMODE
	case numS:
		if d.has(nfLSIGN) {
			return numErr(`cannot use "S" twice`)
		}
		if d.has(nfPLUS) || d.has(nfMINUS) || d.has(nfBRACKET) {
			return numErr(`cannot use "S" and "PL"/"MI"/"SG"/"PR" together`)
		}
		if !d.has(nfDECIMAL) {
			d.lsign = lsignPre
			d.preLsignNum = d.pre
			d.flag |= nfLSIGN
		} else if d.lsign == lsignNone {
			d.lsign = lsignPost
			d.flag |= nfLSIGN
		}
	case numMI:
		if d.has(nfLSIGN) {
			return numErr(`cannot use "S" and "MI" together`)
		}
		d.flag |= nfMINUS
		if d.has(nfDECIMAL) {
			d.flag |= nfMINUSPOST
		}
	case numPL:
		if d.has(nfLSIGN) {
			return numErr(`cannot use "S" and "PL" together`)
		}
		d.flag |= nfPLUS
		if d.has(nfDECIMAL) {
			d.flag |= nfPLUSPOST
		}
	case numSG:
		if d.has(nfLSIGN) {
			return numErr(`cannot use "S" and "SG" together`)
		}
		d.flag |= nfMINUS | nfPLUS
	case numPR:
		if d.has(nfLSIGN) || d.has(nfPLUS) || d.has(nfMINUS) {
			return numErr(`cannot use "PR" and "S"/"PL"/"MI"/"SG" together`)
		}
		d.flag |= nfBRACKET
	case numRN, numrn:
		d.flag |= nfROMAN
	case numV:
		if d.has(nfDECIMAL) {
			return numErr(`cannot use "V" and decimal point together`)
		}
		d.flag |= nfMULTI
	case numE:
		if d.has(nfEEEE) {
			return numErr(`cannot use "EEEE" twice`)
		}
		if d.has(nfBLANK) || d.has(nfFILLMODE) || d.has(nfLSIGN) || d.has(nfBRACKET) ||
			d.has(nfMINUS) || d.has(nfPLUS) || d.has(nfROMAN) || d.has(nfMULTI) {
			return numErr(`"EEEE" is incompatible with other formats`)
		}
		d.flag |= nfEEEE
	}
	return nil
}

// ToCharNumber is ToCharNumberErr without the error: an invalid format or
// value gives "".
func ToCharNumber(v string, format string) string {
	s, err := ToCharNumberErr(v, format)
	if err != nil {
		return ""
	}
	return s
}

// ToCharNumberErr is PostgreSQL 15's to_char for numbers. v is the decimal
// text of the value ("88", "-12", "3.25", "1e3" is not accepted). An integer
// that fits in int4 takes the int4_to_char path (the one used for integer
// and smallint columns), a larger integer int8_to_char, anything else
// numeric_to_char; they differ only for EEEE (int4 goes through C's printf
// %e, which rounds ties to even) and V overflow.
//
// Supported: 9 0 . , D G S PL MI SG PR FM RN/rn TH/th V EEEE L (a blank, as
// in the C.UTF-8 locale), B/C/SP (accepted, no output, as in PostgreSQL).
// Errors carry PostgreSQL's message text (e.g. `multiple decimal points`).
func ToCharNumberErr(v string, format string) (string, error) {
	if format == "" {
		return "", nil
	}
	val, ok := parseDecimal(v)
	if !ok {
		return "", fmt.Errorf("invalid input syntax for type numeric: %q", v)
	}
	nodes := parseFormat(format, numKeywords, false)
	var d numDesc
	for _, n := range nodes {
		if err := d.prepare(n); err != nil {
			return "", err
		}
	}

	var numstr string
	var sign byte
	outPreSpaces := 0
	isInt := val.scale == 0
	intKind := 0 // 4 = int4, 8 = int8, 0 = numeric
	if isInt {
		if val.unscaled.IsInt64() {
			i := val.unscaled.Int64()
			if i >= math.MinInt32 && i <= math.MaxInt32 {
				intKind = 4
			} else {
				intKind = 8
			}
		}
	}

	switch {
	case d.has(nfROMAN):
		r := val.round(0)
		if !r.unscaled.IsInt64() || r.unscaled.Int64() < math.MinInt32 || r.unscaled.Int64() > math.MaxInt32 {
			return "", errors.New("integer out of range")
		}
		numstr = intToRoman(r.unscaled.Int64())
	case d.has(nfEEEE):
		if intKind == 4 {
			f := float64(val.unscaled.Int64())
			s := strconv.FormatFloat(f, 'e', d.post, 64)
			if !strings.HasPrefix(s, "-") {
				s = " " + s
			}
			numstr = s
		} else {
			s := val.sci(d.post)
			if !strings.HasPrefix(s, "-") {
				s = " " + s
			}
			numstr = s
		}
	default:
		var orgnum string
		if intKind != 0 {
			i := val.unscaled.Int64()
			if d.has(nfMULTI) {
				if intKind == 4 {
					p := math.Pow(10, float64(d.multi))
					var pm int32
					if p >= 2147483648 {
						pm = math.MinInt32 // (int32) of an out-of-range double on x86
					} else {
						pm = int32(p)
					}
					i = int64(int32(i) * pm)
				} else {
					p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d.multi)), nil)
					prod := new(big.Int).Mul(big.NewInt(i), p)
					if !prod.IsInt64() || !p.IsInt64() {
						return "", errors.New("bigint out of range")
					}
					i = prod.Int64()
				}
				d.pre += d.multi
			}
			orgnum = strconv.FormatInt(i, 10)
			if orgnum[0] == '-' {
				sign = '-'
				orgnum = orgnum[1:]
			} else {
				sign = '+'
			}
			preLen := len(orgnum)
			if d.post > 0 {
				numstr = orgnum + "." + strings.Repeat("0", d.post)
			} else {
				numstr = orgnum
			}
			if preLen < d.pre {
				outPreSpaces = d.pre - preLen
			} else if preLen > d.pre {
				numstr = overflowFill(d.pre, d.post)
			}
		} else {
			x := val
			if d.has(nfMULTI) {
				x = x.mulPow10(d.multi)
				d.pre += d.multi
			}
			orgnum = x.round(d.post).String()
			if orgnum[0] == '-' {
				sign = '-'
				numstr = orgnum[1:]
			} else {
				sign = '+'
				numstr = orgnum
			}
			preLen := len(numstr)
			if p := strings.IndexByte(numstr, '.'); p >= 0 {
				preLen = p
			}
			if preLen < d.pre {
				outPreSpaces = d.pre - preLen
			} else if preLen > d.pre {
				numstr = overflowFill(d.pre, d.post)
			}
		}
	}
	return numProcessor(nodes, &d, numstr, outPreSpaces, sign), nil
}

func overflowFill(pre, post int) string {
	b := []byte(strings.Repeat("#", pre+post+1))
	b[pre] = '.'
	return string(b)
}

// intToRoman is int_to_roman.
func intToRoman(number int64) string {
	if number > 3999 || number < 1 {
		return strings.Repeat("#", 15)
	}
	rm100 := []string{"C", "CC", "CCC", "CD", "D", "DC", "DCC", "DCCC", "CM"}
	rm10 := []string{"X", "XX", "XXX", "XL", "L", "LX", "LXX", "LXXX", "XC"}
	rm1 := []string{"I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX"}
	s := strconv.FormatInt(number, 10)
	var b strings.Builder
	l := len(s)
	for _, c := range []byte(s) {
		num := int(c) - '1'
		if num >= 0 {
			switch {
			case l > 3:
				for ; num != -1; num-- {
					b.WriteByte('M')
				}
			case l == 3:
				b.WriteString(rm100[num])
			case l == 2:
				b.WriteString(rm10[num])
			case l == 1:
				b.WriteString(rm1[num])
			}
		}
		l--
	}
	return b.String()
}

// numProcessor is NUM_processor for to_char.
func numProcessor(nodes []fmtNode, d *numDesc, number string, outPreSpaces int, sign byte) string {
	np := &numProc{d: d, number: number, lastRelevant: -1}
	if d.zeroStart != 0 {
		d.zeroStart--
	}
	if d.has(nfEEEE) {
		return number
	}
	if d.has(nfROMAN) {
		d.lsign, d.preLsignNum, d.post, d.pre = 0, 0, 0, 0
		outPreSpaces = 0
		sign = 0
		if d.has(nfFILLMODE) {
			d.flag = nfFILLMODE
		} else {
			d.flag = 0
		}
		d.flag |= nfROMAN
	}

	np.sign = sign
	if d.has(nfPLUS) || d.has(nfMINUS) {
		np.signWrote = !(d.has(nfPLUS) && !d.has(nfMINUS))
	} else {
		if np.sign != '-' && d.has(nfFILLMODE) {
			d.flag &^= nfBRACKET
		}
		np.signWrote = np.sign == '+' && d.has(nfFILLMODE) && !d.has(nfLSIGN)
		if d.lsign == lsignPre && d.pre == d.preLsignNum {
			d.lsign = lsignPost
		}
	}

	np.numCount = d.post + d.pre - 1
	np.outPreSpaces = outPreSpaces
	if d.has(nfFILLMODE) && d.has(nfDECIMAL) {
		np.lastRelevant = lastRelevantDecnum(number)
		if np.lastRelevant >= 0 && d.zeroEnd > np.outPreSpaces {
			lastZeroPos := len(number) - 1
			lastZeroPos = min(lastZeroPos, d.zeroEnd-np.outPreSpaces)
			if np.lastRelevant < lastZeroPos {
				np.lastRelevant = lastZeroPos
			}
		}
	}
	if !np.signWrote && np.outPreSpaces == 0 {
		np.numCount++
	}

	// C locale (NUM_prepare_locale with empty lconv fields or defaults).
	np.decimal = "."
	np.lNeg, np.lPos, np.lThousands, np.lCurrency = "-", "+", ",", " "

	out := &np.out
	for _, n := range nodes {
		if n.kw == nil {
			out.WriteString(n.lit)
			continue
		}
		switch n.kw.id {
		case num9, num0, numDEC, numD:
			np.numpartToChar(n.kw.id)
		case numCOMMA:
			if !np.numIn {
				if !d.has(nfFILLMODE) {
					out.WriteByte(' ')
				}
			} else {
				out.WriteByte(',')
			}
		case numG:
			if !np.numIn {
				if !d.has(nfFILLMODE) {
					out.WriteString(strings.Repeat(" ", utf8.RuneCountInString(np.lThousands)))
				}
			} else {
				out.WriteString(np.lThousands)
			}
		case numL:
			out.WriteString(np.lCurrency)
		case numRN:
			if d.has(nfFILLMODE) {
				out.WriteString(number)
			} else {
				fmt.Fprintf(out, "%15s", number)
			}
		case numrn:
			if d.has(nfFILLMODE) {
				out.WriteString(strings.ToLower(number))
			} else {
				fmt.Fprintf(out, "%15s", strings.ToLower(number))
			}
		case numKwth, numKwTH:
			if d.has(nfROMAN) || (len(number) > 0 && number[0] == '#') || np.sign == '-' || d.has(nfDECIMAL) {
				continue
			}
			out.WriteString(numTH(number, n.kw.id == numKwTH))
		case numMI:
			if np.sign == '-' {
				out.WriteByte('-')
			} else if !d.has(nfFILLMODE) {
				out.WriteByte(' ')
			}
		case numPL:
			if np.sign == '+' {
				out.WriteByte('+')
			} else if !d.has(nfFILLMODE) {
				out.WriteByte(' ')
			}
		case numSG:
			out.WriteByte(np.sign)
		}
	}
	s := out.String()
	if i := strings.IndexByte(s, 0); i >= 0 { // a NUL (SG with no sign) ends the C string
		s = s[:i]
	}
	return s
}

type numProc struct {
	d                               *numDesc
	out                             strings.Builder
	number                          string
	numberP                         int
	lastRelevant                    int
	sign                            byte
	signWrote, numIn                bool
	numCount, numCurr, outPreSpaces int
	decimal, lNeg, lPos             string
	lThousands, lCurrency           string
}

func lastRelevantDecnum(num string) int {
	p := strings.IndexByte(num, '.')
	if p < 0 {
		return -1
	}
	result := p
	for i := p + 1; i < len(num); i++ {
		if num[i] != '0' {
			result = i
		}
	}
	return result
}

func (np *numProc) at(i int) byte {
	if i < 0 || i >= len(np.number) {
		return 0
	}
	return np.number[i]
}

func (np *numProc) predecSpace() bool {
	return !np.d.has(nfZERO) && np.numberP == 0 && np.at(0) == '0' && np.d.post != 0
}

// numpartToChar is NUM_numpart_to_char.
func (np *numProc) numpartToChar(id int) {
	d := np.d
	out := &np.out
	if d.has(nfROMAN) {
		return
	}
	np.numIn = false
	lastRelIsDot := np.lastRelevant >= 0 && np.at(np.lastRelevant) == '.'

	if !np.signWrote &&
		(np.numCurr >= np.outPreSpaces || (d.has(nfZERO) && d.zeroStart == np.numCurr)) &&
		(!np.predecSpace() || lastRelIsDot) {
		switch {
		case d.has(nfLSIGN):
			if d.lsign == lsignPre {
				if np.sign == '-' {
					out.WriteString(np.lNeg)
				} else {
					out.WriteString(np.lPos)
				}
				np.signWrote = true
			}
		case d.has(nfBRACKET):
			out.WriteByte(pick(np.sign == '+', byte(' '), byte('<')))
			np.signWrote = true
		case np.sign == '+':
			if !d.has(nfFILLMODE) {
				out.WriteByte(' ')
			}
			np.signWrote = true
		case np.sign == '-':
			out.WriteByte('-')
			np.signWrote = true
		}
	}

	if id == num9 || id == num0 || id == numD || id == numDEC {
		if np.numCurr < np.outPreSpaces && (d.zeroStart > np.numCurr || !d.has(nfZERO)) {
			if !d.has(nfFILLMODE) {
				out.WriteByte(' ')
			}
		} else if d.has(nfZERO) && np.numCurr < np.outPreSpaces && d.zeroStart <= np.numCurr {
			out.WriteByte('0')
			np.numIn = true
		} else {
			if np.at(np.numberP) == '.' {
				if np.lastRelevant < 0 || np.at(np.lastRelevant) != '.' {
					out.WriteString(np.decimal)
				} else if d.has(nfFILLMODE) && lastRelIsDot {
					out.WriteString(np.decimal)
				}
			} else {
				if np.lastRelevant >= 0 && np.numberP > np.lastRelevant && id != num0 {
					// skip trailing zero
				} else if np.predecSpace() {
					if !d.has(nfFILLMODE) {
						out.WriteByte(' ')
					} else if lastRelIsDot {
						out.WriteByte('0')
					}
				} else {
					out.WriteByte(np.at(np.numberP)) // a NUL here ends the C string
					np.numIn = true
				}
			}
			if np.at(np.numberP) != 0 {
				np.numberP++
			}
		}

		end := np.numCount + pick(np.outPreSpaces != 0, 1, 0) + pick(d.has(nfDECIMAL), 1, 0)
		if np.lastRelevant >= 0 && np.lastRelevant == np.numberP {
			end = np.numCurr
		}
		if np.numCurr+1 == end {
			if np.signWrote && d.has(nfBRACKET) {
				out.WriteByte(pick(np.sign == '+', byte(' '), byte('>')))
			} else if d.has(nfLSIGN) && d.lsign == lsignPost {
				if np.sign == '-' {
					out.WriteString(np.lNeg)
				} else {
					out.WriteString(np.lPos)
				}
			}
		}
	}
	np.numCurr++
}

// ---------------------------------------------------------------------------
// A minimal decimal for to_char's numeric path.

type decimal struct {
	unscaled *big.Int
	scale    int // digits after the decimal point
}

// parseDecimal accepts [+-]digits[.digits] (also ".5" and "5.").
func parseDecimal(s string) (decimal, bool) {
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	intPart, frac, _ := strings.Cut(s, ".")
	if intPart == "" && frac == "" {
		return decimal{}, false
	}
	for _, part := range []string{intPart, frac} {
		for i := 0; i < len(part); i++ {
			if !isDigit(part[i]) {
				return decimal{}, false
			}
		}
	}
	u, ok := new(big.Int).SetString("0"+intPart+frac, 10)
	if !ok {
		return decimal{}, false
	}
	if neg {
		u.Neg(u)
	}
	return decimal{u, len(frac)}, true
}

var bigTen = big.NewInt(10)

func pow10(n int) *big.Int { return new(big.Int).Exp(bigTen, big.NewInt(int64(n)), nil) }

// round rounds half away from zero to s decimals (numeric round_var); the
// result has exactly s decimals (s >= 0).
func (x decimal) round(s int) decimal {
	if s < 0 {
		s = 0
	}
	if s >= x.scale {
		return decimal{new(big.Int).Mul(x.unscaled, pow10(s-x.scale)), s}
	}
	q, r := new(big.Int).QuoRem(x.unscaled, pow10(x.scale-s), new(big.Int))
	r.Abs(r).Mul(r, big.NewInt(2))
	if r.Cmp(pow10(x.scale-s)) >= 0 {
		if x.unscaled.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return decimal{q, s}
}

func (x decimal) mulPow10(n int) decimal {
	return decimal{new(big.Int).Mul(x.unscaled, pow10(n)), x.scale}
}

// String is numeric_out: no sign for zero, exactly scale decimals.
func (x decimal) String() string {
	neg := x.unscaled.Sign() < 0
	digits := new(big.Int).Abs(x.unscaled).String()
	if len(digits) <= x.scale {
		digits = strings.Repeat("0", x.scale-len(digits)+1) + digits
	}
	ip, fp := digits[:len(digits)-x.scale], digits[len(digits)-x.scale:]
	s := ip
	if x.scale > 0 {
		s += "." + fp
	}
	if neg {
		s = "-" + s
	}
	return s
}

// sci is get_str_from_var_sci: the exponent comes from the base-10000
// representation (i.e. the position of the first significant decimal digit),
// the significand is rounded to rscale digits half away from zero and not
// renormalised (9.99 at one digit prints as 10.0).
func (x decimal) sci(rscale int) string {
	if rscale < 0 {
		rscale = 0
	}
	exponent := 0
	if x.unscaled.Sign() != 0 {
		digits := new(big.Int).Abs(x.unscaled).String()
		exponent = len(digits) - 1 - x.scale
	}
	// significand = x / 10^exponent
	var sig decimal
	if exponent >= 0 {
		sig = decimal{x.unscaled, x.scale + exponent}
	} else {
		sig = decimal{new(big.Int).Mul(x.unscaled, pow10(-exponent)), x.scale}
	}
	return fmt.Sprintf("%se%+03d", sig.round(rscale).String(), exponent)
}
