// Package jsonv is a small JSON toolkit tuned for PuppetDB compatibility.
//
// It parses JSON into a generic tree that keeps what encoding/json loses and
// PuppetDB's behaviour depends on: the order of object keys (error messages
// print maps in the order they were sent) and the literal text of numbers
// (stored values and metrics keep the submitted number text). It also writes
// JSON the way PuppetDB's serialisers do: Jackson's compact and pretty forms,
// PostgreSQL's json/jsonb text rendering, and Clojure's printed form of
// values that appears inside error messages.
//
// A parsed value is one of: nil, bool, Number, string, []any, *Object.
package jsonv

// Number is a JSON number kept as its literal source text.
type Number string

// Object is a JSON object whose members keep their source order.
// Duplicate keys are kept as sent; Get returns the last one, as most JSON
// readers do.
type Object struct {
	Keys   []string
	Values []any
}

// Get returns the value of key k.
func (o *Object) Get(k string) (any, bool) {
	if o == nil {
		return nil, false
	}
	for i := len(o.Keys) - 1; i >= 0; i-- {
		if o.Keys[i] == k {
			return o.Values[i], true
		}
	}
	return nil, false
}

// Has reports whether key k is present.
func (o *Object) Has(k string) bool {
	_, ok := o.Get(k)
	return ok
}

// Len is the number of members.
func (o *Object) Len() int {
	if o == nil {
		return 0
	}
	return len(o.Keys)
}

// Set appends or replaces member k.
func (o *Object) Set(k string, v any) {
	for i := range o.Keys {
		if o.Keys[i] == k {
			o.Values[i] = v
			return
		}
	}
	o.Keys = append(o.Keys, k)
	o.Values = append(o.Values, v)
}

// IsInteger reports whether the number literal has no fraction or exponent.
func (n Number) IsInteger() bool {
	for i := 0; i < len(n); i++ {
		switch n[i] {
		case '.', 'e', 'E':
			return false
		}
	}
	return len(n) > 0
}

// TypeName names the JSON type of a parsed value, for error messages.
func TypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case *Object:
		return "object"
	}
	return "unknown"
}
