package httpapi

import (
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"reportdb"
	"reportdb/jsonv"
	"reportdb/query"
	"reportdb/service"
)

// param is one request parameter: from a URL query string (Str set) or a
// POST body member (JSON set, IsJSON true).
type param struct {
	Name   string
	Str    string
	JSON   any
	IsJSON bool
}

// parseQueryString splits a raw URL query string into parameters in their
// order, decoding %XX and '+' like a form. A parameter given twice is an
// error (PuppetDB answers 500 with a ClassCastException there).
func parseQueryString(raw string) ([]param, error) {
	var out []param
	seen := map[string]bool{}
	for raw != "" {
		var kv string
		kv, raw, _ = strings.Cut(raw, "&")
		if kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		key, err := url.QueryUnescape(k)
		if err != nil {
			return nil, reportdb.Errorf(reportdb.EINVALID, "Malformed query string: %v", err)
		}
		val, err := url.QueryUnescape(v)
		if err != nil {
			return nil, reportdb.Errorf(reportdb.EINVALID, "Malformed query string: %v", err)
		}
		if seen[key] {
			return nil, reportdb.Errorf(reportdb.EINVALID, "Parameter '%s' may only be given once", key)
		}
		seen[key] = true
		out = append(out, param{Name: key, Str: val})
	}
	return out, nil
}

// parseBody turns a POST body (a JSON object, or null) into parameters.
func parseBody(body []byte) ([]param, error) {
	v, _, empty, err := jsonv.ParseFirst(body)
	if err != nil {
		return nil, jsonError(err)
	}
	if empty || v == nil {
		return nil, nil
	}
	o, ok := v.(*jsonv.Object)
	if !ok {
		return nil, reportdb.Errorf(reportdb.EINVALID, "The POST body must be a JSON object of query parameters, got %s", jsonv.TypeName(v))
	}
	out := make([]param, 0, len(o.Keys))
	for i, k := range o.Keys {
		out = append(out, param{Name: k, JSON: o.Values[i], IsJSON: true})
	}
	return out, nil
}

func jsonError(err error) error {
	if se, ok := err.(*jsonv.SyntaxError); ok {
		return reportdb.Invalid(se.PuppetDBMessage())
	}
	return reportdb.Invalid(err.Error())
}

// Kind names an endpoint's parameter set (SPEC §9.1).
type Kind int

// Endpoint kinds.
const (
	KindEvents Kind = iota
	KindEntity      // reports, environments, nodes
	KindEventCounts
	KindAggregate
	KindSingle // /environments/<e>, /producers/<p>, /reports/<h>/metrics|logs
	KindNode   // /nodes/<n>: KindSingle's names, read as a query's (timeout)
	KindRoot
)

// globalParams are accepted by every query endpoint. timeout is PuppetDB
// 8's (PDB-4937; OpenVoxDB src/puppetlabs/puppetdb/http/handlers.clj,
// global-params).
var globalParams = []string{"optimize_drop_unused_joins", "include_facts_expiration",
	"include_package_inventory", "explain", "origin", "timeout"}
var pagingParams = []string{"query", "limit", "offset", "order_by", "include_total"}
var distinctParams = []string{"distinct_resources", "distinct_start_time", "distinct_end_time"}

func allowed(k Kind) (names []string, required string) {
	names = append(names, globalParams...)
	switch k {
	case KindEvents:
		names = append(append(append(names, pagingParams...), "pretty"), distinctParams...)
	case KindEntity:
		names = append(append(names, pagingParams...), "pretty")
	case KindEventCounts:
		names = append(append(append(names, pagingParams...), "pretty", "summarize_by", "counts_filter", "count_by"), distinctParams...)
		required = "summarize_by"
	case KindAggregate:
		names = append(append(names, "query", "summarize_by", "counts_filter", "count_by"), distinctParams...)
		required = "summarize_by"
	case KindSingle, KindNode:
		names = append(names, "pretty")
	case KindRoot:
		names = append(append(names, pagingParams...), "pretty", "ast_only")
		required = "query"
	}
	return names, required
}

