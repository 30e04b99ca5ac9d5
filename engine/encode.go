package engine

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"unsafe"

	"reportdb/internal/pgcompat"
	"reportdb/jsonv"
	"reportdb/query"
	"reportdb/query/sqlgen"
	"reportdb/store"
	"reportdb/wire"
)

// rowEncoder appends result rows as compact JSON objects.
type rowEncoder struct {
	cols   []sqlgen.OutCol
	keys   [][]byte // pre-encoded `"key":` prefixes
	width  int
	values []store.Value
	scan   store.Scanner
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
	enc.values = make([]store.Value, enc.width)
	return enc
}

// appendRow reads the current row of rows and appends it as one JSON
// object. The values are the row's own bytes where rows can lend them
// (store.ValueRows): appended before the next row, they are not copied
// out first.
func (enc *rowEncoder) appendRow(b []byte, rows store.Rows) ([]byte, error) {
	if err := enc.scan.Scan(rows, enc.values); err != nil {
		return nil, err
	}
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

// str is v's bytes as a string, without a copy (for appending).
func str(v []byte) string { return unsafe.String(unsafe.SliceData(v), len(v)) }

func appendValue(b []byte, c sqlgen.OutCol, v []store.Value) ([]byte, error) {
	x := &v[0]
	if c.Func == "avg" {
		return appendAvg(b, v[0], v[1])
	}
	if x.Kind == store.Null && c.Type != query.Blob {
		return append(b, "null"...), nil
	}
	switch c.Type {
	case query.String, query.NullString:
		if x.Kind == store.Text {
			return jsonv.AppendString(b, str(x.Bytes)), nil
		}
	case query.Number:
		switch x.Kind {
		case store.Int:
			return strconv.AppendInt(b, x.Int, 10), nil
		case store.Float:
			return append(b, jsonv.JavaDouble(x.Float)...), nil
		case store.Text:
			return append(b, x.Bytes...), nil
		}
	case query.Timestamp:
		if x.Kind == store.Int {
			b = append(b, '"')
			b = wire.AppendMillis(b, x.Int)
			return append(b, '"'), nil
		}
	case query.Boolean, query.NullBoolean:
		if x.Kind == store.Bool || x.Kind == store.Int {
			return strconv.AppendBool(b, x.Int != 0), nil
		}
	case query.Path:
		switch x.Kind {
		case store.Text:
			return append(b, x.Bytes...), nil
		case store.Strings:
			return jsonv.AppendStrings(b, x.Strings), nil
		}
	case query.JSONValue:
		if x.Kind == store.Text {
			return append(b, x.Bytes...), nil
		}
	case query.Blob:
		b = append(b, `{"data":`...)
		switch x.Kind {
		case store.Null:
			b = append(b, "null"...)
		case store.Text:
			b = append(b, x.Bytes...)
		default:
			return nil, fmt.Errorf("unexpected blob %s", describe(*x))
		}
		return append(appendHref(b, v[1], c.BlobSuffix), '}'), nil
	}
	return nil, fmt.Errorf("unexpected value %s for %v", describe(*x), c.Type)
}

// describe names a value of an unexpected kind for an error message.
func describe(v store.Value) string {
	switch v.Kind {
	case store.Int:
		return "integer"
	case store.Float:
		return "float"
	case store.Bool:
		return "boolean"
	case store.Text:
		return "text"
	case store.Strings:
		return "text array"
	case store.Other:
		return fmt.Sprintf("%T", v.Any)
	}
	return "null"
}

// appendAvg renders avg() as PostgreSQL's numeric does (full display
// scale, e.g. 34.2786885245901639) from the sum and count.
func appendAvg(b []byte, sum, count store.Value) ([]byte, error) {
	n := count.Int
	if count.Kind != store.Int || n == 0 || sum.Kind == store.Null {
		return append(b, "null"...), nil
	}
	s := new(big.Int)
	switch sum.Kind {
	case store.Int:
		return append(b, pgcompat.AvgText(s.SetInt64(sum.Int), n)...), nil
	case store.Float:
		s.SetInt64(int64(sum.Float))
	case store.Text:
		if _, ok := s.SetString(string(sum.Bytes), 10); !ok {
			return nil, fmt.Errorf("bad sum %q", sum.Bytes)
		}
	default:
		return nil, fmt.Errorf("bad sum %s", describe(sum))
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

// appendHref appends the end of a blob after its data: its href, for the
// report's hash h (a blob row's second value, or the hash alone of a
// page whose events are read apart).
func appendHref(b []byte, h store.Value, suffix string) []byte {
	b = append(b, `,"href":"/pdb/query/v4/reports/`...)
	if h.Kind == store.Text {
		b = append(b, h.Bytes...)
	}
	b = append(b, '/')
	b = append(b, suffix...)
	return append(b, '"')
}
