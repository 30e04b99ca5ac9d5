package sqlgen

import (
	"strings"

	"reportdb/query"
	"reportdb/schema"
)

// dateOnlyPatterns are the to_char patterns whose value is the same for
// every instant of a UTC day.
var dateOnlyPatterns = []string{"YYYY", "IYYY", "Y,YYY", "YYY", "IYY", "YY", "IY", "Y", "I", "MONTH", "Month", "month",
	"MON", "Mon", "mon", "MM", "DAY", "Day", "day", "DY", "Dy", "dy", "DDD", "IDDD", "DD", "ID", "D",
	"WW", "IW", "W", "Q", "CC", "J", "RM", "rm", "FM", "FX", "TM", "TH", "th", "SP"}

// dateOnly reports whether a to_char format renders every instant of a UTC
// day the same way (no hour, minute, second... fields).
func dateOnly(format string) bool {
	for i := 0; i < len(format); {
		c := format[i]
		switch {
		case c == '"': // quoted literal
			j := strings.IndexByte(format[i+1:], '"')
			if j < 0 {
				return false
			}
			i += j + 2
		case c == '\\':
			i += 2
		case c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z':
			found := false
			for _, p := range dateOnlyPatterns {
				if strings.HasPrefix(format[i:], p) {
					i += len(p)
					found = true
					break
				}
			}
			if !found {
				return false
			}
		default:
			i++
		}
	}
	return true
}

// dayRollup renders an aggregating query grouped by to_string(timestamp,
// date-only format) in two steps: aggregate per UTC day (integer keys),
// then format each day once and combine the days that print the same.
// The result is the same as grouping by the formatted text directly, at a
// fraction of the cost of formatting every row. ok is false when the plan
// does not have that shape.
func (b *builder) dayRollup(p *query.Plan, where string) (string, []OutCol, bool) {
	if len(p.GroupBy) != 1 || p.GroupBy[0].Func != "to_string" || p.GroupBy[0].Field.Type != query.Timestamp ||
		!dateOnly(p.GroupBy[0].Format) || p.Distinct != nil {
		return "", nil, false
	}
	g := p.GroupBy[0]
	col := b.col(g.Field)
	day := "(" + schema.FloorSQL(col, "86400000") + " / 86400000)"
	inner := []string{day + " AS d"}
	var outer []string
	var cols []OutCol
	for i, c := range p.Columns {
		a := "a" + string(rune('0'+i/10)) + string(rune('0'+i%10))
		oc := OutCol{Name: c.Name, Func: c.Func, Width: 1}
		switch {
		case c.Func == "to_string" && c.Field == g.Field && c.Format == g.Format:
			oc.Type = query.String
			outer = append(outer, b.d.ToChar("(t.d * 86400000)", query.Timestamp, b.sameArg(g.Format)))
		case c.Func == "count":
			oc.Type = query.Number
			if c.Field == nil {
				inner = append(inner, "COUNT(*) AS "+a)
			} else {
				inner = append(inner, "COUNT("+b.col(c.Field)+") AS "+a)
			}
			outer = append(outer, "CAST(SUM(t."+a+") AS BIGINT)")
		case c.Func == "sum":
			oc.Type = query.Number
			inner = append(inner, "SUM("+b.col(c.Field)+") AS "+a)
			outer = append(outer, "CAST(SUM(t."+a+") AS BIGINT)")
		case c.Func == "min" || c.Func == "max":
			oc.Type = c.Field.Type
			fn := strings.ToUpper(c.Func)
			inner = append(inner, fn+"("+b.col(c.Field)+") AS "+a)
			outer = append(outer, fn+"(t."+a+")")
		case c.Func == "avg":
			oc.Type, oc.Width = query.Number, 2
			inner = append(inner, "SUM("+b.col(c.Field)+") AS "+a+"s", "COUNT("+b.col(c.Field)+") AS "+a+"c")
			outer = append(outer, "CAST(SUM(t."+a+"s) AS BIGINT), CAST(SUM(t."+a+"c) AS BIGINT)")
		default:
			return "", nil, false
		}
		cols = append(cols, oc)
	}
	from := b.fromClause(p.Entity, planUses(p, nil))
	sql := "SELECT " + strings.Join(outer, ", ") + " FROM (SELECT " + strings.Join(inner, ", ") +
		" FROM " + from + where + " GROUP BY " + day + ") t GROUP BY " +
		b.d.ToChar("(t.d * 86400000)", query.Timestamp, b.sameArg(g.Format))
	return sql, cols, true
}
