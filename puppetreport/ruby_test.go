package puppetreport_test

import (
	"math"
	"testing"

	"reportdb/jsonv"
	"reportdb/puppetreport"
)

func TestRubyFloatToS(t *testing.T) {
	cases := []struct {
		f    float64
		want string
	}{
		{1.0, "1.0"},
		{100.0, "100.0"},
		{0.1, "0.1"},
		{1.5, "1.5"},
		{-2.25, "-2.25"},
		{1e20, "1.0e+20"},
		{1e-5, "1.0e-05"},
		{1e-4, "0.0001"},
		{0.00012345, "0.00012345"},
		{1.5e16, "1.5e+16"},
		{1e16, "1.0e+16"},
		{1e15, "1.0e+15"}, // decpt 16 > DBL_DIG and no fraction: exponent form
		{123456789012345.0, "123456789012345.0"},
		{999999999999999.0, "999999999999999.0"},
		{1234567890123456.7, "1234567890123456.8"}, // decpt < digits: fixed
		{12345678901234567.0, "1.2345678901234568e+16"},
		{1e100, "1.0e+100"},
		{1.7976931348623157e308, "1.7976931348623157e+308"},
		{5e-324, "5.0e-324"},
		{0.021034459000000002, "0.021034459000000002"},
		{8.6497e-05, "8.6497e-05"},
		{0.0, "0.0"},
		{math.Copysign(0, -1), "-0.0"},
		{math.Inf(1), "Infinity"},
		{math.Inf(-1), "-Infinity"},
		{math.NaN(), "NaN"},
	}
	for _, tc := range cases {
		if got := puppetreport.RubyFloatToS(tc.f); got != tc.want {
			t.Errorf("RubyFloatToS(%v) = %q, want %q", tc.f, got, tc.want)
		}
	}
}

func TestRubyToS(t *testing.T) {
	cases := []struct {
		json string // parsed with jsonv; "" means Go nil
		want string
	}{
		{"null", ""},
		{`"plain"`, "plain"},
		{`"with \"quotes\" and \\ kept raw"`, `with "quotes" and \ kept raw`},
		{"true", "true"},
		{"false", "false"},
		{"0", "0"},
		{"-0", "0"},
		{"42", "42"},
		{"123456789012345678901234567890", "123456789012345678901234567890"},
		{"1.0", "1.0"},
		{"1e20", "1.0e+20"},
		{"1E-5", "1.0e-05"},
		{"100.0", "100.0"},
		{"1.5e16", "1.5e+16"},
		{"123456789012345.0", "123456789012345.0"},
		{"-0.0", "-0.0"},
		{"1e400", "Infinity"},
		{"[]", "[]"},
		{"{}", "{}"},
		{`["a", null]`, `["a", nil]`},
		{`["0"]`, `["0"]`},
		{`[1, 2.5, true, false, null, [], {}]`, `[1, 2.5, true, false, nil, [], {}]`},
		{`{"a":1,"b":null}`, `{"a"=>1, "b"=>nil}`},
		{`{"a":{"b":[1,{"c":"d"}]}}`, `{"a"=>{"b"=>[1, {"c"=>"d"}]}}`},
		{`{"a":1,"b":2,"a":3}`, `{"a"=>3, "b"=>2}`}, // Ruby Hash from JSON: first position, last value
		{`["q\"uote", "back\\slash"]`, `["q\"uote", "back\\slash"]`},
		{`["line\nbreak\ttab\r\f\b\u0007\u000b\u001b"]`, `["line\nbreak\ttab\r\f\b\a\v\e"]`},
		{`["#{x} #$y #@z # #x #"]`, `["\#{x} \#$y \#@z # #x #"]`},
		{`["na\u00efve", "日本", "emoji 😀"]`, `["naïve", "日本", "emoji 😀"]`},
		{`["\u0000\u0001\u007f"]`, `["\u0000\u0001\u007F"]`},
		{`["\u0085 \u2028 \u2029 \u00a0"]`, "[\"\\u0085 \\u2028 \\u2029 \u00a0\"]"},
		{`["\u0378 \ufffe \ud83d\ude00"]`, "[\"\\u0378 \\uFFFE \U0001F600\"]"},
		{`["\udb80\udc00"]`, "[\"\U000F0000\"]"}, // private use: printable
		{`["\ud83f\udffe"]`, `["\u{1FFFE}"]`},    // unassigned beyond the BMP
		{`[{"k\"ey":"v"}]`, `[{"k\"ey"=>"v"}]`},
	}
	for _, tc := range cases {
		v, err := jsonv.Parse([]byte(tc.json))
		if err != nil {
			t.Fatalf("%s: %v", tc.json, err)
		}
		if got := puppetreport.RubyToS(v); got != tc.want {
			t.Errorf("RubyToS(%s)\n got %s\nwant %s", tc.json, got, tc.want)
		}
	}
	if got := puppetreport.RubyToS(nil); got != "" {
		t.Errorf("RubyToS(nil) = %q", got)
	}
}

// TestEndTimeTruncation checks Time + Float with the exact binary value of
// the float and truncation (not rounding) to milliseconds.
func TestEndTimeTruncation(t *testing.T) {
	cases := []struct {
		time, total, want string
	}{
		// .123456789 + 5.54999999999999982236431605997495353221893310546875
		{"2024-03-01T10:00:00.123456789+01:00", "5.55", "2024-03-01T10:00:05.673+01:00"},
		// .123 + 5.5499999... = 5.672999... -> .672 (SPEC §8.2)
		{"2024-03-01T10:00:00.123+01:00", "5.55", "2024-03-01T10:00:05.672+01:00"},
		// 0.1 + 0.2 exact: 0.3000000000000000166 -> .300
		{"2024-03-01T10:00:00.1Z", "0.2", "2024-03-01T10:00:00.300Z"},
		// 0.7 = 0.6999999999999999555910790149937 -> .699
		{"2024-03-01T10:00:00Z", "0.7", "2024-03-01T10:00:00.699Z"},
		{"2024-03-01T10:00:00.999999999Z", "0.001", "2024-03-01T10:00:01.000Z"},
		{"2024-02-28T23:59:59.999+00:00", "86400", "2024-02-29T23:59:59.999+00:00"},
		{"2024-03-01T10:00:00.5+14:00", "-1", "2024-03-01T09:59:59.500+14:00"},
		{"1969-12-31T23:59:59.9995Z", "0", "1969-12-31T23:59:59.999Z"},
	}
	for _, tc := range cases {
		doc := baseReport(t)
		doc.Set("time", tc.time)
		at(doc, "metrics", "time").(*jsonv.Object).Set("values", []any{[]any{"total", "Total", jsonv.Number(tc.total)}})
		out, err := puppetreport.Convert(doc, opts())
		if err != nil {
			t.Fatalf("%s + %s: %v", tc.time, tc.total, err)
		}
		if got, _ := out.Get("end_time"); got != tc.want {
			t.Errorf("%s + %s = %v, want %s", tc.time, tc.total, got, tc.want)
		}
	}
}
