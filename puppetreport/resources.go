package puppetreport

// resourceStatuses validates every status (kept or not) and returns the
// kept ones, those with events or skipped, in document order.
func resourceStatuses(f fields) ([]resource, error) {
	v, err := f.required("resource_statuses")
	if err != nil {
		return nil, err
	}
	sf, err := object("resource_statuses", v, nil)
	if err != nil {
		return nil, err
	}
	var out []resource
	for i, key := range sf.o.Keys {
		res, keep, err := resourceStatus(key, sf.o.Values[i])
		if err != nil {
			return nil, err
		}
		if keep {
			out = append(out, res)
		}
	}
	return out, nil
}

func resourceStatus(key string, v any) (res resource, keep bool, err error) {
	f, err := objectAt(fieldPath{s: "resource_statuses", key: key, quoted: true}, v, statusKeys)
	if err != nil {
		return res, false, err
	}
	if res.resourceType, err = f.reqString("resource_type"); err != nil {
		return res, false, err
	}
	if c := res.resourceType; c == "" || c[0] < 'A' || c[0] > 'Z' {
		return res, false, errf(f.p("resource_type"), "must start with a capital letter (^[A-Z]); got %s", describe(c))
	}
	if res.title, err = f.reqString("title"); err != nil {
		return res, false, err
	}
	if err = f.reqInteger("change_count"); err != nil {
		return res, false, err
	}
	if err = f.reqInteger("out_of_sync_count"); err != nil {
		return res, false, err
	}
	if _, err = f.checkStringArray("tags"); err != nil {
		return res, false, err
	}
	if res.events, err = events(f); err != nil {
		return res, false, err
	}
	if res.skipped, err = f.reqBool("skipped"); err != nil {
		return res, false, err
	}
	if res.containmentPath, err = f.checkStringArray("containment_path"); err != nil {
		return res, false, err
	}
	if res.correctiveChange, err = f.optBool("corrective_change"); err != nil {
		return res, false, err
	}
	rn, err := f.nullableString("resource", false)
	if err != nil {
		return res, false, err
	}
	if rn != nil && rn != any(key) {
		return res, false, errf(f.p("resource"), "must equal the resource_statuses property name %s; got %s", describe(key), describe(rn))
	}
	if _, err = f.nullableString("provider_used", false); err != nil {
		return res, false, err
	}
	if res.file, err = f.nullableString("file", false); err != nil {
		return res, false, err
	}
	if res.line, err = f.line("line"); err != nil {
		return res, false, err
	}
	if err = f.optNumber("evaluation_time"); err != nil {
		return res, false, err
	}
	for _, k := range []string{"out_of_sync", "changed", "failed", "failed_to_restart"} {
		if _, err = f.optBool(k); err != nil {
			return res, false, err
		}
	}
	keep = len(res.events) > 0 || res.skipped
	if keep {
		res.containmentPath = copyArray(res.containmentPath)
	}
	if tv := f.opt("time"); tv != nil {
		t, err := timeValue(f.p("time"), tv)
		if err != nil {
			return res, false, err
		}
		res.timestamp = t.trunc()
	} else if keep {
		return res, false, errf(f.p("time"), "missing required property (needed for a resource with events or skipped)")
	}
	return res, keep, nil
}

func events(f fields) ([]event, error) {
	v, err := f.required("events")
	if err != nil {
		return nil, err
	}
	a, ok := v.([]any)
	if !ok {
		return nil, errf(f.p("events"), "must be an array; got %s", describe(v))
	}
	out := make([]event, len(a))
	for i, e := range a {
		ef, err := object(index(f.p("events"), i), e, eventKeys)
		if err != nil {
			return nil, err
		}
		ev := &out[i]
		if _, err = ef.reqBool("audited"); err != nil {
			return nil, err
		}
		if ev.property, err = ef.nullableString("property", true); err != nil {
			return nil, err
		}
		if ev.message, err = ef.nullableString("message", true); err != nil {
			return nil, err
		}
		if ev.name, err = ef.nullableString("name", true); err != nil {
			return nil, err
		}
		st, err := ef.enum("status", true, "success", "failure", "noop", "audit")
		if err != nil {
			return nil, err
		}
		ev.status = st.(string)
		t, err := ef.reqTime("time")
		if err != nil {
			return nil, err
		}
		ev.timestamp = t.trunc()
		if ev.correctiveChange, err = ef.optBool("corrective_change"); err != nil {
			return nil, err
		}
		if _, err = ef.optBool("redacted"); err != nil {
			return nil, err
		}
		ev.newValue = RubyToS(ef.opt("desired_value"))
		ev.oldValue = RubyToS(ef.opt("previous_value"))
	}
	return out, nil
}
