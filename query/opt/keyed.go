package opt

import (
	"reportdb/query"
	"reportdb/query/sqlgen"
	"reportdb/schema/dialect"
)

// keyable: a plan whose answer is made of the reports stored under a few
// keys (a hash, a node's configuration version: Puppetboard's report
// page), on a backend that keeps them, reads the ids under those keys
// first, from one index whatever the days kept, then only those reports'
// days. The statement keeps the whole filter.
func keyable(a *Access, caps dialect.Capabilities, p *query.Plan) bool {
	if caps.ReportKeys == nil {
		return false
	}
	keys, ok := sqlgen.KeyLookup(p)
	if !ok {
		return false
	}
	a.Keys = keys
	a.opts = append(a.opts, sqlgen.Keyed())
	a.reason("keyed: the reports under %d key(s) are read first", len(keys))
	return true
}

// fallback: a narrowed lookup by one report's hash whose head has no row
// (a report older than the head's days, or an unknown hash) is answered
// by the keyed statement, read from its day alone, where the backend
// keeps the keys; else by the plain statement.
func fallback(a *Access, d dialect.Dialect, p *query.Plan) error {
	if a.Narrow == nil || !a.Narrow.Unique {
		return nil
	}
	caps := d.Capabilities()
	if caps.ReportKeys == nil {
		return nil
	}
	keys, ok := sqlgen.KeyLookup(p)
	if !ok {
		return nil
	}
	b, err := sqlgen.Select(d, p, append(a.opts[:len(a.opts):len(a.opts)], sqlgen.Keyed())...)
	if err != nil || !b.Keyed {
		return err
	}
	a.Keys, a.Fallback = keys, b
	return nil
}
