package postgres

import (
	"context"
	"math"
	"reflect"
	"testing"

	"github.com/jackc/pgx/v5"

	"reportdb/internal/pgtest"
	"reportdb/store"
)

// TestRowsDecodeLikePgx: the values pgRows decodes itself are the values
// pgx's own Scan into *any gives (text[] as []string), for every type it
// decodes, NULLs, empty and NULL-holding arrays, and a shape it leaves to
// pgx; over the extended protocol (binary results, the decoders) and the
// simple protocol (text results: pgx for all but text).
func TestRowsDecodeLikePgx(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, pgtest.NewDatabase(t), Options{MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
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
