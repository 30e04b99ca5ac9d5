package importer

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"reportdb/jsonv"
	"reportdb/puppetreport"
	"reportdb/wire"
)

// unit is one report found in a file: a wire payload of a command version,
// or the reason it cannot be one.
type unit struct {
	name    string
	version int
	payload *jsonv.Object
	err     error
}

// placeholderTimestamp is given to puppetreport.Convert, whose output
// producer_timestamp is then replaced (see puppetUnit).
const placeholderTimestamp = "1970-01-01T00:00:00.000Z"

// parseYAML parses Puppet's YAML report dump into the jsonv tree of its
// JSON form.
var parseYAML = puppetreport.ParseYAML

var gzipMagic = []byte{0x1f, 0x8b}

// isTarHeader recognises a POSIX/GNU tar header block ("ustar" magic).
func isTarHeader(b []byte) bool {
	return len(b) >= 263 && bytes.Equal(b[257:262], []byte("ustar"))
}

// detect finds the reports in a file's content: Puppet report JSON or YAML,
// a wire payload, a command envelope, or JSON lines of any of these.
// version, when not 0, is the wire version of bare payloads (an archive's
// metadata says it).
func detect(name string, data []byte, version int, producer *string) []unit {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 {
		return []unit{{name: name, err: reject("empty file")}}
	}
	switch trimmed[0] {
	case '{':
		v, err := jsonv.Parse(trimmed)
		if err == nil {
			return []unit{classify(name, v, version, producer)}
		}
		if units, ok := jsonLines(name, trimmed, version, producer); ok {
			return units
		}
		return []unit{{name: name, err: reject("not valid JSON: %v", err)}}
	case '[':
		if _, err := jsonv.Parse(trimmed); err != nil {
			return []unit{{name: name, err: reject("not valid JSON: %v", err)}}
		}
		return []unit{{name: name, err: reject("not a report: a JSON array (one report per file, or JSON lines, expected)")}}
	}
	if looksLikeYAML(name, trimmed) {
		return []unit{yamlUnit(name, data, producer)}
	}
	return []unit{{name: name, err: reject("not a report: neither JSON nor a Puppet YAML report")}}
}

// looksLikeYAML: Puppet's YAML reports start with a document marker and the
// Ruby object tag; a .yaml/.yml name is enough otherwise.
func looksLikeYAML(name string, b []byte) bool {
	head := b
	if len(head) > 512 {
		head = head[:512]
	}
	if bytes.HasPrefix(head, []byte("---")) || bytes.Contains(head, []byte("!ruby/object:Puppet::Transaction::Report")) {
		return true
	}
	n := strings.ToLower(strings.TrimSuffix(name, ".gz"))
	return strings.HasSuffix(n, ".yaml") || strings.HasSuffix(n, ".yml")
}

func yamlUnit(name string, data []byte, producer *string) unit {
	v, err := parseYAML(data)
	if err != nil {
		return unit{name: name, err: reject("Invalid Puppet YAML report: %v", err)}
	}
	if _, ok := v.(*jsonv.Object); !ok {
		return unit{name: name, err: reject("not a report: the YAML document is a %s, not a Puppet::Transaction::Report", jsonv.TypeName(v))}
	}
	return puppetUnit(name, v, producer)
}

// jsonLines reads newline-delimited JSON (fleet.py's .jsonl: one report per
// line). ok is false unless the first line alone is a JSON object, so that
// a plain broken JSON file gets its own JSON error.
func jsonLines(name string, data []byte, version int, producer *string) ([]unit, bool) {
	lines := bytes.Split(data, []byte{'\n'})
	if len(lines) < 2 {
		return nil, false
	}
	if v, err := jsonv.Parse(lines[0]); err != nil {
		return nil, false
	} else if _, ok := v.(*jsonv.Object); !ok {
		return nil, false
	}
	var units []unit
	for i, l := range lines {
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		units = append(units, lineUnit(name+":"+strconv.Itoa(i+1), l, version, producer))
	}
	return units, true
}

// lineUnit is the unit of one line of a JSON-lines file.
func lineUnit(name string, line []byte, version int, producer *string) unit {
	v, err := jsonv.Parse(line)
	if err != nil {
		return unit{name: name, err: reject("not valid JSON: %v", err)}
	}
	return classify(name, v, version, producer)
}

