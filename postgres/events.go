package postgres

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"unsafe"

	"reportdb"
	"reportdb/schema"
	"reportdb/wire"
)

// resourceEventsSQL reads a report row's resource_events.data: the
// report's events as one array of records, in the order PostgreSQL reads
// them (PuppetDB's json_agg has no ORDER BY either: the report_id index
// gives a report's events in the order they were inserted), NULL for a
// report without events. decodeEventRecords renders it as PuppetDB's
// json_agg over row_to_json does (wire.RenderResourceEvents): building the
// JSON in PostgreSQL (row_to_json, timestamptz and jsonb casts of the
// values) was about half the statement's time for a page of 100 reports.
// The record's fields are eventRecordOIDs; its binary form is what the
// server reads (results are binary unless the database URL chose a text
// mode: then Dialect.TextResults renders jsonEventsSQL instead). Its
// fields are schema.EventColumns, which a page of reports that reads its
// events apart reads as columns (eventsByReportIDsSQL).
var resourceEventsSQL = `(SELECT array_agg(ROW(e.` + strings.Join(schema.EventColumns, ", e.") + `))
 FROM resource_events e WHERE e.report_id = r.id%s)`

// jsonEventsSQL builds the same resource_events.data as JSON text in
// PostgreSQL, for connections whose results are text (Dialect.TextResults):
// json_agg of row_to_json objects renders what wire.RenderResourceEvents
// does (", " between the objects, as PuppetDB; json_agg of the rows
// themselves would put ", \n " between them).
const jsonEventsSQL = `(SELECT json_agg(row_to_json(ev))::text FROM (SELECT e.status,
 (timestamptz 'epoch' + e.timestamp * interval '1 millisecond') AS timestamp,
 e.resource_type, e.resource_title, e.property, NULL::boolean AS corrective_change,
 e.new_value::jsonb AS new_value, e.old_value::jsonb AS old_value, e.message, e.file, e.line,
 e.containment_path, e.containing_class, e.name
 FROM resource_events e WHERE e.report_id = r.id%s) ev)`

// PostgreSQL type OIDs of records and arrays of them.
const (
	pgRecordOID      = 2249
	pgRecordArrayOID = 2287
)

// eventRecordOIDs are the types of resourceEventsSQL's record fields
// (schema.EventColumns).
var eventRecordOIDs = [...]uint32{
	pgTextOID,      // status
	pgInt8OID,      // timestamp (Unix ms)
	pgTextOID,      // resource_type
	pgTextOID,      // resource_title
	pgTextOID,      // property
	pgTextOID,      // new_value (JSON text)
	pgTextOID,      // old_value (JSON text)
	pgTextOID,      // message
	pgTextOID,      // file
	pgInt4OID,      // line
	pgTextArrayOID, // containment_path
	pgTextOID,      // containing_class
	pgTextOID,      // name
}

// decodeEventRecords decodes resourceEventsSQL's value in binary format
// (a one-dimensional array of records, arrayHeader and arrayElement; a
// record is its field count, then per field its type OID, length (-1 for
// NULL) and bytes) and returns the events rendered as PuppetDB renders a
// report's resource_events.data. An array of records of another shape is
// left to pgx (errNotDecoded); a malformed one is an error.
func decodeEventRecords(raw []byte) (any, error) {
	bad := func(err error) (any, error) {
		return nil, fmt.Errorf("malformed events array of %d bytes: %w", len(raw), err)
	}
	if len(raw) >= 12 && binary.BigEndian.Uint32(raw[8:]) != pgRecordOID {
		return nil, errNotDecoded
	}
	n, pos, err := arrayHeader(raw)
	switch {
	case errors.Is(err, errNotDecoded):
		return nil, err
	case err != nil:
		return bad(err)
	case n <= 0:
		return nil, nil // no events (array_agg gives NULL instead)
	}
	// each event is decoded into e, its text borrowed from raw (see
	// decodeEventRecord), and rendered at once into one buffer: no
	// string, slice or event is allocated per event
	out := make([]byte, 0, len(raw)+len(raw)/2+16)
	out = append(out, '[')
	var e reportdb.Event
	var opt [5]string
	var line int64
	var path []string
	for i := 0; i < n; i++ {
		var v []byte
		if v, pos, err = arrayElement(raw, pos); err != nil {
			return bad(err)
		}
		if v == nil {
			return bad(errors.New("NULL element"))
		}
		if err := decodeEventRecord(v, &e, &opt, &line, &path); err != nil {
			return nil, err
		}
		if i > 0 {
			out = append(out, ", "...)
		}
		out = wire.AppendResourceEvent(out, &e)
	}
	if pos != len(raw) {
		return bad(errors.New("trailing bytes"))
	}
	return append(out, ']'), nil
}

