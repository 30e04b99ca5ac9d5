package pgcompat

import (
	"math/bits"
	"sort"
	"testing"
	"time"
)

func TestParseTimestamp(t *testing.T) {
	utc := func(y int, mo time.Month, d, h, mi, s, ms int) time.Time {
		return time.Date(y, mo, d, h, mi, s, ms*1e6, time.UTC)
	}
	ok := []struct {
		in   string
		want time.Time
	}{
		// SPEC.md §12.6 examples
		{"2024-03-01", utc(2024, 3, 1, 0, 0, 0, 0)},
		{"20240301", utc(2024, 3, 1, 0, 0, 0, 0)},
		{"2024-03-01T10:00", utc(2024, 3, 1, 10, 0, 0, 0)},
		{"2024-03-01 10:00:00", utc(2024, 3, 1, 10, 0, 0, 0)},
		{"2024-03-01T10:00:00+0100", utc(2024, 3, 1, 9, 0, 0, 0)},
		{"2024", utc(2024, 1, 1, 0, 0, 0, 0)},
		{"2024-03", utc(2024, 3, 1, 0, 0, 0, 0)},
		{"10:00:00", utc(1970, 1, 1, 10, 0, 0, 0)},
		{"2024-060", utc(2024, 2, 29, 0, 0, 0, 0)},
		{"2025-01-06T07:00:46.150+01:00", utc(2025, 1, 6, 6, 0, 46, 150)},
		{"2025-01-08T10:22:19.084Z", utc(2025, 1, 8, 10, 22, 19, 84)},
		{"2025-01-06T07:43:44.646+00:00", utc(2025, 1, 6, 7, 43, 44, 646)},
		{"2025-01-08T08:00:00Z", utc(2025, 1, 8, 8, 0, 0, 0)},
		// other ISO forms
		{"2024-03-01T10", utc(2024, 3, 1, 10, 0, 0, 0)},
		{"2024-03-01T10:00:00", utc(2024, 3, 1, 10, 0, 0, 0)},
		{"2024-03-01T10:00:00.5", utc(2024, 3, 1, 10, 0, 0, 500)},
		{"2024-03-01T10:00:00,25Z", utc(2024, 3, 1, 10, 0, 0, 250)},
		{"2024-03-01T10:00:00.123456789-05:30", utc(2024, 3, 1, 15, 30, 0, 123)},
		{"2024-03-01T10:00:00.9999Z", utc(2024, 3, 1, 10, 0, 0, 999)}, // truncated, not rounded
		{"2024-03-01T10:00:00+01", utc(2024, 3, 1, 9, 0, 0, 0)},
		{"2024-03-01T10:00:00-0130", utc(2024, 3, 1, 11, 30, 0, 0)},
		{"2024-03-01t10:00:00z", utc(2024, 3, 1, 10, 0, 0, 0)}, // Joda literals are case-insensitive
		{"2024-03-01T", utc(2024, 3, 1, 0, 0, 0, 0)},
		{"2024-03-01TZ", utc(2024, 3, 1, 0, 0, 0, 0)},
		{"2024-03-01T+02:00", utc(2024, 2, 29, 22, 0, 0, 0)},
		{"2024-3-1", utc(2024, 3, 1, 0, 0, 0, 0)}, // lenient field widths
		{"20240301T100000Z", utc(2024, 3, 1, 10, 0, 0, 0)},
		{"20240301T100000.250+0100", utc(2024, 3, 1, 9, 0, 0, 250)},
		{"2024061", utc(2024, 1, 1, 0, 0, 0, 0).AddDate(2024061-2024, 0, 0)}, // 7 digits: a year (date-element-parser comes first)
		{"2024-W09-5", utc(2024, 3, 1, 0, 0, 0, 0)},
		{"2024-W09", utc(2024, 2, 29, 0, 0, 0, 0)}, // Thursday: parsing starts on 1970-01-01
		{"2024W095", utc(2024, 3, 1, 0, 0, 0, 0)},
		{"2024-W09-5T10:00:00Z", utc(2024, 3, 1, 10, 0, 0, 0)},
		{"2020-W53-7", utc(2021, 1, 3, 0, 0, 0, 0)},
		{"2024-060T10:00:00.000Z", utc(2024, 2, 29, 10, 0, 0, 0)},
		{"2024060T100000Z", utc(2024, 2, 29, 10, 0, 0, 0)},
		{"T10:00:00Z", utc(1970, 1, 1, 10, 0, 0, 0)},
		{"T10", utc(1970, 1, 1, 10, 0, 0, 0)},
		{"10:30", utc(1970, 1, 1, 10, 30, 0, 0)},
		{"10:30:15.5+02:00", utc(1970, 1, 1, 8, 30, 15, 500)},
		{"10.5", utc(1970, 1, 1, 10, 30, 0, 0)},      // fraction of hour
		{"10:30.5", utc(1970, 1, 1, 10, 30, 30, 0)},  // fraction of minute
		{"103000Z", utc(1970, 1, 1, 10, 30, 0, 0)},   // basic-time-no-ms
		{"10", utc(10, 1, 1, 0, 0, 0, 0)},            // a year, not an hour
		{"-0001-01-01", utc(-1, 1, 1, 0, 0, 0, 0)},   // year -1 (2 BC)
		{"+2024-03-01", utc(2024, 3, 1, 0, 0, 0, 0)}, // Joda accepts a '+' sign
		{"Fri, 01 Mar 2024 10:00:00 +0100", utc(2024, 3, 1, 9, 0, 0, 0)},
		{"Mon, 01 Mar 2024 10:00:00 +0000", utc(2024, 2, 26, 10, 0, 0, 0)}, // day name wins, as in Joda
		{"FRIDAY, 01 march 2024 10:00:00 Z", utc(2024, 3, 1, 10, 0, 0, 0)},
	}
	for _, c := range ok {
		got, good := ParseTimestamp(c.in)
		if !good {
			t.Errorf("ParseTimestamp(%q): not parseable, want %v", c.in, c.want)
			continue
		}
		if !got.Equal(c.want) || got.Location() != time.UTC {
			t.Errorf("ParseTimestamp(%q) = %v, want %v", c.in, got, c.want)
		}
	}

	bad := []string{
		"", "notatime", "not a date", "yesterday", "now",
		"1709287200000", // a string of digits is not epoch millis
		"Fri, 01 Mar 2024 10:00:00 GMT",
		"Fri, 01 Mar 2024 10:00:00 UTC",
		"2024-02-30", "2024-13-01", "2023-060x", "2023-366", "2024-W54", "2024-03-01T24:00",
		"2024-03-01T10:60", "2024-03-01T10:00:60", "2024-03-01T10:00:00+24:00",
		"2024-03-01 10:00", " 2024-03-01", "2024-03-01 ", "2024/03/01", "01/03/2024",
		"2024-03-01T10:00:00.", "2024-03-01T10:00:00Z+01:00", "1e3", "-", "+", "T", "Z",
		"999999999", // beyond Joda's year range
	}
	for _, s := range bad {
		if got, good := ParseTimestamp(s); good {
			t.Errorf("ParseTimestamp(%q) = %v, want not parseable", s, got)
		}
	}
}

