package puppetreport

import (
	"math"
	"sort"
	"strconv"

	"reportdb/jsonv"
)

// metrics flattens the metrics object (categories in document order, each
// category's rows sorted by label) and returns the time/total value and
// its path, if there is one.
func metrics(f fields) (rows []metricRow, total *jsonv.Number, totalPath string, err error) {
	v := f.opt("metrics")
	if v == nil {
		return nil, nil, "", nil
	}
	mf, err := object("metrics", v, categories)
	if err != nil {
		return nil, nil, "", err
	}
	for ci, cat := range mf.o.Keys {
		cf, err := object(member("metrics", cat), mf.o.Values[ci], metricKeys)
		if err != nil {
			return nil, nil, "", err
		}
		name, err := cf.reqString("name")
		if err != nil {
			return nil, nil, "", err
		}
		if name != cat {
			return nil, nil, "", errf(cf.p("name"), "must equal its category %s; got %s", describe(cat), describe(name))
		}
		if _, err := cf.reqString("label"); err != nil {
			return nil, nil, "", err
		}
		vals, err := cf.required("values")
		if err != nil {
			return nil, nil, "", err
		}
		va, ok := vals.([]any)
		if !ok {
			return nil, nil, "", errf(cf.p("values"), "must be an array of [name, label, value] arrays; got %s", describe(vals))
		}
		type labelled struct {
			label string
			row   metricRow
		}
		catRows := make([]labelled, 0, len(va))
		for i, rv := range va {
			p := index(cf.p("values"), i)
			row, ok := rv.([]any)
			if !ok || len(row) != 3 {
				return nil, nil, "", errf(p, "must be a [name, label, value] array; got %s", describeRow(rv))
			}
			rname, ok := row[0].(string)
			if !ok {
				return nil, nil, "", errf(index(p, 0), "must be a string; got %s", describe(row[0]))
			}
			label, ok := row[1].(string)
			if !ok {
				return nil, nil, "", errf(index(p, 1), "must be a string; got %s", describe(row[1]))
			}
			num, ok := row[2].(jsonv.Number)
			if !ok {
				return nil, nil, "", errf(index(p, 2), "must be a number; got %s", describe(row[2]))
			}
			if cat != "time" && !num.IsInteger() {
				return nil, nil, "", errf(index(p, 2), "must be an integer; got %s", describe(num))
			}
			if !num.IsInteger() {
				if x, _ := strconv.ParseFloat(string(num), 64); math.IsInf(x, 0) {
					return nil, nil, "", errf(index(p, 2), "must be a finite number; got %s", describe(num))
				}
			}
			if cat == "time" && rname == "total" && total == nil {
				n := num
				total, totalPath = &n, index(p, 2)
			}
			catRows = append(catRows, labelled{label, metricRow{category: name, name: rname,
				value: jsonv.Number(rubyNumber(num))}})
		}
		sort.SliceStable(catRows, func(i, j int) bool { return catRows[i].label < catRows[j].label })
		for _, lr := range catRows {
			rows = append(rows, lr.row)
		}
	}
	return rows, total, totalPath, nil
}

func describeRow(v any) string {
	if a, ok := v.([]any); ok {
		return "an array of " + strconv.Itoa(len(a)) + " elements"
	}
	return describe(v)
}
