package wire

import (
	"errors"
	"time"
)

var errDatetime = errors.New("not a wire datetime")

// ParseDatetime parses a wire datetime: yyyy-MM-ddTHH:mm[:ss[.f{1,9}]] with
// a zone of Z or ±hh:mm, and returns it truncated to whole milliseconds.
func ParseDatetime(s string) (time.Time, error) {
	b := s
	num := func(i, n int) (int, bool) {
		if i+n > len(b) {
			return 0, false
		}
		v := 0
		for _, c := range []byte(b[i : i+n]) {
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int(c-'0')
		}
		return v, true
	}
	if len(b) < 17 || b[4] != '-' || b[7] != '-' || b[10] != 'T' || b[13] != ':' {
		return time.Time{}, errDatetime
	}
	year, ok1 := num(0, 4)
	month, ok2 := num(5, 2)
	day, ok3 := num(8, 2)
	hour, ok4 := num(11, 2)
	minute, ok5 := num(14, 2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5) {
		return time.Time{}, errDatetime
	}
	i := 16
	sec, nanos := 0, 0
	if i < len(b) && b[i] == ':' {
		v, ok := num(i+1, 2)
		if !ok {
			return time.Time{}, errDatetime
		}
		sec = v
		i += 3
		if i < len(b) && b[i] == '.' {
			i++
			start := i
			for i < len(b) && b[i] >= '0' && b[i] <= '9' {
				i++
			}
			n := i - start
			if n < 1 || n > 9 {
				return time.Time{}, errDatetime
			}
			v, _ := num(start, n)
			for k := n; k < 9; k++ {
				v *= 10
			}
			nanos = v
		}
	}
	if i >= len(b) {
		return time.Time{}, errDatetime
	}
	offset := 0
	switch b[i] {
	case 'Z':
		if i+1 != len(b) {
			return time.Time{}, errDatetime
		}
	case '+', '-':
		if len(b) != i+6 || b[i+3] != ':' {
			return time.Time{}, errDatetime
		}
		hh, ok1 := num(i+1, 2)
		mm, ok2 := num(i+4, 2)
		if !ok1 || !ok2 || hh > 18 || mm > 59 {
			return time.Time{}, errDatetime
		}
		offset = hh*3600 + mm*60
		if b[i] == '-' {
			offset = -offset
		}
	default:
		return time.Time{}, errDatetime
	}
	if month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, errDatetime
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, nanos, time.FixedZone("", offset))
	if t.Day() != day {
		return time.Time{}, errDatetime // e.g. February 30
	}
	return t.UTC().Truncate(time.Millisecond), nil
}

// FormatMillis renders Unix milliseconds as PuppetDB renders timestamps:
// yyyy-MM-ddTHH:mm:ss.SSSZ in UTC.
func FormatMillis(ms int64) string {
	return string(AppendMillis(nil, ms))
}

// AppendMillis appends the PuppetDB rendering of Unix milliseconds ms.
// Years 0-9999 are rendered digit by digit (a page of 1,000 events has
// four timestamps a row, and time.Time.AppendFormat was a tenth of the
// server's CPU time rendering it); others as time.Time.AppendFormat does.
func AppendMillis(dst []byte, ms int64) []byte {
	const minMs, maxMs = -62167219200000, 253402300800000 // 0000-01-01, 10000-01-01
	if ms < minMs || ms >= maxMs {
		return time.UnixMilli(ms).UTC().AppendFormat(dst, "2006-01-02T15:04:05.000Z")
	}
	days, msOfDay := ms/86400000, ms%86400000
	if msOfDay < 0 {
		days--
		msOfDay += 86400000
	}
	y, m, d := civil(days)
	sec := msOfDay / 1000
	return append(dst,
		byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-',
		byte('0'+m/10), byte('0'+m%10), '-', byte('0'+d/10), byte('0'+d%10), 'T',
		byte('0'+sec/36000), byte('0'+sec/3600%10), ':',
		byte('0'+sec/600%6), byte('0'+sec/60%10), ':',
		byte('0'+sec%60/10), byte('0'+sec%10), '.',
		byte('0'+msOfDay%1000/100), byte('0'+msOfDay%100/10), byte('0'+msOfDay%10), 'Z')
}

// civil returns the proleptic Gregorian date of a day counted from
// 1970-01-01 (Howard Hinnant's days_from_civil, inverted).
func civil(days int64) (year, month, day int64) {
	z := days + 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era-- // floor division
	}
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	day = doy - (153*mp+2)/5 + 1
	month = mp + 3
	if month > 12 {
		month -= 12
	}
	year = yoe + era*400
	if month <= 2 {
		year++
	}
	return year, month, day
}

// AppendPGTimestamp appends ms as PostgreSQL renders a timestamptz inside
// json (session time zone UTC): 2025-01-06T06:00:46.15+00:00, trailing
// fraction zeros removed and the fraction omitted when zero.
func AppendPGTimestamp(dst []byte, ms int64) []byte {
	t := time.UnixMilli(ms).UTC()
	dst = t.AppendFormat(dst, "2006-01-02T15:04:05")
	if frac := ms % 1000; frac != 0 {
		if frac < 0 {
			frac += 1000
		}
		d := []byte{'.', byte('0' + frac/100), byte('0' + frac/10%10), byte('0' + frac%10)}
		for d[len(d)-1] == '0' {
			d = d[:len(d)-1]
		}
		dst = append(dst, d...)
	}
	return append(dst, "+00:00"...)
}
