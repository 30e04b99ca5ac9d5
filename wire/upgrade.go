package wire

import (
	"reportdb"
	"reportdb/jsonv"
)

// MinVersion and MaxVersion bound the "store report" versions accepted over
// HTTP (PuppetDB 7.12.1 retires versions below 5).
const (
	MinVersion = 5
	MaxVersion = 8
)

// upgrade converts a v5, v6 or v7 payload into the v8 shape the way
// PuppetDB does before validating: keys are added with defaults only where
// absent, and v5's flat resource_events list is grouped into resources.
// The input object is not modified.
func upgrade(version int, o *jsonv.Object) (*jsonv.Object, error) {
	out := &jsonv.Object{Keys: append([]string(nil), o.Keys...), Values: append([]any(nil), o.Values...)}
	if version == 8 {
		return out, nil
	}
	if version == 5 {
		flat, ok := out.Get("resource_events")
		if !ok {
			return nil, invalid("resource_events", "missing required key (store report v5)")
		}
		res, err := groupV5(flat)
		if err != nil {
			return nil, err
		}
		rename(out, "resource_events", "resources", res)
	}
	if version <= 6 {
		tu, _ := out.Get("transaction_uuid")
		setDefault(out, "catalog_uuid", tu)
		setDefault(out, "cached_catalog_status", nil)
		setDefault(out, "code_id", nil)
	}
	// v7 -> v8
	setDefault(out, "producer", nil)
	setDefault(out, "noop_pending", nil)
	setDefault(out, "corrective_change", nil)
	setDefault(out, "job_id", nil)
	if rs, ok := out.Get("resources"); ok {
		if arr, ok := rs.([]any); ok {
			newRes := make([]any, len(arr))
			for i, r := range arr {
				ro, ok := r.(*jsonv.Object)
				if !ok {
					newRes[i] = r
					continue
				}
				ro = copyObject(ro)
				ro.Set("corrective_change", nil)
				if evs, ok := ro.Get("events"); ok {
					if earr, ok := evs.([]any); ok {
						ne := make([]any, len(earr))
						for j, e := range earr {
							if eo, ok := e.(*jsonv.Object); ok {
								eo = copyObject(eo)
								eo.Set("corrective_change", nil)
								ne[j] = eo
							} else {
								ne[j] = e
							}
						}
						ro.Set("events", ne)
					}
				}
				newRes[i] = ro
			}
			out.Set("resources", newRes)
		}
	}
	return out, nil
}

func copyObject(o *jsonv.Object) *jsonv.Object {
	return &jsonv.Object{Keys: append([]string(nil), o.Keys...), Values: append([]any(nil), o.Values...)}
}

func setDefault(o *jsonv.Object, k string, v any) {
	if !o.Has(k) {
		o.Keys = append(o.Keys, k)
		o.Values = append(o.Values, v)
	}
}

func rename(o *jsonv.Object, from, to string, v any) {
	for i, k := range o.Keys {
		if k == from {
			o.Keys[i] = to
			o.Values[i] = v
			return
		}
	}
}

var v5EventFields = []field{
	{name: "resource_type", required: true, kind: kString},
	{name: "resource_title", required: true, kind: kString},
	{name: "file", required: true, nullable: true, kind: kString},
	{name: "line", required: true, nullable: true, kind: kInt},
	{name: "containment_path", required: true, nullable: true, kind: kStringArray},
	{name: "timestamp", required: true, kind: kDatetime},
	{name: "status", required: true, kind: kString},
	{name: "property", required: true, nullable: true, kind: kString},
	{name: "new_value", required: true, nullable: true, kind: kAny},
	{name: "old_value", required: true, nullable: true, kind: kAny},
	{name: "message", required: true, nullable: true, kind: kString},
}

// groupV5 groups v5's flat events into v8 resources, keyed by (file, line,
// timestamp, resource_type, resource_title, containment_path, skipped), in
// first-occurrence order.
func groupV5(flat any) ([]any, error) {
	arr, ok := flat.([]any)
	if !ok {
		if flat == nil {
			return []any{}, nil
		}
		return nil, invalid("resource_events", "must be an array, got %s", jsonv.TypeName(flat))
	}
	type group struct {
		res    *jsonv.Object
		events []any
	}
	var order []string
	groups := map[string]*group{}
	for i, e := range arr {
		path := index("resource_events", i)
		eo, err := checkObject(path, e, v5EventFields)
		if err != nil {
			return nil, err
		}
		get := func(k string) any { v, _ := eo.Get(k); return v }
		status, _ := get("status").(string)
		skipped := status == "skipped"
		key := jsonv.Compact([]any{get("file"), get("line"), get("timestamp"), get("resource_type"),
			get("resource_title"), get("containment_path"), skipped})
		g, ok := groups[key]
		if !ok {
			g = &group{res: &jsonv.Object{
				Keys: []string{"skipped", "timestamp", "resource_type", "resource_title", "file", "line", "containment_path"},
				Values: []any{skipped, get("timestamp"), get("resource_type"), get("resource_title"),
					get("file"), get("line"), get("containment_path")},
			}}
			groups[key] = g
			order = append(order, key)
		}
		ev := &jsonv.Object{}
		for _, k := range []string{"status", "timestamp", "property", "new_value", "old_value", "message"} {
			ev.Set(k, get(k))
		}
		g.events = append(g.events, ev)
	}
	out := make([]any, 0, len(order))
	for _, k := range order {
		g := groups[k]
		g.res.Set("events", g.events)
		out = append(out, g.res)
	}
	return out, nil
}

// errVersion is returned for versions outside MinVersion..MaxVersion.
func errVersion(v int) error {
	return reportdb.Errorf(reportdb.EINVALID, "Version %d of command \"store report\" is not supported (supported: %d to %d)", v, MinVersion, MaxVersion)
}
