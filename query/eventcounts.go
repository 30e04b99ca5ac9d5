package query

import (
	"math"
	"slices"
	"strings"

	"reportdb/jsonv"
)

// CountsPlan is a validated event-counts query (SPEC §15): events selected
// by Events, grouped by subject and counted by status.
type CountsPlan struct {
	Events      *Plan  // the events query (filter, distinct window)
	SummarizeBy string // certname, resource or containing_class
	CountBy     string // resource or certname
	Filter      *CountsFilter
	OrderBy     []CountsOrder
	Limit       int64
	Offset      int64
	// Corrective splits successes and noops by corrective_change (the
	// PuppetDB Enterprise counts).
	Corrective bool
	// ReportFilter is set when the counts can be read from the per-report
	// event counts stored with each report: summarised by certname, a
	// filter on report-level fields only (rewritten for the reports table,
	// nil for none), no distinct window, no corrective split.
	FromReports  bool
	ReportFilter Expr
}

// CountsFilter is a counts_filter comparison on one count.
type CountsFilter struct {
	Op    string
	Count string // a count column name
	Value any    // int64 or float64
}

// CountsOrder is an ORDER BY term over a count or a subject column.
type CountsOrder struct {
	Column string
	Desc   bool
}

// CountColumns are the count columns in output order.
func CountColumns(corrective bool) []string {
	if corrective {
		return []string{"failures", "skips", "intentional_successes", "corrective_successes", "intentional_noops", "corrective_noops"}
	}
	return []string{"failures", "skips", "successes", "noops"}
}

// SubjectColumns are the event columns a summary groups by.
func SubjectColumns(summarizeBy string) []string {
	switch summarizeBy {
	case "certname":
		return []string{"certname"}
	case "resource":
		return []string{"resource_type", "resource_title"}
	}
	return []string{"containing_class"}
}

func checkSummarize(v string) error {
	switch v {
	case "certname", "resource", "containing_class":
		return nil
	}
	return invalidf("Unsupported value for 'summarize_by': '%s'", v)
}

// CompileEventCounts validates an event-counts request in PuppetDB's order:
// summarize_by, order_by columns, counts_filter, count_by, then the query.
func CompileEventCounts(o *Options, corrective bool) (*CountsPlan, error) {
	if err := checkSize(o, o.Query, o.CountsFilter); err != nil {
		return nil, err
	}
	if err := checkSummarize(o.SummarizeBy); err != nil {
		return nil, err
	}
	p := &CountsPlan{SummarizeBy: o.SummarizeBy, CountBy: "resource", Corrective: corrective,
		Limit: o.Limit, Offset: o.Offset}
	counts := CountColumns(corrective)
	sortable := append(append([]string(nil), counts...), SubjectColumns(o.SummarizeBy)...)
	for _, s := range o.OrderBy {
		if !slices.Contains(sortable, s.Field) {
			return nil, invalidf("Unrecognized column '%s' specified in :order_by; Supported columns are '%s'", s.Field, strings.Join(sortable, "', '"))
		}
		p.OrderBy = append(p.OrderBy, CountsOrder{Column: s.Field, Desc: s.Desc})
	}
	var err error
	if p.Filter, err = compileCountsFilter(o.CountsFilter, counts); err != nil {
		return nil, err
	}
	if o.CountBy != "" {
		if o.CountBy != "resource" && o.CountBy != "certname" {
			return nil, invalidf("Unsupported value for 'count_by': '%s'", o.CountBy)
		}
		p.CountBy = o.CountBy
	}
	if p.Events, err = eventsFor(o); err != nil {
		return nil, err
	}
	if p.SummarizeBy == "certname" && !corrective && p.Events.Distinct == nil {
		if f, ok := ReportLevel(p.Events.Filter); ok {
			p.FromReports, p.ReportFilter = true, f
		}
	}
	return p, nil
}

