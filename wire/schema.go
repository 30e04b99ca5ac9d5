package wire

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"reportdb"
	"reportdb/jsonv"
)

// kind is the JSON type a v8 field must have.
type kind int

const (
	kString kind = iota
	kBool
	kInt
	kNumber
	kDatetime
	kStringArray
	kArray // array of objects, validated by the caller
	kAny
)

func (k kind) String() string {
	switch k {
	case kString:
		return "a string"
	case kBool:
		return "a boolean"
	case kInt:
		return "an integer"
	case kNumber:
		return "a number"
	case kDatetime:
		return "a date-time string (ISO 8601 with a zone, e.g. 2024-03-01T10:00:00.000Z)"
	case kStringArray:
		return "an array of strings"
	case kArray:
		return "an array"
	}
	return "any JSON value"
}

// field describes one key of a v8 object.
type field struct {
	name     string
	required bool
	nullable bool
	kind     kind
	maxBytes int // a string's longest length in bytes (0: any)
}

// Longest names stored. Names (a certname, an environment, a resource
// type, an event's property and name) and the configuration version are
// indexed, and an index entry has a size limit (PostgreSQL's btree: about
// 2.7 kB after compression, all of an entry's columns together), so a
// report holding a longer one could not be stored: it is refused at once
// with a 400 naming the field instead. The limits are far above any real
// value (a DNS name has at most 253 bytes, a Puppet type or property is
// an identifier, a configuration version a commit id or a timestamp).
// Resource titles, messages and values have no limit (titles are indexed
// by a bounded key: postgres migration 0014).
const (
	MaxNameBytes                 = 255
	MaxConfigurationVersionBytes = 1024
)

// invalid builds the 400 error for a schema violation at path.
func invalid(path, format string, args ...any) *reportdb.Error {
	msg := fmt.Sprintf(format, args...)
	if path != "" {
		msg = path + ": " + msg
	}
	return reportdb.Invalid("Invalid report: " + msg)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// checkObject verifies that v is an object holding only the given fields,
// all required ones present, each of the right type. It returns the object.
func checkObject(path string, v any, fields []field) (*jsonv.Object, error) {
	o, ok := v.(*jsonv.Object)
	if !ok {
		return nil, invalid(path, "must be a JSON object, got %s", jsonv.TypeName(v))
	}
	for i, k := range o.Keys {
		f := lookup(fields, k)
		if f == nil {
			return nil, invalid(join(path, k), "unknown key (not part of the v8 report format)")
		}
		if err := checkValue(path, k, o.Values[i], f); err != nil {
			return nil, err
		}
	}
	for i := range fields {
		if fields[i].required && !o.Has(fields[i].name) {
			return nil, invalid(join(path, fields[i].name), "missing required key")
		}
	}
	return o, nil
}

func lookup(fields []field, k string) *field {
	for i := range fields {
		if fields[i].name == k {
			return &fields[i]
		}
	}
	return nil
}

// checkValue checks member key of the object at parent; the path string
// is only built for an error.
func checkValue(parent, key string, v any, f *field) error {
	path := func() string { return join(parent, key) }
	if v == nil {
		if f.nullable {
			return nil
		}
		return invalid(path(), "must not be null (expected %s)", f.kind)
	}
	bad := func() error { return invalid(path(), "must be %s, got %s", f.kind, describe(v)) }
	switch f.kind {
	case kString:
		s, ok := v.(string)
		if !ok {
			return bad()
		}
		if strings.IndexByte(s, 0) >= 0 {
			return invalid(path(), "must not contain NUL characters")
		}
		if f.maxBytes > 0 && len(s) > f.maxBytes {
			return invalid(path(), "is %d bytes long, longer than the %d bytes stored for it", len(s), f.maxBytes)
		}
	case kBool:
		if _, ok := v.(bool); !ok {
			return bad()
		}
	case kInt:
		n, ok := v.(jsonv.Number)
		if !ok || !n.IsInteger() {
			return bad()
		}
		if _, err := strconv.ParseInt(string(n), 10, 32); err != nil {
			return invalid(path(), "integer out of range: %s", n)
		}
	case kNumber:
		n, ok := v.(jsonv.Number)
		if !ok {
			return bad()
		}
		if f, err := strconv.ParseFloat(string(n), 64); err != nil || math.IsInf(f, 0) {
			return invalid(path(), "number out of range: %s", n)
		}
	case kDatetime:
		s, ok := v.(string)
		if !ok {
			return bad()
		}
		if _, err := ParseDatetime(s); err != nil {
			return invalid(path(), "not a valid date-time: %s (expected ISO 8601 with Z or ±hh:mm, e.g. 2024-03-01T10:00:00.000Z)", jsonv.Compact(s))
		}
	case kStringArray:
		a, ok := v.([]any)
		if !ok {
			return bad()
		}
		for i, e := range a {
			s, ok := e.(string)
			if !ok {
				return invalid(index(path(), i), "must be a string, got %s", describe(e))
			}
			if strings.IndexByte(s, 0) >= 0 {
				return invalid(index(path(), i), "must not contain NUL characters")
			}
		}
	case kArray:
		if _, ok := v.([]any); !ok {
			return bad()
		}
	}
	return nil
}

func describe(v any) string {
	switch x := v.(type) {
	case string:
		if len(x) > 60 {
			x = x[:60] + "..."
		}
		return "the string " + jsonv.Compact(x)
	case jsonv.Number:
		return "the number " + string(x)
	case bool:
		return "the boolean " + strconv.FormatBool(x)
	}
	return jsonv.TypeName(v)
}
