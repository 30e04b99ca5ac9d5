package ingest

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"reportdb"
	"reportdb/spool"
)

// A spooled report is stored as a record of its own binary format, not
// as JSON: with acknowledge spool every report goes through the spool,
// and decoding the JSON of spooled reports took 18 % of the server's CPU
// (encoding/json's reflection, base64 for the metrics and logs).
// The format is the report's fields in the order of reportdb.Report and
// reportdb.Event after a tag byte: strings and byte slices as a uvarint
// length and the bytes, integers as varints, and what may be absent
// (pointers, nil slices) behind a presence byte or a length one higher.
// Records spooled by earlier versions are JSON objects ('{'), still read.
const recordTag = 0xb1

// appendString appends s as a uvarint length and its bytes.
func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// appendOptString appends a *string: 0 for nil, 1 and the string.
func appendOptString(b []byte, s *string) []byte {
	if s == nil {
		return append(b, 0)
	}
	return appendString(append(b, 1), *s)
}

// appendOptBool appends a *bool: 0 nil, 1 false, 2 true.
func appendOptBool(b []byte, v *bool) []byte {
	switch {
	case v == nil:
		return append(b, 0)
	case *v:
		return append(b, 2)
	default:
		return append(b, 1)
	}
}

// appendBytes appends a byte slice: 0 for nil, else its length + 1 and
// the bytes.
func appendBytes(b, v []byte) []byte {
	if v == nil {
		return append(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(v))+1)
	return append(b, v...)
}

// SpooledSize is the number of bytes r takes in the spool.
func SpooledSize(r *reportdb.Report) int64 {
	return int64(len(encodeRecord(r))) + spool.RecordOverhead
}

// encodeRecord renders r as a spool record.
func encodeRecord(r *reportdb.Report) []byte {
	b := make([]byte, 0, 512+len(r.Metrics)+len(r.Logs)+200*len(r.Events))
	b = append(b, recordTag)
	b = appendString(b, r.Hash)
	b = appendString(b, r.Certname)
	b = appendString(b, r.PuppetVersion)
	b = binary.AppendVarint(b, r.ReportFormat)
	b = appendString(b, r.ConfigurationVersion)
	b = binary.AppendVarint(b, r.StartTime)
	b = binary.AppendVarint(b, r.EndTime)
	b = binary.AppendVarint(b, r.ProducerTimestamp)
	b = binary.AppendVarint(b, r.ReceiveTime)
	b = appendOptString(b, r.Producer)
	b = appendString(b, r.Environment)
	b = appendOptString(b, r.Status)
	b = appendOptBool(b, r.Noop)
	b = appendOptBool(b, r.NoopPending)
	b = appendOptString(b, r.TransactionUUID)
	b = appendOptString(b, r.CatalogUUID)
	b = appendOptString(b, r.CodeID)
	b = appendOptString(b, r.JobID)
	b = appendOptString(b, r.CachedCatalogStatus)
	b = appendString(b, r.Type)
	b = appendOptBool(b, r.CorrectiveChange)
	b = appendBytes(b, r.Metrics)
	b = appendBytes(b, r.Logs)
	if r.Events == nil {
		b = append(b, 0)
	} else {
		b = binary.AppendUvarint(b, uint64(len(r.Events))+1)
	}
	for i := range r.Events {
		e := &r.Events[i]
		b = appendString(b, e.Status)
		b = binary.AppendVarint(b, e.Timestamp)
		b = appendString(b, e.ResourceType)
		b = appendString(b, e.ResourceTitle)
		b = appendOptString(b, e.Property)
		b = appendString(b, e.NewValue)
		b = appendString(b, e.OldValue)
		b = appendOptString(b, e.Message)
		b = appendOptString(b, e.File)
		if e.Line == nil {
			b = append(b, 0)
		} else {
			b = binary.AppendVarint(append(b, 1), *e.Line)
		}
		if e.ContainmentPath == nil {
			b = append(b, 0)
		} else {
			b = binary.AppendUvarint(b, uint64(len(e.ContainmentPath))+1)
			for _, p := range e.ContainmentPath {
				b = appendString(b, p)
			}
		}
		b = appendOptString(b, e.ContainingClass)
		b = appendOptString(b, e.Name)
		b = appendOptBool(b, e.CorrectiveChange)
	}
	return b
}