// Clojure's keyword hash (clojure.lang.Keyword.hasheq): Murmur3 over the
// UTF-16 name, Util.hashCombine with the (nil) namespace, plus 0x9e3779b9.
func clojureKeywordHash(name string) uint32 {
	mixK1 := func(k uint32) uint32 {
		k *= 0xcc9e2d51
		k = bits.RotateLeft32(k, 15)
		return k * 0x1b873593
	}
	mixH1 := func(h, k uint32) uint32 {
		h ^= k
		h = bits.RotateLeft32(h, 13)
		return h*5 + 0xe6546b64
	}
	var units []uint16
	for _, r := range name {
		units = append(units, uint16(r))
	}
	var h uint32
	for i := 1; i < len(units); i += 2 {
		h = mixH1(h, mixK1(uint32(units[i-1])|uint32(units[i])<<16))
	}
	if len(units)&1 == 1 {
		h ^= mixK1(uint32(units[len(units)-1]))
	}
	h ^= uint32(2 * len(units))
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	seed := int32(h)
	seed ^= int32(-1640531527) + (seed << 6) + (seed >> 2) // hashCombine(seed, 0)
	return uint32(seed) + 0x9e3779b9
}

func TestFormatterOrderMatchesClojureHashOrder(t *testing.T) {
	if got := int32(clojureKeywordHash("a")); got != -2123407586 {
		t.Fatalf("(hash :a) = %d, want -2123407586", got)
	}
	likely := map[string]bool{"date-time": true, "date": true, "date-time-no-ms": true, "basic-date": true, "basic-date-time": true}
	var rest []string
	for name := range allFormatters {
		if !likely[name] {
			rest = append(rest, name)
		}
	}
	// PersistentHashMap seq order: by the hash's 5-bit chunks, least
	// significant chunk first.
	key := func(h uint32) uint64 {
		var k uint64
		for i := 0; i < 7; i++ {
			k = k<<5 | uint64((h>>(5*i))&31)
		}
		return k
	}
	sort.Slice(rest, func(i, j int) bool {
		return key(clojureKeywordHash(rest[i])) < key(clojureKeywordHash(rest[j]))
	})
	want := append([]string{"date-time", "date", "date-time-no-ms", "basic-date", "basic-date-time"}, rest...)
	if len(want) != len(formatterNames) {
		t.Fatalf("%d formatters, want %d", len(formatterNames), len(want))
	}
	for i := range want {
		if formatterNames[i] != want[i] {
			t.Fatalf("formatterNames[%d] = %s, want %s", i, formatterNames[i], want[i])
		}
	}
}

func FuzzParseTimestamp(f *testing.F) {
	for _, s := range []string{"2024-03-01", "20240301", "2024-03-01T10:00:00.123+01:00", "2024-W09-5",
		"2024-060", "10:00", "T10.5Z", "Fri, 01 Mar 2024 10:00:00 +0100", "-292275054", "292278993-12-31T23:59:59.999-23:59"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := ParseTimestamp(s)
		if !ok {
			return
		}
		if got.Location() != time.UTC || got.Nanosecond()%1e6 != 0 {
			t.Fatalf("ParseTimestamp(%q) = %v: not UTC milliseconds", s, got)
		}
		if y := got.Year(); y >= 0 && y <= 9999 {
			// PuppetDB's own rendering parses back to the same instant.
			again, ok := ParseTimestamp(got.Format("2006-01-02T15:04:05.000Z"))
			if !ok || !again.Equal(got) {
				t.Fatalf("round trip of %q (%v) gave %v %v", s, got, again, ok)
			}
		}
	})
}
