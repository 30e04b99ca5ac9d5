package postgres

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"reportdb"
	"reportdb/internal/pgtest"
	"reportdb/store"
	"reportdb/wire"
)

// TestRowsDecodeLikePgx: the values pgRows decodes itself are the values
// pgx's own Scan into *any gives (text[] as []string), for every type it
// decodes, NULLs, empty and NULL-holding arrays, and a shape it leaves to
// pgx; over the extended protocol (binary results, the decoders) and the
// simple protocol (text results: pgx for all but text).
func TestRowsDecodeLikePgx(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	const q = `SELECT 'abc'::text, ''::text, NULL::text, 'é✓ "x"'::varchar, 9007199254740993::int8, (-1)::int8,
		(-2147483648)::int4, 7::int2, true, false, NULL::boolean, 1.5::float8, 'NaN'::float8, '-Infinity'::float8,
		ARRAY['a', NULL, 'c']::text[], '{}'::text[], NULL::text[], ARRAY[''::text], ARRAY[['a','b'],['c','d']]::text[],
		12.50::numeric, '{"a": 1}'::jsonb, NULL::int4 FROM generate_series(1, 3)`

	// what pgx gives for each column, scanned into *any
	want := func(mode pgx.QueryExecMode) [][]any {
		rows, err := db.pool.Query(ctx, q, mode)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out [][]any
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				if rows.FieldDescriptions()[i].DataTypeOID == pgTextArrayOID {
					if arr, ok := v.([]any); ok && len(arr) > 0 {
						ss := make([]string, len(arr))
						for j, x := range arr {
							ss[j], _ = x.(string)
						}
						vals[i] = ss
					} else if ok {
						vals[i] = []string{}
					}
				}
			}
			out = append(out, vals)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	got := func(mode pgx.QueryExecMode) [][]any {
		rows, err := db.pool.Query(ctx, q, mode)
		if err != nil {
			t.Fatal(err)
		}
		r := &pgRows{Rows: rows}
		defer r.Close()
		var out [][]any
		var s store.Rows = r
		for s.Next() {
			vals := make([]any, len(rows.FieldDescriptions()))
			dest := make([]any, len(vals))
			for i := range vals {
				dest[i] = &vals[i]
			}
			if err := s.Scan(dest...); err != nil {
				t.Fatal(err)
			}
			out = append(out, vals)
			// the decoders ran: every column of a decoded type went
			// around pgx (binary results: all of them; text results:
			// text and varchar), the others through it
			for i, f := range rows.FieldDescriptions() {
				decoded := f.DataTypeOID == pgTextOID || f.DataTypeOID == pgVarcharOID
				if f.Format == pgx.BinaryFormatCode {
					switch f.DataTypeOID {
					case pgInt8OID, pgInt4OID, pgInt2OID, pgBoolOID, pgFloat8OID, pgTextArrayOID:
						decoded = true
					}
				}
				if went := r.pass[i] == nil; went != decoded {
					t.Errorf("mode %v column %d (OID %d, format %d): decoded here %v, want %v",
						mode, i+1, f.DataTypeOID, f.Format, went, decoded)
				}
			}
		}
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeCacheDescribe,
		pgx.QueryExecModeSimpleProtocol} {
		w, g := want(mode), got(mode)
		if len(g) != 3 || len(w) != 3 {
			t.Fatalf("mode %v: %d and %d rows, want 3", mode, len(g), len(w))
		}
		for r := range w {
			for i := range w[r] {
				a, b := w[r][i], g[r][i]
				if fa, ok := a.(float64); ok && math.IsNaN(fa) {
					if fb, ok := b.(float64); !ok || !math.IsNaN(fb) {
						t.Errorf("mode %v column %d: got %#v, want NaN", mode, i+1, b)
					}
					continue
				}
				if !reflect.DeepEqual(a, b) {
					t.Errorf("mode %v column %d: got %#v (%T), pgx gives %#v (%T)", mode, i+1, b, b, a, a)
				}
			}
		}
	}
	// the decoders did run: binary results of these types have one
	fields := []uint32{pgTextOID, pgVarcharOID, pgInt8OID, pgInt4OID, pgInt2OID, pgBoolOID, pgFloat8OID, pgTextArrayOID}
	for _, oid := range fields {
		if decoderFor(oid, pgx.BinaryFormatCode) == nil {
			t.Errorf("no decoder for OID %d", oid)
		}
	}
}

