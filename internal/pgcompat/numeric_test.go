package pgcompat

import (
	"math/big"
	"testing"
)

// Expected values derived by hand from select_div_scale (see AvgText) and
// cross-checked with exact decimal arithmetic, rounding half away from zero.
func TestAvgText(t *testing.T) {
	cases := []struct {
		sum   string
		count int64
		want  string
	}{
		{"2091", 61, "34.2786885245901639"},         // SPEC.md §11.3; 2091 > 61: qweight 0, scale 16
		{"10", 2, "5.0000000000000000"},             // SPEC.md §11.3
		{"169", 6, "28.1666666666666667"},           // conformance events.extract-functions.03 (28.166666666666668 as a float)
		{"1500", 1000, "1.5000000000000000"},        // PostgreSQL regress: avg(four) FROM onek
		{"98", 3, "32.6666666666666667"},            // PostgreSQL regress: avg_32
		{"123456", 2, "61728.000000000000"},         // digits [12 3456], weight 1: qweight 1, scale 12
		{"-7", 3, "-2.3333333333333333"},            // scale 16
		{"-5", 3, "-1.6666666666666667"},            // rounded away from zero
		{"-2", 3, "-0.66666666666666666667"},        // 2 <= 3: qweight -1, scale 20
		{"0", 5, "0.00000000000000000000"},          // zero: weight 0, first digit 0 <= 5, scale 20
		{"1", 3, "0.33333333333333333333"},          // scale 20
		{"2", 3, "0.66666666666666666667"},          // scale 20
		{"3", 3, "1.00000000000000000000"},          // equal first digits count as "less": scale 20
		{"10000", 1, "10000.0000000000000000"},      // digits [1], weight 1; 1 <= 1: qweight 0, scale 16
		{"9999", 1, "9999.0000000000000000"},        // scale 16
		{"7", 10000, "0.00070000000000000000"},      // qweight -1, scale 20
		{"123456789012", 7, "17636684144.57142857"}, // weight 2: scale 8
		{"5", 123456, "0.000040500259201658890617"}, // qweight -2, scale 24
		{"10000000000000000000000000000000000000000", 3, "3333333333333333333333333333333333333333"}, // scale 0
		{"9223372036854775807", 9223372036854775807, "1.00000000000000000000"},
	}
	for _, c := range cases {
		sum, _ := new(big.Int).SetString(c.sum, 10)
		if got := AvgText(sum, c.count); got != c.want {
			t.Errorf("AvgText(%s, %d) = %q, want %q", c.sum, c.count, got, c.want)
		}
	}
	if got := AvgText(big.NewInt(1), 0); got != "" {
		t.Errorf("AvgText over no rows = %q, want \"\"", got)
	}
}
