package wire

import (
	"strconv"
	"strings"
	"unicode/utf16"

	"reportdb"
	"reportdb/jsonv"
)

// deriveEvents turns v8 resources into stored events (SPEC §5.2): a skipped
// resource yields one synthetic "skipped" event, a resource without events
// yields nothing, otherwise one event per submitted event; events identical
// in all identity fields are collapsed to their first occurrence.
func deriveEvents(v any) ([]reportdb.Event, error) {
	if v == nil {
		return nil, nil
	}
	resources := v.([]any)
	var out []reportdb.Event
	seen := map[string]bool{}
	add := func(e reportdb.Event) {
		k := identity(&e)
		if seen[k] {
			return
		}
		seen[k] = true
		out = append(out, e)
	}
	for i, rv := range resources {
		ro, err := checkObject("", rv, resourceFields)
		if err != nil {
			// re-check with the path for the message (errors are rare)
			_, err = checkObject(index("resources", i), rv, resourceFields)
		}
		if err != nil {
			return nil, err
		}
		get := func(k string) any { v, _ := ro.Get(k); return v }
		base := reportdb.Event{
			ResourceType:  get("resource_type").(string),
			ResourceTitle: get("resource_title").(string),
			File:          optString(get("file")),
			Line:          optInt(get("line")),
		}
		if cp, ok := get("containment_path").([]any); ok {
			base.ContainmentPath = make([]string, len(cp))
			for j, s := range cp {
				base.ContainmentPath[j] = s.(string)
			}
		}
		base.ContainingClass = ContainingClass(base.ContainmentPath)
		events, _ := get("events").([]any)
		// Validate the events even when the resource is skipped: a report
		// is accepted or rejected as a whole.
		for j, ev := range events {
			if _, err := checkObject("", ev, eventFields); err != nil {
				_, err = checkObject(index(join(index("resources", i), "events"), j), ev, eventFields)
				return nil, err
			}
		}
		if get("skipped").(bool) {
			e := base
			e.Status = "skipped"
			e.Timestamp = mustMillis(get("timestamp"))
			e.NewValue, e.OldValue = "null", "null"
			f := false
			e.CorrectiveChange = &f
			add(e)
			continue
		}
		for _, ev := range events {
			eo := ev.(*jsonv.Object)
			eget := func(k string) any { v, _ := eo.Get(k); return v }
			e := base
			e.Status = eget("status").(string)
			e.Timestamp = mustMillis(eget("timestamp"))
			e.Property = optString(eget("property"))
			e.Message = optString(eget("message"))
			e.Name = optString(eget("name"))
			e.CorrectiveChange = optBool(eget("corrective_change"))
			e.NewValue = ValueText(eget("new_value"))
			e.OldValue = ValueText(eget("old_value"))
			add(e)
		}
	}
	return out, nil
}

func optInt(v any) *int64 {
	if n, ok := v.(jsonv.Number); ok {
		i, _ := strconv.ParseInt(string(n), 10, 64)
		return &i
	}
	return nil
}

// identity is the key under which PuppetDB collapses identical events of
// one report (its primary key hashes these fields).
func identity(e *reportdb.Event) string {
	b := make([]byte, 0, 256)
	str := func(s string) {
		b = strconv.AppendInt(b, int64(len(s)), 10)
		b = append(b, ':')
		b = append(b, s...)
	}
	opt := func(s *string) {
		if s == nil {
			b = append(b, '-')
		} else {
			str(*s)
		}
	}
	str(e.ResourceType)
	str(e.ResourceTitle)
	opt(e.Property)
	b = strconv.AppendInt(b, e.Timestamp, 10)
	b = append(b, ';')
	str(e.Status)
	str(e.OldValue)
	str(e.NewValue)
	opt(e.Message)
	opt(e.Name)
	opt(e.File)
	if e.Line == nil {
		b = append(b, '-')
	} else {
		b = strconv.AppendInt(b, *e.Line, 10)
	}
	return string(b)
}

// ContainingClass is the last element of the containment path that is
// non-empty and contains no '[' (nil if there is none).
func ContainingClass(path []string) *string {
	for i := len(path) - 1; i >= 0; i-- {
		if p := path[i]; p != "" && !strings.Contains(p, "[") {
			return &p
		}
	}
	return nil
}

// ValueText is the stored form of an event's new_value/old_value: compact
// JSON with nested object keys sorted as PuppetDB sorts keyword keys,
// decimals written as Java doubles, and U+0000 in a top-level string
// replaced by U+FFFD.
func ValueText(v any) string {
	if s, ok := v.(string); ok {
		return string(jsonv.AppendString(nil, strings.ReplaceAll(s, "\x00", "\uFFFD")))
	}
	return string(appendValue(nil, v))
}