// FuzzDecodeTextArray: malformed binary arrays give an error, never a panic.
func FuzzDecodeTextArray(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 25, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 1, 'a', 255, 255, 255, 255})
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 25})
	f.Fuzz(func(t *testing.T, raw []byte) {
		v, err := decodeTextArray(raw)
		if err == nil {
			if _, ok := v.([]string); !ok {
				t.Fatalf("decoded %T", v)
			}
		}
	})
}

// fakeRows is one row of one binary text[] column holding raw.
type fakeRows struct {
	raw    []byte
	next   bool
	closed bool
}

func (f *fakeRows) Close()                        { f.closed = true }
func (f *fakeRows) Err() error                    { return nil }
func (f *fakeRows) CommandTag() pgconn.CommandTag { return pgconn.CommandTag{} }
func (f *fakeRows) FieldDescriptions() []pgconn.FieldDescription {
	return []pgconn.FieldDescription{{Name: "path", DataTypeOID: pgTextArrayOID, Format: pgx.BinaryFormatCode}}
}
func (f *fakeRows) Next() bool {
	if f.closed || f.next {
		return false
	}
	f.next = true
	return true
}
func (f *fakeRows) Scan(...any) error      { return errors.New("pgx Scan called") }
func (f *fakeRows) Values() ([]any, error) { return nil, errors.New("not used") }
func (f *fakeRows) RawValues() [][]byte    { return [][]byte{f.raw} }
func (f *fakeRows) Conn() *pgx.Conn        { return nil }
func (f *fakeRows) TypeMap() *pgtype.Map   { return pgtype.NewMap() }

// TestRowsDecodeErrorEndsRows: a value the decoder rejects fails Scan, ends
// the rows and is what Err reports, as when pgx's own Scan fails.
func TestRowsDecodeErrorEndsRows(t *testing.T) {
	f := &fakeRows{raw: []byte{0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 25, 0, 0, 0, 9, 0, 0, 0, 1}} // 9 elements, none there
	r := &pgRows{Rows: f}
	if !r.Next() {
		t.Fatal("no row")
	}
	var v any
	err := r.Scan(&v)
	if err == nil || !strings.Contains(err.Error(), "malformed text[]") {
		t.Fatalf("Scan: %v, want the decoder's error", err)
	}
	if !f.closed || r.Next() {
		t.Error("rows not ended after the error")
	}
	if r.Err() != err {
		t.Errorf("Err() = %v, want %v", r.Err(), err)
	}
}

