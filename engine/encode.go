package engine

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"

	"reportdb/jsonv"
	"reportdb/query"
	"reportdb/query/pgcompat"
	"reportdb/query/sqlgen"
	"reportdb/wire"
)

// rowEncoder appends result rows as compact JSON objects.
type rowEncoder struct {
	cols   []sqlgen.OutCol
	keys   [][]byte // pre-encoded `"key":` prefixes
	width  int
	dest   []any
	values []any
}

func newRowEncoder(cols []sqlgen.OutCol) *rowEncoder {
	enc := &rowEncoder{cols: cols}
	for i, c := range cols {
		var k []byte
		if i > 0 {
			k = append(k, ',')
		}
		k = jsonv.AppendString(k, c.Name)
		k = append(k, ':')
		enc.keys = append(enc.keys, k)
		enc.width += c.Width
	}
	enc.values = make([]any, enc.width)
	enc.dest = make([]any, enc.width)
	for i := range enc.values {
		enc.dest[i] = &enc.values[i]
	}
	return enc
}

// appendRow appends the current scanned values as one JSON object.
func (enc *rowEncoder) appendRow(b []byte) ([]byte, error) {
	b = append(b, '{')
	j := 0
	for i, c := range enc.cols {
		b = append(b, enc.keys[i]...)
		var err error
		b, err = appendValue(b, c, enc.values[j:j+c.Width])
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", c.Name, err)
		}
		j += c.Width
	}
	return append(b, '}'), nil
}

func appendValue(b []byte, c sqlgen.OutCol, v []any) ([]byte, error) {
	x := v[0]
	if c.Func == "avg" {
		return appendAvg(b, v[0], v[1])
	}
	if x == nil && c.Type != query.Blob {
		return append(b, "null"...), nil
	}
	switch c.Type {
	case query.String, query.NullString:
		switch s := x.(type) {
		case string:
			return jsonv.AppendString(b, s), nil
		case []byte:
			return jsonv.AppendString(b, string(s)), nil
		}
	case query.Number:
		if n, ok := asInt(x); ok {
			return strconv.AppendInt(b, n, 10), nil
		}
		switch n := x.(type) {
		case float64:
			return append(b, jsonv.JavaDouble(n)...), nil
		case string:
			return append(b, n...), nil
		case []byte:
			return append(b, n...), nil
		}
	case query.Timestamp:
		if ms, ok := asInt(x); ok {
			b = append(b, '"')
			b = wire.AppendMillis(b, ms)
			return append(b, '"'), nil
		}
	case query.Boolean, query.NullBoolean:
		switch t := x.(type) {
		case bool:
			return strconv.AppendBool(b, t), nil
		}
		if n, ok := asInt(x); ok {
			return strconv.AppendBool(b, n != 0), nil
		}
	case query.Path:
		switch p := x.(type) {
		case string:
			return append(b, p...), nil
		case []byte:
			return append(b, p...), nil
		case []string:
			return jsonv.AppendCompact(b, p), nil
		}
	case query.JSONValue:
		switch s := x.(type) {
		case string:
			return append(b, s...), nil
		case []byte:
			return append(b, s...), nil
		}
	case query.Blob:
		b = append(b, `{"data":`...)
		switch d := x.(type) {
		case nil:
			b = append(b, "null"...)
		case string:
			b = append(b, d...)
		case []byte:
			b = append(b, d...)
		default:
			return nil, fmt.Errorf("unexpected blob %T", x)
		}
		b = append(b, `,"href":"/pdb/query/v4/reports/`...)
		switch h := v[1].(type) {
		case string:
			b = append(b, h...)
		case []byte:
			b = append(b, h...)
		}
		b = append(b, '/')
		b = append(b, c.BlobSuffix...)
		return append(b, `"}`...), nil
	}
	return nil, fmt.Errorf("unexpected value %T for %v", x, c.Type)
}

// appendAvg renders avg() as PostgreSQL's numeric does (full display
// scale, e.g. 34.2786885245901639) from the sum and count.
func appendAvg(b []byte, sum, count any) ([]byte, error) {
	n, _ := asInt(count)
	if n == 0 || sum == nil {
		return append(b, "null"...), nil
	}
	s := new(big.Int)
	if v, ok := asInt(sum); ok {
		return append(b, pgcompat.AvgText(s.SetInt64(v), n)...), nil
	}
	switch x := sum.(type) {
	case float64:
		s.SetInt64(int64(x))
	case string:
		if _, ok := s.SetString(x, 10); !ok {
			return nil, fmt.Errorf("bad sum %q", x)
		}
	default:
		return nil, fmt.Errorf("bad sum %T", sum)
	}
	return append(b, pgcompat.AvgText(s, n)...), nil
}

// asInt reads the integer types database drivers return.
func asInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int32:
		return int64(x), true
	case int16:
		return int64(x), true
	case int:
		return int64(x), true
	case int8:
		return int64(x), true
	}
	return 0, false
}

// countValue renders a count as a JSON integer, whatever numeric type the
// driver returned (0 for NULL).
func countValue(v any) jsonv.Number {
	if n, ok := asInt(v); ok {
		return jsonv.Number(strconv.FormatInt(n, 10))
	}
	switch x := v.(type) {
	case float64:
		return jsonv.Number(strconv.FormatInt(int64(x), 10))
	case string:
		return jsonv.Number(x)
	case []byte:
		return jsonv.Number(x)
	}
	return "0"
}

// textValue reads a text column (nil for NULL).
func textValue(v any) any {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	}
	return nil
}

// explainJSON turns a JSON plan (text, or as decoded by the driver) into a
// jsonv value.
func explainJSON(v any) (any, bool) {
	var b []byte
	switch x := v.(type) {
	case string:
		b = []byte(x)
	case []byte:
		b = x
	case map[string]any, []any:
		var err error
		if b, err = json.Marshal(x); err != nil {
			return nil, false
		}
	default:
		return nil, false
	}
	j, err := jsonv.Parse(b)
	if err != nil {
		return nil, false
	}
	if _, ok := j.(string); ok {
		return nil, false
	}
	return j, true
}