// parseOptions validates the parameters of an endpoint of kind k in
// PuppetDB's order (SPEC §9.4): JSON parsing of query/order_by/
// counts_filter, missing then unknown parameters, order_by structure, limit,
// offset, explain, timeout, the distinct_* combination. Endpoint-specific checks
// (summarize_by values, order_by columns, the query itself) come later.
func parseOptions(k Kind, params []param) (*query.Options, error) {
	o := &query.Options{}
	get := map[string]*param{}
	for i := range params {
		get[params[i].Name] = &params[i]
	}
	// 1. JSON values
	if p := get["query"]; p != nil {
		if err := parseQueryParam(o, k, p); err != nil {
			return nil, err
		}
	}
	var orderRaw any
	var orderErr error
	if p := get["order_by"]; p != nil {
		orderRaw, orderErr = parseOrderByJSON(p)
	}
	if p := get["counts_filter"]; p != nil {
		if p.IsJSON {
			o.CountsFilter = p.JSON
		} else if strings.TrimSpace(p.Str) != "" {
			v, err := jsonv.Parse([]byte(p.Str))
			if err != nil {
				if se, ok := err.(*jsonv.SyntaxError); ok {
					return nil, reportdb.Invalid("counts_filter is not valid JSON: " + se.PuppetDBMessage())
				}
				return nil, reportdb.Invalid("counts_filter is not valid JSON: " + err.Error())
			}
			o.CountsFilter = v
		}
	}
	// 2. missing, then unknown parameters
	names, required := allowed(k)
	if required != "" && get[required] == nil {
		return nil, reportdb.Errorf(reportdb.EINVALID, "Missing required query parameter '%s'", required)
	}
	for _, p := range params {
		if !slices.Contains(names, p.Name) {
			return nil, reportdb.Errorf(reportdb.EINVALID, "Unsupported query parameter '%s'", p.Name)
		}
	}
	// 3. order_by, limit, offset, explain
	if p := get["order_by"]; p != nil {
		if orderErr != nil {
			return nil, orderErr
		}
		specs, err := validateOrderBy(orderRaw)
		if err != nil {
			return nil, err
		}
		o.OrderBy, o.OrderBySet = specs, true
	}
	if p := get["limit"]; p != nil {
		n, ok := intParam(p)
		if !ok && overflowsInt32(paramText(p)) {
			return nil, reportdb.Errorf(reportdb.EINVALID, "Illegal value '%s' for :limit; it is too large (the largest limit is %d).", paramText(p), math.MaxInt32)
		}
		if !ok || n < 1 {
			return nil, reportdb.Errorf(reportdb.EINVALID, "Illegal value '%s' for :limit; expected a positive non-zero integer.", paramText(p))
		}
		o.Limit, o.LimitSet = n, true
	}
	if p := get["offset"]; p != nil {
		n, ok := intParam(p)
		if !ok && overflowsInt32(paramText(p)) {
			return nil, reportdb.Errorf(reportdb.EINVALID, "Illegal value '%s' for :offset; it is too large (the largest offset is %d).", paramText(p), math.MaxInt32)
		}
		if !ok || n < 0 {
			return nil, reportdb.Errorf(reportdb.EINVALID, "Illegal value '%s' for :offset; expected a non-negative integer.", paramText(p))
		}
		o.Offset, o.OffsetSet = n, true
	}
	if p := get["explain"]; p != nil {
		if paramText(p) != "analyze" {
			return nil, reportdb.Errorf(reportdb.EINVALID, "Illegal value '%s' for :explain; expected `analyze`.", paramText(p))
		}
		o.Explain = true
	}
	if p := get["timeout"]; p != nil {
		d, err := parseTimeout(p)
		// PuppetDB checks only the names of the parameters of
		// /environments/<e>, /producers/<p> and a report's metrics and
		// logs (validate-query-params): there a value it cannot read is
		// ignored
		if err != nil && k != KindSingle {
			return nil, err
		}
		o.Timeout = d
	}
	o.IncludeTotal = boolParam(get["include_total"])
	o.Pretty = boolParam(get["pretty"])
	o.ASTOnly = boolParam(get["ast_only"])
	// 4. distinct_*
	if err := parseDistinct(o, get); err != nil {
		return nil, err
	}
	if p := get["summarize_by"]; p != nil {
		o.SummarizeBy = paramText(p)
	}
	if p := get["count_by"]; p != nil {
		o.CountBy = paramText(p)
	}
	return o, nil
}

func parseQueryParam(o *query.Options, k Kind, p *param) error {
	if p.IsJSON {
		switch v := p.JSON.(type) {
		case nil:
			return nil
		case string:
			if k == KindRoot {
				o.QueryText, o.QuerySet = v, true
				if query.RootQueryIsPQL(v) {
					return nil
				}
			}
			return parseQueryText(o, v)
		default:
			o.Query, o.QuerySet = v, true
			return nil
		}
	}
	if k == KindRoot {
		o.QueryText, o.QuerySet = p.Str, true
		if query.RootQueryIsPQL(p.Str) {
			return nil
		}
	}
	return parseQueryText(o, p.Str)
}

func parseQueryText(o *query.Options, s string) error {
	v, ok, err := service.ParseQueryText(s)
	if ok {
		o.Query, o.QuerySet = v, true
	}
	return err
}

func paramText(p *param) string {
	if !p.IsJSON {
		return p.Str
	}
	if s, ok := p.JSON.(string); ok {
		return s
	}
	return jsonv.Compact(p.JSON)
}