// openTestDB opens a fresh test database (two connections), closed when
// the test ends.
func openTestDB(t *testing.T) *DB {
	t.Helper()
	db, err := Open(context.Background(), pgtest.NewDatabase(t), Options{MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// eventRecordsBinary encodes events as PostgreSQL sends resourceEventsSQL's
// value in binary format (record_send inside array_send).
func eventRecordsBinary(events []reportdb.Event) []byte {
	be := binary.BigEndian
	field := func(b []byte, oid uint32, v []byte, null bool) []byte {
		b = be.AppendUint32(b, oid)
		if null {
			return be.AppendUint32(b, 0xffffffff)
		}
		b = be.AppendUint32(b, uint32(len(v)))
		return append(b, v...)
	}
	str := func(b []byte, s *string) []byte {
		if s == nil {
			return field(b, pgTextOID, nil, true)
		}
		return field(b, pgTextOID, []byte(*s), false)
	}
	out := be.AppendUint32(nil, 1)
	out = be.AppendUint32(out, 0)
	out = be.AppendUint32(out, pgRecordOID)
	out = be.AppendUint32(out, uint32(len(events)))
	out = be.AppendUint32(out, 1)
	for i := range events {
		e := &events[i]
		rec := be.AppendUint32(nil, uint32(len(eventRecordOIDs)))
		rec = str(rec, &e.Status)
		rec = field(rec, pgInt8OID, be.AppendUint64(nil, uint64(e.Timestamp)), false)
		rec = str(rec, &e.ResourceType)
		rec = str(rec, &e.ResourceTitle)
		rec = str(rec, e.Property)
		rec = str(rec, &e.NewValue)
		rec = str(rec, &e.OldValue)
		rec = str(rec, e.Message)
		rec = str(rec, e.File)
		if e.Line == nil {
			rec = field(rec, pgInt4OID, nil, true)
		} else {
			rec = field(rec, pgInt4OID, be.AppendUint32(nil, uint32(int32(*e.Line))), false)
		}
		if e.ContainmentPath == nil {
			rec = field(rec, pgTextArrayOID, nil, true)
		} else {
			arr := be.AppendUint32(nil, 1)
			arr = be.AppendUint32(arr, 0)
			arr = be.AppendUint32(arr, pgTextOID)
			arr = be.AppendUint32(arr, uint32(len(e.ContainmentPath)))
			arr = be.AppendUint32(arr, 1)
			for _, s := range e.ContainmentPath {
				arr = be.AppendUint32(arr, uint32(len(s)))
				arr = append(arr, s...)
			}
			rec = field(rec, pgTextArrayOID, arr, false)
		}
		rec = str(rec, e.ContainingClass)
		rec = str(rec, e.Name)
		out = be.AppendUint32(out, uint32(len(rec)))
		out = append(out, rec...)
	}
	return out
}

// TestDecodeEventRecords: the binary records decode to what the server
// renders from the same events; another record shape is left to pgx; cut
// or padded input is an error.
func TestDecodeEventRecords(t *testing.T) {
	s := func(v string) *string { return &v }
	line := int64(-7)
	events := []reportdb.Event{
		{Status: "success", Timestamp: 1767225600123, ResourceType: "File", ResourceTitle: "/etc/x",
			Property: s("ensure"), NewValue: `"file"`, OldValue: `{"b":[1.0,2],"a":null}`, Message: s("é \"q\""),
			File: s("/m.pp"), Line: &line, ContainmentPath: []string{"Stage[main]", "Main"}, ContainingClass: s("Main"), Name: s("n")},
		{Status: "failure", Timestamp: -1, ResourceType: "Exec", ResourceTitle: "", NewValue: "null", OldValue: "1e2",
			ContainmentPath: []string{}},
	}
	raw := eventRecordsBinary(events)
	v, err := decodeEventRecords(raw)
	if err != nil {
		t.Fatal(err)
	}
	if want := wire.RenderResourceEvents(events); string(v.([]byte)) != string(want) {
		t.Errorf("decoded\n %s\nwant\n %s", v, want)
	}
	for _, cut := range []int{len(raw) - 1, len(raw) - 5, 24, 19} {
		if _, err := decodeEventRecords(raw[:cut]); err == nil || errors.Is(err, errNotDecoded) {
			t.Errorf("cut to %d bytes: %v, want an error", cut, err)
		}
	}
	if _, err := decodeEventRecords(append(raw[:len(raw):len(raw)], 0)); err == nil {
		t.Error("a trailing byte: no error")
	}
	other := append([]byte(nil), raw...)
	binary.BigEndian.PutUint32(other[24:], 12) // the first record's field count
	if _, err := decodeEventRecords(other); !errors.Is(err, errNotDecoded) {
		t.Errorf("a record of 12 fields: %v, want errNotDecoded", err)
	}
	if v, err := decodeEventRecords(eventRecordsBinary(nil)); err != nil || v != nil {
		t.Errorf("an array of no records: %#v, %v; want nil (data null)", v, err)
	}
	if decoderFor(pgRecordArrayOID, pgx.BinaryFormatCode) == nil {
		t.Error("no decoder for record[] in binary")
	}
	if _, err := decoderFor(pgRecordArrayOID, pgx.TextFormatCode)([]byte("{}")); err == nil {
		t.Error("record[] in text format: no error")
	}
}

// FuzzDecodeEventRecords: malformed binary records give an error, never a
// panic. (What decodes is JSON when the stored values are: the values'
// text is rendered as it is stored, which ingest checked.)
func FuzzDecodeEventRecords(f *testing.F) {
	s := "x"
	f.Add(eventRecordsBinary([]reportdb.Event{{Status: "success", NewValue: `"a"`, OldValue: "null", Property: &s,
		ContainmentPath: []string{"A", "B"}}}))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x08, 0xc9})
	f.Fuzz(func(t *testing.T, raw []byte) {
		v, err := decodeEventRecords(raw)
		if err != nil {
			return
		}
		if _, ok := v.([]byte); !ok && v != nil {
			t.Fatalf("decoded %T", v)
		}
	})
}

// TestScanValues: ScanValues gives every value as store.ValueOf of what
// Scan gives (text and varchar as the row's bytes), and reads the types
// reportdb's statements return without allocating.
func TestScanValues(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	const q = `SELECT 'abc' || g::text, ''::text, NULL::text, 'é✓'::varchar, g::int8 << 40, (g * 7)::int4,
		g::int2, g % 2 = 0, g / 4.0::float8, ARRAY['a', NULL, 'b' || g::text]::text[], '{}'::text[],
		NULL::text[], 1.5::numeric, ARRAY[['x']]::text[]
		FROM generate_series(1, 3) g`
	const width = 14
	// copyValue copies what a Value borrows from the row
	copyValue := func(v store.Value) store.Value {
		v.Bytes = append([]byte(nil), v.Bytes...)
		v.Strings = append([]string(nil), v.Strings...)
		for i, s := range v.Strings {
			v.Strings[i] = strings.Clone(s)
		}
		return v
	}
	scan := func(values bool) [][]store.Value {
		rows, err := db.pool.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		r := &pgRows{Rows: rows}
		defer r.Close()
		var out [][]store.Value
		dst := make([]store.Value, width)
		for r.Next() {
			if values {
				err = r.ScanValues(dst)
			} else {
				vals := make([]any, width)
				dest := make([]any, width)
				for i := range vals {
					dest[i] = &vals[i]
				}
				err = r.Scan(dest...)
				for i, x := range vals {
					dst[i] = store.ValueOf(x)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			row := make([]store.Value, width)
			for i, v := range dst {
				row[i] = copyValue(v)
			}
			out = append(out, row)
		}
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	scanned, values := scan(false), scan(true)
	if len(scanned) != 3 || len(values) != 3 {
		t.Fatalf("%d and %d rows", len(scanned), len(values))
	}
	for r := range scanned {
		for i := range scanned[r] {
			if s, v := scanned[r][i], values[r][i]; !reflect.DeepEqual(s, v) {
				t.Errorf("row %d column %d: ScanValues %#v, Scan %#v", r, i+1, v, s)
			}
		}
	}
	if v := values[1][4]; v.Kind != store.Int || v.Int != 2<<40 {
		t.Errorf("int8: %#v", v)
	}
	if v := values[0][9]; v.Kind != store.Strings || !reflect.DeepEqual(v.Strings, []string{"a", "", "b1"}) {
		t.Errorf("text[]: %#v", v)
	}

	// a page of rows of the common types: nothing allocated per row
	rows, err := db.pool.Query(ctx, `SELECT 'title ' || g::text, g::int8 << 40, g::int4, g % 2 = 0,
		ARRAY['Stage[main]', 'Class[X' || g::text || ']']::text[], NULL::text FROM generate_series(1, 1000) g`)
	if err != nil {
		t.Fatal(err)
	}
	r := &pgRows{Rows: rows}
	defer r.Close()
	dst := make([]store.Value, 6)
	r.Next()
	if err := r.ScanValues(dst); err != nil { // the first row sizes dst's array
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(500, func() {
		if !r.Next() {
			t.Fatal("rows ended early")
		}
		if err := r.ScanValues(dst); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("ScanValues allocated %.1f times per row", allocs)
	}
}
