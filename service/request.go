package service

import (
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"reportdb"
	"reportdb/jsonv"
	"reportdb/query"
)

// Request is one root query with PuppetDB's paging parameters.
type Request struct {
	// Query is the JSON AST (["from", entity, ...]) or a PQL string. The
	// AST is taken as its JSON: nil, bool, string, numbers, []any,
	// []string, map[string]any, and jsonv's values (Number, *Object) as
	// they are; any other value through encoding/json.
	Query   any
	OrderBy []Order
	Limit   int // 0: none
	Offset  int
	Total   bool // include_total
	// ASTOnly asks for the AST of the query instead of its rows
	// (PuppetDB's ast_only).
	ASTOnly bool
}

// Order is one order_by entry.
type Order struct {
	Field string `json:"field"`
	Order string `json:"order,omitempty"` // "asc" (or "") or "desc"
}

// options validates req as the API validates the same parameters of a
// POSTed query body, with the same messages.
func (req Request) options() (*query.Options, error) {
	o := &query.Options{IncludeTotal: req.Total, ASTOnly: req.ASTOnly}
	switch q := req.Query.(type) {
	case nil:
	case string:
		o.QueryText, o.QuerySet = q, true
		if !query.RootQueryIsPQL(q) {
			v, ok, err := ParseQueryText(q)
			if err != nil {
				return nil, err
			}
			if ok {
				o.Query = v
			}
		}
	default:
		v, err := jsonValue(q)
		if err != nil {
			return nil, reportdb.Invalid(err.Error())
		}
		o.Query, o.QuerySet = v, true
	}
	if len(req.OrderBy) > 0 {
		o.OrderBy, o.OrderBySet = make([]query.OrderSpec, 0, len(req.OrderBy)), true
		for _, ob := range req.OrderBy {
			spec := query.OrderSpec{Field: ob.Field}
			switch strings.ToLower(ob.Order) {
			case "", "asc":
			case "desc":
				spec.Desc = true
			default:
				m := &jsonv.Object{Keys: []string{"field", "order"}, Values: []any{ob.Field, ob.Order}}
				return nil, reportdb.Errorf(reportdb.EINVALID, "Illegal value '%s' in :order_by; 'order' must be either 'asc' or 'desc'", jsonv.Clojure(m))
			}
			o.OrderBy = append(o.OrderBy, spec)
		}
	}
	if req.Limit > 0 {
		if req.Limit > math.MaxInt32 {
			return nil, reportdb.Errorf(reportdb.EINVALID, "Illegal value '%d' for :limit; it is too large (the largest limit is %d).", req.Limit, math.MaxInt32)
		}
		o.Limit, o.LimitSet = int64(req.Limit), true
	}
	if req.Offset > 0 {
		if req.Offset > math.MaxInt32 {
			return nil, reportdb.Errorf(reportdb.EINVALID, "Illegal value '%d' for :offset; it is too large (the largest offset is %d).", req.Offset, math.MaxInt32)
		}
		o.Offset, o.OffsetSet = int64(req.Offset), true
	}
	return o, nil
}

// ParseQueryText reads a query parameter's text as JSON: one value (ok),
// or nothing but white space (not ok, no error); more than one value is
// PuppetDB's error.
func ParseQueryText(s string) (v any, ok bool, err error) {
	v, rest, empty, err := jsonv.ParseFirst([]byte(s))
	if err != nil {
		return nil, false, jsonError(err)
	}
	if empty {
		return nil, false, nil
	}
	if len(rest) > 0 {
		next, _, _, err := jsonv.ParseFirst(rest)
		if err != nil {
			return nil, false, jsonError(err)
		}
		return nil, false, reportdb.Errorf(reportdb.EINVALID, "Only one query may be sent in a request. Found JSON (%s) after the query %s",
			jsonv.Clojure(next), jsonv.Clojure(v))
	}
	return v, true, nil
}

func jsonError(err error) error {
	if se, ok := err.(*jsonv.SyntaxError); ok {
		return reportdb.Invalid(se.PuppetDBMessage())
	}
	return reportdb.Invalid(err.Error())
}

// jsonValue is v as jsonv parses its JSON (nil, bool, string,
// jsonv.Number, []any, *jsonv.Object): the form the planner reads.
func jsonValue(v any) (any, error) {
	switch x := v.(type) {
	case nil, bool, jsonv.Number, *jsonv.Object:
		return x, nil
	case string:
		return validUTF8(x), nil
	case []any:
		out := make([]any, len(x))
		for i := range x {
			var err error
			if out[i], err = jsonValue(x[i]); err != nil {
				return nil, err
			}
		}
		return out, nil
	case []string:
		out := make([]any, len(x))
		for i, s := range x {
			out[i] = validUTF8(s)
		}
		return out, nil
	case map[string]any:
		o := &jsonv.Object{Keys: make([]string, 0, len(x)), Values: make([]any, 0, len(x))}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			e, err := jsonValue(x[k])
			if err != nil {
				return nil, err
			}
			o.Keys = append(o.Keys, validUTF8(k))
			o.Values = append(o.Values, e)
		}
		return o, nil
	case int:
		return jsonv.Number(strconv.Itoa(x)), nil
	case int64:
		return jsonv.Number(strconv.FormatInt(x, 10)), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return jsonv.Parse(b)
}

// validUTF8 is s as encoding/json writes it: each byte that is not
// UTF-8 becomes U+FFFD.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