var errRecord = errors.New("spool record: truncated or malformed")

// recordReader reads the fields of a record; the first problem sticks in
// err and every later read returns zero values.
type recordReader struct {
	b   []byte
	err error
}

func (d *recordReader) fail() {
	if d.err == nil {
		d.err = errRecord
	}
	d.b = nil
}

func (d *recordReader) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *recordReader) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *recordReader) byte() byte {
	if len(d.b) == 0 {
		d.fail()
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

// take returns the next n bytes (nil and a failure past the end).
func (d *recordReader) take(n uint64) []byte {
	if n > uint64(len(d.b)) {
		d.fail()
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *recordReader) string() string { return string(d.take(d.uvarint())) }

func (d *recordReader) optString() *string {
	switch d.byte() {
	case 0:
		return nil
	case 1:
		s := d.string()
		return &s
	}
	d.fail()
	return nil
}

func (d *recordReader) optBool() *bool {
	switch d.byte() {
	case 0:
		return nil
	case 1:
		v := false
		return &v
	case 2:
		v := true
		return &v
	}
	d.fail()
	return nil
}

func (d *recordReader) bytes() []byte {
	n := d.uvarint()
	if n == 0 {
		return nil
	}
	return append([]byte{}, d.take(n-1)...)
}

// count reads a length + 1 (0: nil), refusing more elements than the
// bytes left could hold (each takes at least min bytes).
func (d *recordReader) count(min int) (n int, isNil bool) {
	v := d.uvarint()
	if v == 0 {
		return 0, true
	}
	if v-1 > uint64(len(d.b)/min) {
		d.fail()
		return 0, false
	}
	return int(v - 1), false
}

// decodeRecord reads a spool record: the binary format of encodeRecord,
// or the JSON of earlier versions.
func decodeRecord(payload []byte) (*reportdb.Report, error) {
	r := new(reportdb.Report)
	if len(payload) > 0 && payload[0] == '{' {
		if err := json.Unmarshal(payload, r); err != nil {
			return nil, err
		}
		return r, nil
	}
	if len(payload) == 0 || payload[0] != recordTag {
		return nil, fmt.Errorf("spool record: unknown format")
	}
	d := &recordReader{b: payload[1:]}
	r.Hash = d.string()
	r.Certname = d.string()
	r.PuppetVersion = d.string()
	r.ReportFormat = d.varint()
	r.ConfigurationVersion = d.string()
	r.StartTime = d.varint()
	r.EndTime = d.varint()
	r.ProducerTimestamp = d.varint()
	r.ReceiveTime = d.varint()
	r.Producer = d.optString()
	r.Environment = d.string()
	r.Status = d.optString()
	r.Noop = d.optBool()
	r.NoopPending = d.optBool()
	r.TransactionUUID = d.optString()
	r.CatalogUUID = d.optString()
	r.CodeID = d.optString()
	r.JobID = d.optString()
	r.CachedCatalogStatus = d.optString()
	r.Type = d.string()
	r.CorrectiveChange = d.optBool()
	r.Metrics = d.bytes()
	r.Logs = d.bytes()
	// an event takes at least 14 bytes: a length or flag per field
	n, isNil := d.count(14)
	if !isNil {
		r.Events = make([]reportdb.Event, n)
	}
	for i := 0; i < n && d.err == nil; i++ {
		e := &r.Events[i]
		e.Status = d.string()
		e.Timestamp = d.varint()
		e.ResourceType = d.string()
		e.ResourceTitle = d.string()
		e.Property = d.optString()
		e.NewValue = d.string()
		e.OldValue = d.string()
		e.Message = d.optString()
		e.File = d.optString()
		switch d.byte() {
		case 0:
		case 1:
			l := d.varint()
			e.Line = &l
		default:
			d.fail()
		}
		if m, isNil := d.count(1); !isNil {
			e.ContainmentPath = make([]string, m)
			for j := range e.ContainmentPath {
				e.ContainmentPath[j] = d.string()
			}
		}
		e.ContainingClass = d.optString()
		e.Name = d.optString()
		e.CorrectiveChange = d.optBool()
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail()
	}
	if d.err != nil {
		return nil, d.err
	}
	return r, nil
}
