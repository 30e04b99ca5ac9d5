package ingest

import (
	"encoding/json"
	"math"
	"math/rand"
	"reflect"
	"testing"

	"reportdb"
)

// fill sets every field reachable from v to a random value, by
// reflection, so that a field added to reportdb.Report or reportdb.Event
// without its place in the record format makes the round trip differ.
// Pointers and slices are sometimes nil, slices sometimes empty.
func fill(rng *rand.Rand, v reflect.Value) {
	strs := []string{"", "a", "é✓😀", "with \"quotes\"\n", "\x00\xff not UTF-8"}
	switch v.Kind() {
	case reflect.String:
		v.SetString(strs[rng.Intn(len(strs))])
	case reflect.Int64:
		v.SetInt([]int64{0, 1, -1, math.MaxInt64, math.MinInt64, rng.Int63()}[rng.Intn(6)])
	case reflect.Bool:
		v.SetBool(rng.Intn(2) == 0)
	case reflect.Pointer:
		if rng.Intn(3) == 0 {
			v.SetZero()
			return
		}
		p := reflect.New(v.Type().Elem())
		fill(rng, p.Elem())
		v.Set(p)
	case reflect.Slice:
		switch rng.Intn(4) {
		case 0:
			v.SetZero()
			return
		case 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
			return
		}
		n := 1 + rng.Intn(4)
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := 0; i < n; i++ {
			fill(rng, s.Index(i))
		}
		v.Set(s)
	case reflect.Uint8:
		v.SetUint(uint64(rng.Intn(256)))
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			fill(rng, v.Field(i))
		}
	default:
		panic("fill: no values for " + v.Type().String())
	}
}

// TestRecordRoundTripsEveryField: a report with every field (and every
// event field) set at random, absent, empty or extreme comes back from
// its record unchanged, and its record is not JSON.
func TestRecordRoundTripsEveryField(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for i := 0; i < 500; i++ {
		r := new(reportdb.Report)
		fill(rng, reflect.ValueOf(r).Elem())
		b := encodeRecord(r)
		if b[0] == '{' {
			t.Fatal("the record reads as JSON")
		}
		got, err := decodeRecord(b)
		if err != nil {
			t.Fatalf("report %d: %v", i, err)
		}
		if !reflect.DeepEqual(got, r) {
			t.Fatalf("report %d changed through its record:\n got %+v\nwant %+v", i, got, r)
		}
	}
}

// TestRecordReadsJSON: records spooled by earlier versions (the report as
// JSON) are still read; a truncated record, a record with bytes after its
// last field and one of an unknown format are refused.
func TestRecordReadsJSON(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	for i := 0; i < 50; i++ {
		r := new(reportdb.Report)
		fill(rng, reflect.ValueOf(r).Elem())
		for j := range r.Events { // JSON keeps only valid UTF-8 text
			r.Events[j].ResourceTitle = "t"
		}
		old, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		want := new(reportdb.Report)
		if err := json.Unmarshal(old, want); err != nil {
			t.Fatal(err)
		}
		got, err := decodeRecord(old)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("JSON record %d: %v\n got %+v\nwant %+v", i, err, got, want)
		}
	}
	r := new(reportdb.Report)
	fill(rand.New(rand.NewSource(5)), reflect.ValueOf(r).Elem())
	b := encodeRecord(r)
	for _, bad := range [][]byte{b[:len(b)-1], append(append([]byte{}, b...), 0), {}, {'x'}, {recordTag}} {
		if _, err := decodeRecord(bad); err == nil {
			t.Errorf("record of %d bytes (%.8q) accepted", len(bad), bad)
		}
	}
}

// FuzzRecord: no input makes decodeRecord panic or allocate past its
// size, and what it accepts encodes back to a record that decodes alike.
func FuzzRecord(f *testing.F) {
	rng := rand.New(rand.NewSource(6))
	for i := 0; i < 8; i++ {
		r := new(reportdb.Report)
		fill(rng, reflect.ValueOf(r).Elem())
		f.Add(encodeRecord(r))
	}
	f.Add([]byte(`{"Hash":"x"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 0 && b[0] == '{' {
			return // encoding/json's business
		}
		r, err := decodeRecord(b)
		if err != nil {
			return
		}
		again, err := decodeRecord(encodeRecord(r))
		if err != nil || !reflect.DeepEqual(again, r) {
			t.Fatalf("re-encoded record differs: %v", err)
		}
	})
}