// classify turns one parsed JSON document into a unit.
func classify(name string, v any, version int, producer *string) unit {
	o, ok := v.(*jsonv.Object)
	if !ok {
		return unit{name: name, err: reject("not a report: a JSON %s", jsonv.TypeName(v))}
	}
	switch {
	case o.Has("command") && o.Has("payload"):
		return envelopeUnit(name, o)
	case o.Has("certname") && (o.Has("start_time") || o.Has("end_time") || o.Has("report_format") ||
		o.Has("puppet_version") || o.Has("resource_events")):
		if version == 0 {
			version = guessVersion(o)
		}
		return unit{name: name, version: version, payload: o}
	case o.Has("host") && (o.Has("time") || o.Has("resource_statuses") || o.Has("report_format")):
		return puppetUnit(name, o, producer)
	}
	return unit{name: name, err: reject("not a report: a JSON object with keys %s", keyList(o))}
}

// envelopeUnit unwraps {"command": "store report", "version": N, "payload": {...}}.
func envelopeUnit(name string, o *jsonv.Object) unit {
	c, _ := o.Get("command")
	cmd, _ := c.(string)
	cmd = strings.ReplaceAll(cmd, "_", " ")
	if cmd != "store report" {
		return unit{name: name, err: reject("not a report: a %s command (only \"store report\" is imported)", jsonv.Compact(c))}
	}
	vv, _ := o.Get("version")
	n, ok := vv.(jsonv.Number)
	version, err := strconv.Atoi(string(n))
	if !ok || err != nil {
		return unit{name: name, err: reject("the command version must be an integer, got %s", jsonv.Compact(vv))}
	}
	if version < wire.MinVersion || version > wire.MaxVersion {
		return unit{name: name, err: reject("store report version %d is not supported (versions %d to %d are)", version, wire.MinVersion, wire.MaxVersion)}
	}
	p, _ := o.Get("payload")
	po, ok := p.(*jsonv.Object)
	if !ok {
		return unit{name: name, err: reject("the command payload must be a JSON object, got %s", jsonv.TypeName(p))}
	}
	return unit{name: name, version: version, payload: po}
}

// guessVersion names the oldest "store report" version whose keys a bare
// payload has: v5 has a flat resource_events list, v6 adds resources, v7
// catalog_uuid/code_id/cached_catalog_status, v8 producer, noop_pending,
// corrective_change and job_id. A payload without any of the later keys is
// taken as the version that does not need them, exactly as PuppetDB would
// upgrade it.
func guessVersion(o *jsonv.Object) int {
	switch {
	case o.Has("resource_events") && !o.Has("resources"):
		return 5
	case o.Has("producer") || o.Has("noop_pending") || o.Has("corrective_change") || o.Has("job_id") || o.Has("type"):
		return 8
	case o.Has("catalog_uuid") || o.Has("code_id") || o.Has("cached_catalog_status"):
		return 7
	case o.Has("resources"):
		return 6
	}
	return 8
}

// puppetUnit converts Puppet's own report (report_format 10-12) as the
// PuppetDB terminus does. Puppet's reports carry no producer_timestamp (the
// terminus uses the time it processes the report); an import uses the
// report's end time (time + the total run time, as Convert computes
// end_time), so that importing the same file twice yields the same report
// hash and the second import is a duplicate.
func puppetUnit(name string, doc any, producer *string) unit {
	v8, err := puppetreport.Convert(doc, puppetreport.Options{ProducerTimestamp: placeholderTimestamp, Producer: producer})
	if err != nil {
		return unit{name: name, err: reject("Invalid Puppet report: %v", err)}
	}
	end, _ := v8.Get("end_time")
	v8.Set("producer_timestamp", end)
	return unit{name: name, version: 8, payload: v8}
}

func keyList(o *jsonv.Object) string {
	if o.Len() == 0 {
		return "none (an empty object)"
	}
	const max = 6
	var b strings.Builder
	for i, k := range o.Keys {
		if i == max {
			fmt.Fprintf(&b, ", ... (%d keys)", len(o.Keys))
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(jsonv.Compact(k))
	}
	return b.String()
}

// describeIOError shortens os errors for the summary (the path is shown
// beside the reason already).
func describeIOError(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Op + ": " + pe.Err.Error()
	}
	return err.Error()
}