func appendValue(dst []byte, v any) []byte {
	switch x := v.(type) {
	case jsonv.Number:
		if x.IsInteger() {
			return appendInteger(dst, string(x))
		}
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return append(dst, x...)
		}
		return append(dst, jsonv.JavaDouble(f)...)
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendValue(dst, e)
		}
		return append(dst, ']')
	case *jsonv.Object:
		keys := sortKeywordKeys(append([]string(nil), x.Keys...))
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = jsonv.AppendString(dst, k)
			dst = append(dst, ':')
			val, _ := x.Get(k)
			dst = appendValue(dst, val)
		}
		return append(dst, '}')
	}
	return jsonv.AppendCompact(dst, v)
}

// appendInteger writes an integer literal as Java reads and prints it
// (leading "-0" becomes "0").
func appendInteger(dst []byte, s string) []byte {
	if s == "-0" {
		return append(dst, '0')
	}
	return append(dst, s...)
}

// sortKeywordKeys sorts object keys as Clojure compares keywords: keys
// without a '/' (no namespace) first, by UTF-16 code units; namespaced keys
// by namespace, then name. Duplicate keys are dropped (Get returns the last
// value of a key).
func sortKeywordKeys(keys []string) []string {
	less := func(a, b string) bool {
		an, aname := splitKeyword(a)
		bn, bname := splitKeyword(b)
		if (an == nil) != (bn == nil) {
			return an == nil
		}
		if an != nil {
			if c := compareUTF16(*an, *bn); c != 0 {
				return c < 0
			}
		}
		return compareUTF16(aname, bname) < 0
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && less(keys[j], keys[j-1]); j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	n := 0
	for i, k := range keys {
		if i > 0 && k == keys[n-1] {
			continue
		}
		keys[n] = k
		n++
	}
	return keys[:n]
}

func splitKeyword(k string) (*string, string) {
	if k == "/" {
		return nil, k
	}
	if i := strings.IndexByte(k, '/'); i >= 0 {
		ns := k[:i]
		return &ns, k[i+1:]
	}
	return nil, k
}

func compareUTF16(a, b string) int {
	if a == b {
		return 0
	}
	ar, br := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(ar) && i < len(br); i++ {
		if ar[i] != br[i] {
			if ar[i] < br[i] {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(ar) < len(br):
		return -1
	case len(ar) > len(br):
		return 1
	}
	return 0
}

// RenderResourceEvents renders the `resource_events.data` array of a report
// row the way PuppetDB's SQL builds it (json_agg over row_to_json): objects
// without spaces separated by ", ", keys in the column order below,
// timestamps in PostgreSQL's json form, values re-rendered as jsonb.
func RenderResourceEvents(events []reportdb.Event) []byte {
	if len(events) == 0 {
		return nil
	}
	b := make([]byte, 0, 512*len(events))
	b = append(b, '[')
	for i := range events {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = appendEventRow(b, &events[i])
	}
	return append(b, ']')
}

// AppendResourceEvent appends one event as RenderResourceEvents renders
// each (events are separated by ", ").
func AppendResourceEvent(b []byte, e *reportdb.Event) []byte { return appendEventRow(b, e) }

func appendEventRow(b []byte, e *reportdb.Event) []byte {
	optS := func(b []byte, s *string) []byte {
		if s == nil {
			return append(b, "null"...)
		}
		return jsonv.AppendPGString(b, *s)
	}
	b = append(b, `{"status":`...)
	b = jsonv.AppendPGString(b, e.Status)
	b = append(b, `,"timestamp":"`...)
	b = AppendPGTimestamp(b, e.Timestamp)
	b = append(b, `","resource_type":`...)
	b = jsonv.AppendPGString(b, e.ResourceType)
	b = append(b, `,"resource_title":`...)
	b = jsonv.AppendPGString(b, e.ResourceTitle)
	b = append(b, `,"property":`...)
	b = optS(b, e.Property)
	b = append(b, `,"corrective_change":null,"new_value":`...)
	b = appendJSONBText(b, e.NewValue)
	b = append(b, `,"old_value":`...)
	b = appendJSONBText(b, e.OldValue)
	b = append(b, `,"message":`...)
	b = optS(b, e.Message)
	b = append(b, `,"file":`...)
	b = optS(b, e.File)
	b = append(b, `,"line":`...)
	if e.Line == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, *e.Line, 10)
	}
	b = append(b, `,"containment_path":`...)
	if e.ContainmentPath == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, s := range e.ContainmentPath {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonv.AppendPGString(b, s)
		}
		b = append(b, ']')
	}
	b = append(b, `,"containing_class":`...)
	b = optS(b, e.ContainingClass)
	b = append(b, `,"name":`...)
	b = optS(b, e.Name)
	return append(b, '}')
}

func appendJSONBText(b []byte, text string) []byte {
	// A string without escapes renders the same in jsonb: skip the parse
	// (the terminus always sends strings).
	if len(text) >= 2 && text[0] == '"' && strings.IndexByte(text, '\\') < 0 {
		return append(b, text...)
	}
	v, err := jsonv.Parse([]byte(text))
	if err != nil {
		return append(b, text...)
	}
	return jsonv.AppendJSONB(b, v)
}
