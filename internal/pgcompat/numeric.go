package pgcompat

import (
	"math/big"
	"strings"
)

// AvgText returns the text PostgreSQL 15 prints for avg() over an integer,
// smallint or bigint column whose non-null values add up to sum over count
// rows: the numeric quotient sum/count with the display scale chosen by
// numeric.c's select_div_scale, rounded half away from zero (div_var with
// round = true), e.g. "34.2786885245901639", "5.0000000000000000".
//
// int4_avg_accum/int8_avg (and numeric_poly_avg for bigint) both end in
//
//	numeric_div(int64_to_numeric(sum), int64_to_numeric(count))
//
// and numeric_div uses
//
//	static int
//	select_div_scale(const NumericVar *var1, const NumericVar *var2)
//	{
//		...
//		/* Get the actual (normalized) weight and first digit of each input */
//		weight1 = 0;			/* values to use if var1 is zero */
//		firstdigit1 = 0;
//		for (i = 0; i < var1->ndigits; i++)
//		{
//			firstdigit1 = var1->digits[i];
//			if (firstdigit1 != 0)
//			{
//				weight1 = var1->weight - i;
//				break;
//			}
//		}
//		... the same for var2 ...
//		/*
//		 * Estimate weight of quotient.  If the two first digits are equal, we
//		 * can't be sure, but assume that var1 is less than var2.
//		 */
//		qweight = weight1 - weight2;
//		if (firstdigit1 <= firstdigit2)
//			qweight--;
//
//		/* Select result scale */
//		rscale = NUMERIC_MIN_SIG_DIGITS - qweight * DEC_DIGITS;	/* 16 - 4*qweight */
//		rscale = Max(rscale, var1->dscale);	/* 0 for integers */
//		rscale = Max(rscale, var2->dscale);
//		rscale = Max(rscale, NUMERIC_MIN_DISPLAY_SCALE);	/* 0 */
//		rscale = Min(rscale, NUMERIC_MAX_DISPLAY_SCALE);	/* 1000 */
//		return rscale;
//	}
//
// where digits are base-10000 "NumericDigit"s (NBASE = 10000, DEC_DIGITS = 4),
// weight is the power of 10000 of the first digit, and a zero has no digits
// (weight 0, firstdigit 0). Worked examples: 2091/61 → first digits 2091 > 61,
// qweight 0, scale 16 → 34.2786885245901639; 123456/2 → 123456 is the digits
// [12, 3456] with weight 1, 12 > 2, qweight 1, scale 12 → 61728.000000000000;
// 1/3 → 1 <= 3, qweight -1, scale 20 → 0.33333333333333333333; 0/5 → scale 20.
//
// count must be positive (PostgreSQL's avg over no rows is NULL; AvgText
// returns "" then). A zero result never has a minus sign.
func AvgText(sum *big.Int, count int64) string {
	if count <= 0 || sum == nil {
		return ""
	}
	cnt := big.NewInt(count)
	w1, f1 := nbaseLead(sum)
	w2, f2 := nbaseLead(cnt)
	qweight := w1 - w2
	if f1 <= f2 {
		qweight--
	}
	rscale := 16 - qweight*4
	rscale = max(rscale, 0) // operand dscales are 0; NUMERIC_MIN_DISPLAY_SCALE
	rscale = min(rscale, 1000)
	return divRound(sum, cnt, rscale)
}

// nbaseLead returns the weight and the first base-10000 digit of |x| (0, 0
// for zero).
func nbaseLead(x *big.Int) (weight int, first int64) {
	if x.Sign() == 0 {
		return 0, 0
	}
	s := new(big.Int).Abs(x).String()
	// Base-10000 digits are groups of 4 decimal digits aligned at the
	// decimal point.
	lead := len(s) % 4
	if lead == 0 {
		lead = 4
	}
	weight = (len(s) - lead) / 4
	var f int64
	for _, c := range s[:lead] {
		f = f*10 + int64(c-'0')
	}
	return weight, f
}

// divRound formats a/b (b > 0) with exactly scale decimals, rounding half
// away from zero.
func divRound(a, b *big.Int, scale int) string {
	num := new(big.Int).Abs(a)
	num.Mul(num, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil))
	q, r := new(big.Int).QuoRem(num, b, new(big.Int))
	if r.Mul(r, big.NewInt(2)).Cmp(b) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	digits := q.String()
	if len(digits) <= scale {
		digits = strings.Repeat("0", scale-len(digits)+1) + digits
	}
	out := digits[:len(digits)-scale]
	if scale > 0 {
		out += "." + digits[len(digits)-scale:]
	}
	if a.Sign() < 0 && q.Sign() != 0 {
		out = "-" + out
	}
	return out
}