// ReportLevel rewrites an events filter that only tests fields of the
// event's report (certname, environment, report, run times,
// latest_report?...) into the same filter on the reports table.
func ReportLevel(x Expr) (Expr, bool) {
	onReport := func(f *Field) bool { return f.Table == ReportsTable }
	switch x := x.(type) {
	case nil:
		return nil, true
	case Const:
		return x, true
	case And, Or:
		var args []Expr
		if a, ok := x.(And); ok {
			args = a.Args
		} else {
			args = x.(Or).Args
		}
		out := make([]Expr, len(args))
		for i, a := range args {
			y, ok := ReportLevel(a)
			if !ok {
				return nil, false
			}
			out[i] = y
		}
		if _, ok := x.(And); ok {
			return And{Args: out}, true
		}
		return Or{Args: out}, true
	case Not:
		y, ok := ReportLevel(x.X)
		return Not{X: y}, ok
	case Cmp:
		return x, onReport(x.Field)
	case Match:
		return x, onReport(x.Field)
	case IsNull:
		return x, onReport(x.Field)
	case InValues:
		return x, onReport(x.Field)
	case InQuery:
		for _, f := range x.Fields {
			if !onReport(f) {
				return nil, false
			}
		}
		return x, true
	case LatestReport:
		return LatestReport{Field: Reports.Field("latest_report?"), Latest: x.Latest}, true
	}
	return nil, false
}

// eventsFor compiles the events query of a counts request; a top-level
// extract is refused (PuppetDB fails on it with a database error).
func eventsFor(o *Options) (*Plan, error) {
	if arr, ok := o.Query.([]any); ok && len(arr) > 0 && arr[0] == "extract" {
		return nil, invalidf("The query of event counts is a filter on events; extract is not supported here")
	}
	q, err := distinctQuery(o)
	if err != nil {
		return nil, err
	}
	ev, err := compileTop(Events, q)
	if err != nil {
		return nil, err
	}
	setDistinct(ev, o)
	return ev, nil
}

func compileCountsFilter(v any, counts []string) (*CountsFilter, error) {
	if v == nil {
		return nil, nil
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, invalidf("counts_filter must be a JSON array such as [\">\", \"failures\", 0], got %s", clj(v))
	}
	if len(arr) == 0 {
		return nil, nil
	}
	op, _ := arr[0].(string)
	op = strings.ToLower(op)
	switch op {
	case "=", ">", "<", ">=", "<=":
	default:
		return nil, invalidf("%s is not well-formed: query operator '%s' is unknown", clj(v), fieldText(arr[0]))
	}
	if len(arr) != 3 {
		return nil, invalidf("%s requires exactly two arguments, but %d were supplied", op, len(arr)-1)
	}
	name, _ := arr[1].(string)
	if !slices.Contains(counts, name) {
		if op == "=" {
			return nil, invalidf("%s is not a queryable object for event counts", fieldText(arr[1]))
		}
		return nil, invalidf("%s operator does not support object '%s' for event counts", op, fieldText(arr[1]))
	}
	n, ok := arr[2].(jsonv.Number)
	if !ok {
		return nil, invalidf("counts_filter compares %s with a number, got %s", name, clj(arr[2]))
	}
	val, _ := numberValue(n)
	op, val = clampNumber(op, val, math.MinInt64, math.MaxInt64)
	return &CountsFilter{Op: op, Count: name, Value: val}, nil
}

// AggregatePlan is a validated aggregate-event-counts request: one counts
// plan per comma-separated summarize_by value, in the requested order.
type AggregatePlan struct {
	Pieces []*CountsPlan
}

// CompileAggregate validates an aggregate-event-counts request. Its query
// must suit PuppetDB's legacy events engine as well as the normal one.
func CompileAggregate(o *Options, corrective bool) (*AggregatePlan, error) {
	pieces := strings.Split(o.SummarizeBy, ",")
	for _, s := range pieces {
		if err := checkSummarize(s); err != nil {
			return nil, err
		}
	}
	if err := checkSize(o, o.Query, o.CountsFilter); err != nil {
		return nil, err
	}
	if err := CheckLegacy(o.Query); err != nil {
		return nil, err
	}
	ap := &AggregatePlan{}
	for _, s := range pieces {
		po := *o
		po.SummarizeBy = s
		po.OrderBy, po.Limit, po.Offset = nil, 0, 0
		cp, err := CompileEventCounts(&po, corrective)
		if err != nil {
			return nil, err
		}
		ap.Pieces = append(ap.Pieces, cp)
	}
	return ap, nil
}
