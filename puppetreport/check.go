package puppetreport

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"reportdb/jsonv"
)

// ValidationError rejects a native report. Path is a JSON path into the
// submitted document ("" for the report itself, e.g. `time`, `logs[2].level`,
// `resource_statuses["File[/x]"].events[0].status`); Msg says what is wrong.
type ValidationError struct {
	Path string
	Msg  string
}

// Error renders "<path>: <msg>", the path of the report itself being "report".
func (e *ValidationError) Error() string {
	p := e.Path
	if p == "" {
		p = "report"
	}
	return p + ": " + e.Msg
}

func errf(path, format string, args ...any) *ValidationError {
	return &ValidationError{Path: path, Msg: fmt.Sprintf(format, args...)}
}

func member(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

func quotedMember(path, key string) string {
	return path + "[" + string(jsonv.AppendString(nil, key)) + "]"
}

// describe renders a value briefly for a "got ..." clause.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(x)
	case jsonv.Number:
		return truncate(string(x))
	case string:
		return string(jsonv.AppendString(nil, truncate(x)))
	case []any:
		return "an array"
	case *jsonv.Object:
		return "an object"
	}
	return "an unsupported value"
}

func truncate(s string) string {
	const max = 80
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

func keySet(keys ...string) map[string]bool {
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// object checks that v is a JSON object without duplicate members and,
// when allowed is non-nil, without members outside allowed.
func object(path string, v any, allowed map[string]bool) (fields, error) {
	return objectAt(fieldPath{s: path}, v, allowed)
}

// fieldPath is a path, made into text only for an error: s, or, when
// quoted, member key of s (quotedMember).
type fieldPath struct {
	s, key string
	quoted bool
}

func (p fieldPath) String() string {
	if p.quoted {
		return quotedMember(p.s, p.key)
	}
	return p.s
}

// objectAt is object at a path made into text only for an error.
func objectAt(path fieldPath, v any, allowed map[string]bool) (fields, error) {
	o, ok := v.(*jsonv.Object)
	if !ok || o == nil {
		return fields{}, errf(path.String(), "must be an object; got %s", describe(v))
	}
	var seen map[string]bool // past a few members; before, a search
	for i, k := range o.Keys {
		dup := false
		switch {
		case i < 32:
			dup = slices.Contains(o.Keys[:i], k)
		case seen == nil:
			seen = make(map[string]bool, len(o.Keys))
			for _, e := range o.Keys[:i] {
				seen[e] = true
			}
			fallthrough
		default:
			dup = seen[k]
			seen[k] = true
		}
		if dup {
			return fields{}, errf(path.String(), "duplicate property %s", jsonv.AppendString(nil, k))
		}
		if allowed != nil && !allowed[k] {
			return fields{}, errf(path.String(), "unknown property %s", jsonv.AppendString(nil, k))
		}
	}
	return fields{path: path, o: o}, nil
}

// fields reads typed members of a checked object.
type fields struct {
	path fieldPath
	o    *jsonv.Object
}

func (f fields) p(k string) string { return member(f.path.String(), k) }

// value returns member k; present is false when it is absent.
func (f fields) value(k string) (v any, present bool) { return f.o.Get(k) }

// opt returns member k, or nil when absent or null.
func (f fields) opt(k string) any { v, _ := f.o.Get(k); return v }

func (f fields) required(k string) (any, error) {
	v, ok := f.o.Get(k)
	if !ok {
		return nil, errf(f.p(k), "missing required property")
	}
	return v, nil
}

func (f fields) reqString(k string) (string, error) {
	v, err := f.required(k)
	if err != nil {
		return "", err
	}
	s, ok := v.(string)
	if !ok {
		return "", errf(f.p(k), "must be a string; got %s", describe(v))
	}
	return s, nil
}

// nullableString returns member k as a string or nil (null or, unless
// required, absent).
func (f fields) nullableString(k string, required bool) (any, error) {
	v, present := f.value(k)
	if !present && required {
		return nil, errf(f.p(k), "missing required property")
	}
	switch v.(type) {
	case nil, string:
		return v, nil
	}
	return nil, errf(f.p(k), "must be a string or null; got %s", describe(v))
}

func (f fields) reqBool(k string) (bool, error) {
	v, err := f.required(k)
	if err != nil {
		return false, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, errf(f.p(k), "must be a boolean; got %s", describe(v))
	}
	return b, nil
}

// optBool returns member k as a bool or nil (absent or null).
func (f fields) optBool(k string) (any, error) {
	switch v := f.opt(k); v.(type) {
	case nil, bool:
		return v, nil
	default:
		return nil, errf(f.p(k), "must be a boolean or null; got %s", describe(v))
	}
}

func (f fields) reqInteger(k string) error {
	v, err := f.required(k)
	if err != nil {
		return err
	}
	if n, ok := v.(jsonv.Number); !ok || !n.IsInteger() {
		return errf(f.p(k), "must be an integer; got %s", describe(v))
	}
	return nil
}

func (f fields) optNumber(k string) error {
	switch v := f.opt(k); v.(type) {
	case nil, jsonv.Number:
		return nil
	default:
		return errf(f.p(k), "must be a number or null; got %s", describe(v))
	}
}

// enum returns member k, which must be one of values (or, unless
// required, absent/null -> nil).
func (f fields) enum(k string, required bool, values ...string) (any, error) {
	v, present := f.value(k)
	if required && !present {
		return nil, errf(f.p(k), "missing required property")
	}
	if v == nil && !required {
		return nil, nil
	}
	if s, ok := v.(string); ok {
		for _, e := range values {
			if s == e {
				return s, nil
			}
		}
	}
	return nil, errf(f.p(k), "must be one of %s; got %s", strings.Join(values, ", "), describe(v))
}

func (f fields) reqTime(k string) (rubyTime, error) {
	v, err := f.required(k)
	if err != nil {
		return rubyTime{}, err
	}
	return timeValue(f.p(k), v)
}

func timeValue(path string, v any) (rubyTime, error) {
	s, ok := v.(string)
	if !ok {
		return rubyTime{}, errf(path, "must be a string (%s); got %s", timeFormatHint[len("must be "):], describe(v))
	}
	t, err := parseTime(s)
	if err != nil {
		return rubyTime{}, errf(path, "%s; got %s", err, describe(v))
	}
	return t, nil
}

// stringArray returns member k, a required array of strings, as a copy.
func (f fields) stringArray(k string) ([]any, error) {
	a, err := f.checkStringArray(k)
	if err != nil {
		return nil, err
	}
	return copyArray(a), nil
}

// copyArray is a copy of a (never nil).
func copyArray(a []any) []any {
	out := make([]any, len(a))
	copy(out, a)
	return out
}

// checkStringArray checks that member k is an array of strings and
// returns it (not a copy).
func (f fields) checkStringArray(k string) ([]any, error) {
	v, err := f.required(k)
	if err != nil {
		return nil, err
	}
	a, ok := v.([]any)
	if !ok {
		return nil, errf(f.p(k), "must be an array of strings; got %s", describe(v))
	}
	for i, e := range a {
		if _, ok := e.(string); !ok {
			return nil, errf(index(f.p(k), i), "must be a string; got %s", describe(e))
		}
	}
	return a, nil
}

// line returns a source line (integer, numeric string or null/absent) as
// a JSON integer or nil.
func (f fields) line(k string) (any, error) {
	v := f.opt(k)
	var lit string
	switch x := v.(type) {
	case nil:
		return nil, nil
	case jsonv.Number:
		if !x.IsInteger() {
			return nil, errf(f.p(k), "must be an integer, a string of digits or null; got %s", describe(v))
		}
		lit = string(x)
	case string:
		lit = x
	default:
		return nil, errf(f.p(k), "must be an integer, a string of digits or null; got %s", describe(v))
	}
	n, err := strconv.ParseInt(lit, 10, 32)
	if err != nil || (len(lit) > 0 && lit[0] == '+') {
		return nil, errf(f.p(k), "must be an integer between -2147483648 and 2147483647, a string of such digits or null; got %s", describe(v))
	}
	if _, isNumber := v.(jsonv.Number); isNumber && canonicalDecimal(lit) {
		return v, nil // what FormatInt would write
	}
	return jsonv.Number(strconv.FormatInt(n, 10)), nil
}

// canonicalDecimal reports whether lit, which strconv.ParseInt reads in
// base 10, is written as strconv.FormatInt writes its value: no plus
// sign, no leading zero, no minus zero.
func canonicalDecimal(lit string) bool {
	d := strings.TrimPrefix(lit, "-")
	return d != "" && lit[0] != '+' && (d[0] != '0' || lit == "0")
}