// intParam parses limit/offset like Java's Integer.parseInt (optional sign,
// digits only, 32-bit), or a JSON integer / numeric string in a POST body.
func intParam(p *param) (int64, bool) {
	s := ""
	if p.IsJSON {
		switch v := p.JSON.(type) {
		case jsonv.Number:
			if !v.IsInteger() {
				return 0, false
			}
			s = string(v)
		case string:
			s = v
		default:
			return 0, false
		}
	} else {
		s = p.Str
	}
	digits := strings.TrimLeft(s, "+-")
	if len(s)-len(digits) > 1 || digits == "" {
		return 0, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, false
	}
	return n, true
}

// overflowsInt32 tells a positive whole number too large for the paging
// parameters (PuppetDB reads them as Java ints) from text that is not a
// number at all.
func overflowsInt32(s string) bool {
	digits := strings.TrimPrefix(s, "+")
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return false
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	return err != nil || n > math.MaxInt32
}

func boolParam(p *param) bool {
	if p == nil {
		return false
	}
	if p.IsJSON {
		switch v := p.JSON.(type) {
		case bool:
			return v
		case string:
			return strings.EqualFold(v, "true")
		}
		return false
	}
	return strings.EqualFold(p.Str, "true")
}

func parseOrderByJSON(p *param) (any, error) {
	if p.IsJSON {
		if s, ok := p.JSON.(string); ok {
			return nil, reportdb.Errorf(reportdb.EINVALID, "Illegal value '%s' for :order_by; expected an array of maps.", s)
		}
		return p.JSON, nil
	}
	v, _, empty, err := jsonv.ParseFirst([]byte(p.Str))
	if err != nil || empty {
		return nil, reportdb.Errorf(reportdb.EINVALID, "Illegal value '%s' for :order_by; expected a JSON array of maps.", p.Str)
	}
	return v, nil
}

func validateOrderBy(v any) ([]query.OrderSpec, error) {
	if v == nil {
		return nil, nil
	}
	arr, ok := v.([]any)
	notMaps := reportdb.Errorf(reportdb.EINVALID, "Illegal value '%s' for :order_by; expected an array of maps.", jsonv.Clojure(v))
	if !ok {
		return nil, notMaps
	}
	for _, e := range arr {
		if _, ok := e.(*jsonv.Object); !ok {
			return nil, notMaps
		}
	}
	specs := make([]query.OrderSpec, 0, len(arr))
	for _, e := range arr {
		m := e.(*jsonv.Object)
		for _, k := range m.Keys {
			if k != "field" && k != "order" {
				return nil, reportdb.Errorf(reportdb.EINVALID, "Illegal value '%s' in :order_by; unknown key '%s'.", jsonv.Clojure(m), k)
			}
		}
		fv, ok := m.Get("field")
		if !ok {
			return nil, reportdb.Errorf(reportdb.EINVALID, "Illegal value '%s' in :order_by; missing required key field.", jsonv.Clojure(m))
		}
		field, ok := fv.(string)
		if !ok {
			return nil, reportdb.Errorf(reportdb.EINVALID, "Illegal value '%s' in :order_by; 'field' must be a string.", jsonv.Clojure(m))
		}
		spec := query.OrderSpec{Field: field}
		if ov, ok := m.Get("order"); ok && ov != nil {
			os, _ := ov.(string)
			switch strings.ToLower(os) {
			case "asc":
			case "desc":
				spec.Desc = true
			default:
				return nil, reportdb.Errorf(reportdb.EINVALID, "Illegal value '%s' in :order_by; 'order' must be either 'asc' or 'desc'", jsonv.Clojure(m))
			}
		}
		specs = append(specs, spec)
	}
	return specs, nil
}

func parseDistinct(o *query.Options, get map[string]*param) error {
	dr, ds, de := get["distinct_resources"], get["distinct_start_time"], get["distinct_end_time"]
	if dr == nil && ds == nil && de == nil {
		return nil
	}
	if dr != nil && (ds == nil || de == nil) {
		return reportdb.Invalid("'distinct_resources' query parameter requires accompanying parameters 'distinct_start_time' and 'distinct_end_time'")
	}
	if dr == nil {
		return reportdb.Invalid("'distinct_resources' query parameter must accompany parameters 'distinct_start_time' and 'distinct_end_time'")
	}
	start, ok1 := parseTimeParam(ds)
	end, ok2 := parseTimeParam(de)
	if !ok1 || !ok2 {
		return reportdb.Errorf(reportdb.EINVALID, "query parameters 'distinct_start_time' and 'distinct_end_time' must be valid datetime strings: %s %s", paramText(ds), paramText(de))
	}
	if boolParam(dr) {
		o.Distinct = &query.DistinctWindow{Start: start, End: end}
	}
	return nil
}

func parseTimeParam(p *param) (int64, bool) {
	if p.IsJSON {
		if n, ok := p.JSON.(jsonv.Number); ok {
			return query.NumberMillis(n)
		}
	}
	return query.ParseTimestampValue(paramText(p))
}
