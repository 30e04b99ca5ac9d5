package sqlgen

import (
	"reportdb/query"
)

// HashKey is the key of the report whose hash is hash.
func HashKey(hash string) string { return "h" + hash }

// VersionKey is the key of the reports of node certname whose
// configuration_version is version.
func VersionKey(certname, version string) string { return "c" + certname + "\x01" + version }

// Keyed renders a statement whose plan KeyLookup answers as the rows of
// the reports with the ids the keys' lookup found: Built.KeyArgs are the
// placeholders to bind then, the ids (an array) and the range [lo, hi)
// of the ids of their days, which bounds the statement and its subqueries
// over partitions by report id, so that only those days' partitions are
// planned and opened. Built.Keyed reports whether it was so rendered.
func Keyed() Option {
	return func(b *builder) { b.keyed = true }
}

// KeyLookup returns the keys (HashKey, VersionKey) under which every report
// that plan p's answer is made of is stored, when there are such keys: p
// reads reports or events, with no grouping or aggregate, and its filter
// requires (at its top) that the report's hash equals a value, that its
// configuration_version equals a value and its certname another, or that
// one of several alternatives holds, each a hash equal to a value or a
// configuration_version equal to a value of a node whose certname the
// filter (or the alternative) requires to equal a value: Puppetboard's
// report page, certname = N and (hash = X or configuration_version = X).
func KeyLookup(p *query.Plan) (keys []string, ok bool) {
	if (p.Entity != query.Reports && p.Entity != query.Events) || p.Distinct != nil ||
		len(p.GroupBy) > 0 || aggregates(p) {
		return nil, false
	}
	top := conjuncts(p.Filter)
	for _, x := range top {
		if keys, ok := conjunctKeys(x, top); ok {
			return keys, true
		}
	}
	return nil, false
}

// conjunctKeys are the keys of the reports for which x holds, when x
// names them: a hash, a node's configuration version, or alternatives of
// these; siblings are the conjuncts x is one of (where a certname may be).
func conjunctKeys(x query.Expr, siblings []query.Expr) ([]string, bool) {
	if h, ok := reportEquals(x, "hash"); ok {
		return []string{HashKey(h)}, true
	}
	if v, ok := reportEquals(x, "configuration_version"); ok {
		if c, ok := certnameOf(siblings); ok {
			return []string{VersionKey(c, v)}, true
		}
		return nil, false
	}
	switch x := x.(type) {
	case query.Or:
		var keys []string
		for _, a := range x.Args {
			// an alternative that is itself a conjunction may name the
			// certname within
			inner := conjuncts(a)
			var found bool
			for _, y := range inner {
				if k, ok := conjunctKeys(y, append(inner[:len(inner):len(inner)], siblings...)); ok {
					keys, found = append(keys, k...), true
					break
				}
			}
			if !found {
				return nil, false
			}
		}
		return keys, len(keys) > 0
	}
	return nil, false
}

// reportEquals is the value v when x is column = v of reports, v a string.
func reportEquals(x query.Expr, column string) (string, bool) {
	c, ok := x.(query.Cmp)
	if !ok || c.Op != "=" || c.Field == nil || c.Field.Table != query.ReportsTable || c.Field.Column != column {
		return "", false
	}
	v, ok := c.Value.(string)
	return v, ok
}

// certnameOf is the certname that one of xs requires.
func certnameOf(xs []query.Expr) (string, bool) {
	for _, x := range xs {
		if c, ok := reportEquals(x, "certname"); ok {
			return c, true
		}
	}
	return "", false
}

// decideKeyed decides, before anything of plan p is rendered, whether its
// statement is keyed (Keyed): p is one that KeyLookup answers, on a
// dialect that keeps the keys, and reads reports themselves (not the
// copies of the nodes' latest reports, which are answered apart).
func (b *builder) decideKeyed(p *query.Plan) {
	b.keying = false
	if !b.keyed || b.alias != "" {
		return
	}
	if b.d.Capabilities().ReportKeys == nil {
		return
	}
	if _, ok := KeyLookup(p); !ok {
		return
	}
	if p.Entity == query.Events && !planUses(p, nil).tables.has(query.ReportsTable) {
		return
	}
	b.keying = !b.onLatestCopies(p)
}

// keyPlaceholders binds the placeholders of a keyed statement once (nil values,
// bound by the engine): the ids, and the range of their days.
func (b *builder) keyPlaceholders() (ids, lo, hi string) {
	if b.keyArgs == nil {
		b.keyArgs = make([]int, 3)
		for i := range b.keyArgs {
			b.keyArgs[i] = len(b.args)
			b.arg(nil)
		}
	}
	ph := func(i int) string { return b.d.Placeholder(b.keyArgs[i] + 1) }
	return ph(0), ph(1), ph(2)
}

// keyRange is the condition that id expression id is within the keyed
// ids' days.
func (b *builder) keyRange(id string) string {
	_, lo, hi := b.keyPlaceholders()
	return id + " >= " + lo + " AND " + id + " < " + hi
}

// keyedCond is the condition Keyed adds to the WHERE clause of a
// statement over reports ("" when it adds none).
func (b *builder) keyedCond(p *query.Plan) string {
	if !b.keying || b.depth > 0 {
		return ""
	}
	b.keyedDone = true
	ids, _, _ := b.keyPlaceholders()
	r := tableSQL[query.ReportsTable].alias + ".id"
	c := b.d.Capabilities().ReportKeys.AnyID(r, ids) + " AND " + b.keyRange(r)
	if p.Entity == query.Events {
		c = b.keyRange(tableSQL[query.EventsTable].alias+".report_id") + " AND " + c
	}
	return c
}

// idBound is the condition on report ids that bounds the subqueries of a
// narrowed or keyed statement (ok false for none).
func (b *builder) idBound() (func(id string) string, bool) {
	if b.depth > 0 {
		return nil, false
	}
	if b.keying {
		return b.keyRange, true
	}
	if op, arg, ok := b.narrowID(); ok {
		return func(id string) string { return id + " " + op + " " + arg }, true
	}
	return nil, false
}