// decodeEventRecord decodes one record of eventRecordOIDs into e (reset
// first); errNotDecoded when the record has another shape. e's text is
// borrowed from rec (borrow), valid as long as rec is: the optional
// fields point into opt and line, the containment path is *path's storage.
func decodeEventRecord(rec []byte, e *reportdb.Event, opt *[5]string, line *int64, path *[]string) error {
	bad := func(what string) error {
		return fmt.Errorf("malformed event record (%s) of %d bytes", what, len(rec))
	}
	*e = reportdb.Event{}
	if len(rec) < 4 {
		return bad("header")
	}
	if binary.BigEndian.Uint32(rec) != uint32(len(eventRecordOIDs)) {
		return errNotDecoded
	}
	pos := 4
	for f, oid := range eventRecordOIDs {
		if len(rec)-pos < 8 {
			return bad("field")
		}
		if binary.BigEndian.Uint32(rec[pos:]) != oid {
			return errNotDecoded
		}
		l := int32(binary.BigEndian.Uint32(rec[pos+4:]))
		pos += 8
		if l < -1 || int(l) > len(rec)-pos {
			return bad("field")
		}
		if l == -1 {
			continue // NULL: the field's zero value (nil, or "" for NOT NULL columns)
		}
		v := rec[pos : pos+int(l)]
		pos += int(l)
		switch f {
		case 0:
			e.Status = borrow(v)
		case 1:
			if len(v) != 8 {
				return bad("timestamp")
			}
			e.Timestamp = int64(binary.BigEndian.Uint64(v))
		case 2:
			e.ResourceType = borrow(v)
		case 3:
			e.ResourceTitle = borrow(v)
		case 4:
			opt[0] = borrow(v)
			e.Property = &opt[0]
		case 5:
			e.NewValue = borrow(v)
		case 6:
			e.OldValue = borrow(v)
		case 7:
			opt[1] = borrow(v)
			e.Message = &opt[1]
		case 8:
			opt[2] = borrow(v)
			e.File = &opt[2]
		case 9:
			if len(v) != 4 {
				return bad("line")
			}
			*line = int64(int32(binary.BigEndian.Uint32(v)))
			e.Line = line
		case 10:
			p, err := appendTextArray(v, (*path)[:0], borrow)
			if err != nil {
				return err // errNotDecoded: a multi-dimensional path
			}
			*path = p
			e.ContainmentPath = p
		case 11:
			opt[3] = borrow(v)
			e.ContainingClass = &opt[3]
		case 12:
			opt[4] = borrow(v)
			e.Name = &opt[4]
		}
	}
	if pos != len(rec) {
		return bad("trailing bytes")
	}
	return nil
}

// borrow returns v's bytes as a string without copying them: the string
// is valid only while v is, and v must not change meanwhile (a value of
// the driver's row, rendered before the row moves on).
func borrow(v []byte) string { return unsafe.String(unsafe.SliceData(v), len(v)) }

// eventsByReportIDsSQL reads the events of a page of reports (see
// sqlgen.EventsApart) in the order resourceEventsSQL aggregates them: a
// report's events are in its day's partition, where the report_id index
// gives equal ids in the order of their rows (ctid), which is the order
// they were inserted in.
var eventsByReportIDsSQL = `SELECT e.report_id, e.` + strings.Join(schema.EventColumns, ", e.") +
	` FROM resource_events e WHERE e.report_id = ANY($1) AND e.report_id >= $2 AND e.report_id <= $3` +
	` ORDER BY e.report_id, e.ctid`

// EventsByReportIDs implements dialect.EventsByIDs. Connections whose
// results are text (TextResults) do not: the engine reads the events'
// values in their binary form.
func (d Dialect) EventsByReportIDs() string {
	if d.TextResults {
		return ""
	}
	return eventsByReportIDsSQL
}
