package sqlgen

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"reportdb/query"
	"reportdb/schema/dialect"
)

// Built is a rendered statement.
type Built struct {
	SQL  string
	Args []any
	// Columns describes how the result columns are encoded, in order; a
	// column may consume more than one SQL result column (Width).
	Columns []OutCol
	// ValueSensitive is set when the statement compares a bound value
	// with a range or a regular expression: a plan made without knowing
	// the values (a cached generic plan) may then be far from the best.
	ValueSensitive bool
	// ReportIDArgs are the indexes in Args of the bounds of the range of
	// report ids a statement over events reads, in pairs [lo, hi) (see
	// BoundReportIDs); none when it reads all.
	ReportIDArgs []int
	// Narrowed is set when the statement was narrowed (see Narrowed).
	Narrowed bool
	// LatestCopies is set when the statement reads the copies of the
	// nodes' latest reports (Dialect.LatestReports).
	LatestCopies bool
	// EventWindows are the windows of event timestamps whose days' report
	// ids the statement's event subqueries are bounded by (see
	// EventWindow), to be bound before it runs.
	EventWindows []EventWindow
	// Keyed is set when the statement was keyed (see Keyed); KeyArgs are
	// then the indexes in Args of the keyed ids and of their days' range
	// [lo, hi), to be bound before it runs.
	Keyed   bool
	KeyArgs []int
	// Apart, when set, reads the reports of the statement's rows, its
	// last result column each row's report id (see ReportsApart), or the
	// events of its reports (Apart.Events, see EventsApart).
	Apart *Apart
}

// OutCol is one output key of a result row.
type OutCol struct {
	Name  string
	Type  query.Type // type of the value (the field's, or of the function result)
	Func  string
	Width int // SQL result columns consumed: 1, or 2 for avg (sum, count) and blobs (data, hash)
	// BlobSuffix is the href suffix of report blobs.
	BlobSuffix string
	// Apart is set when the value is the row's report's, read by
	// Built.Apart rather than in the row.
	Apart bool
}

type builder struct {
	d         dialect.Dialect
	via       Via // the statement to render (Using)
	args      []any
	sensitive bool // see Built.ValueSensitive
	// alias, when set, is the table every stored column is read from (a
	// rollup's rows, which carry the dimensions under their own names)
	alias string
	// boundIDs asks for a range of report ids on statements over events,
	// whose bounds are args idArgs (see BoundReportIDs)
	boundIDs bool
	idArgs   []int
	// narrow, when set, narrows a statement over reports (Narrowed), and
	// narrowed records that it did
	narrow    *Narrow
	narrowing bool   // decided by decideNarrow
	narrowArg string // the placeholder of the head's bound on report ids
	narrowed  bool
	windows   []EventWindow // see Built.EventWindows
	// keyed, when set, keys a statement over reports (Keyed): keying is
	// decided by decideKeyed, keyArgs are the placeholders' indexes,
	// keyedDone records that it did
	keyed, keying, keyedDone bool
	keyArgs                  []int
	// depth is how deep in subqueries ("in" over a query) the builder
	// renders: the narrowing, keying and report-id conditions are the
	// top-level statement's, and bound only it (a subquery asks its own
	// question over every day)
	depth int
	// distinctGate, when set, is a condition added to the distinct_resources
	// window's scan (distinctEventCounts: false when the distinct tables
	// answer, so that the scan reads no row even where the database does
	// not skip a gated branch, as SQLite materialising the window does not)
	distinctGate string
	// apartOK allows a page of events to read its reports apart
	// (ReportsApart), apart records that it does
	apartOK bool
	apart   *Apart
	// latestCopies records that the top-level statement reads the
	// latest reports' copies
	latestCopies bool
	// eventsApartOK allows a page of reports to read its events apart
	// (EventsApart)
	eventsApartOK bool
}

func (b *builder) built(sql string, cols []OutCol) *Built {
	return &Built{SQL: sql, Args: b.args, Columns: cols, ValueSensitive: b.sensitive, ReportIDArgs: b.idArgs,
		Narrowed: b.narrowed, LatestCopies: b.latestCopies, EventWindows: b.windows, Keyed: b.keyedDone, KeyArgs: b.keyArgs, Apart: b.apart}
}

// rangeArg binds a value compared with a range or regular-expression
// operator.
func (b *builder) rangeArg(v any) string {
	b.sensitive = true
	return b.arg(v)
}

func (b *builder) arg(v any) string {
	if x, ok := v.(bool); ok {
		v = b.d.Bool(x)
	}
	b.args = append(b.args, v)
	return b.d.Placeholder(len(b.args))
}

// sameArg binds v, reusing the placeholder of an identical string bound
// before: an expression that appears twice (a to_string in SELECT and in
// GROUP BY) must be textually identical for the database to match them.
func (b *builder) sameArg(v string) string {
	for i, a := range b.args {
		if s, ok := a.(string); ok && s == v {
			return b.d.Placeholder(i + 1)
		}
	}
	return b.arg(v)
}

// newBuilder returns a builder for dialect d with opts applied.
func newBuilder(d dialect.Dialect, opts []Option) *builder {
	b := &builder{d: d}
	for _, o := range opts {
		o(b)
	}
	return b
}

// Select renders the rows query of a plan.
func Select(d dialect.Dialect, p *query.Plan, opts ...Option) (*Built, error) {
	b := newBuilder(d, opts)
	switch b.via {
	case ViaRollup:
		rp, ok := coveredRollup(d, p, false)
		if !ok {
			return nil, errNotVia(b.via)
		}
		sql, cols, err := b.rollupSelect(p, rp)
		if err != nil {
			return nil, err
		}
		return b.built(sql, cols), nil
	case ViaStatusCounts:
		sql, cols, ok, err := b.statusCountsFromReports(p)
		if err != nil {
			return nil, err
		} else if !ok {
			return nil, errNotVia(b.via)
		}
		return b.built(sql, cols), nil
	case ViaDayRollup:
		where, err := b.where(p)
		if err != nil {
			return nil, err
		}
		sql, cols, ok := b.dayRollup(p, where)
		if !ok {
			return nil, errNotVia(b.via)
		}
		return b.built(sql, cols), nil
	}
	b.decideNarrow(p)
	b.decideKeyed(p)
	var sel string
	var selUses *uses
	var cols []OutCol
	switch {
	case b.apartOK && apartable(d, p):
		sel, selUses, cols, b.apart = b.apartSelect(p)
	case b.eventsApartOK && eventsApartable(d, p):
		sel, selUses, cols, b.apart = b.eventsApartSelect(p)
	default:
		sel, cols = b.selectList(p)
	}
	sql, err := b.statement(p, sel, selUses, true)
	if err != nil {
		return nil, err
	}
	return b.built(sql, cols), nil
}

// errNotVia is a statement asked for that cannot answer the plan: the
// optimiser's predicates and the renderer disagree.
func errNotVia(v Via) error {
	return fmt.Errorf("sqlgen: the %s statement cannot answer this query", v)
}

// Count renders a statement counting the rows the plan would return with
// no limit or offset (X-Records).
func Count(d dialect.Dialect, p *query.Plan, opts ...Option) (*Built, error) {
	b := newBuilder(d, opts)
	if b.via == ViaRollup {
		rp, ok := coveredRollup(d, p, true)
		if !ok {
			return nil, errNotVia(b.via)
		}
		sql, err := b.rollupCount(p, rp)
		if err != nil {
			return nil, err
		}
		return b.built(sql, nil), nil
	}
	b.decideKeyed(p)
	sel, _ := b.selectList(p)
	inner, err := b.statement(p, sel, nil, false)
	if err != nil {
		return nil, err
	}
	return b.built("SELECT COUNT(*) FROM ("+inner+") cnt", nil), nil
}

// where renders the WHERE clause of a plan ("" for none).
func (b *builder) where(p *query.Plan) (string, error) {
	var conds []string
	if p.Distinct != nil && p.DistinctLatest == nil {
		conds = append(conds, "e.timestamp = e.distinct_max")
	}
	if p.Filter != nil {
		w, err := b.expr(p.Filter)
		if err != nil {
			return "", err
		}
		conds = append(conds, w)
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), nil
}

// statement renders SELECT sel FROM ... WHERE ... GROUP BY ... [ORDER BY ...
// LIMIT ... OFFSET ...]; selUses is what sel reads when it is not the
// plan's own projection (nil: it is).
func (b *builder) statement(p *query.Plan, sel string, selUses *uses, paging bool) (string, error) {
	latestFrom := ""
	if lp, from, ok := b.onLatestReports(p, selUses); ok {
		// before anything binds arguments of the filter
		p, latestFrom = lp, from
	}
	where, err := b.where(p)
	if err != nil {
		return "", err
	}
	b.latestCopies = b.latestCopies || latestFrom != "" && b.depth == 0
	u := planUses(p, selUses)
	if latestFrom != "" && p.Entity.Base == query.ReportsTable && !u.blobs && !u.subquery {
		// the copies alone, one unpartitioned row per node: planned with
		// the values, cheaply. A generic plan estimates a status = $1 at a
		// third of the nodes whatever the value, and at 10,000 nodes
		// ordered by certname it walked the primary key over every copy
		// (3.8 ms) on one database and scanned and sorted the 562 failed
		// ones (2.3 ms) on another, their costs 1,185 and 1,190
		// (pql_latest_failed_reports)
		b.sensitive = true
	}
	if c := b.reportIDCond(p, u); c != "" && latestFrom == "" {
		if where == "" {
			where = " WHERE " + c
		} else {
			where = " WHERE (" + strings.TrimPrefix(where, " WHERE ") + ") AND " + c
		}
	}
	if latestFrom == "" {
		for _, c := range []string{b.narrowCond(p, u), b.keyedCond(p)} {
			if c == "" {
				continue
			}
			if where == "" {
				where = " WHERE " + c
			} else {
				where = " WHERE (" + strings.TrimPrefix(where, " WHERE ") + ") AND " + c
			}
		}
	}
	if paging && p.Offset > 0 && p.Entity == query.Reports && len(p.GroupBy) == 0 && !aggregates(p) {
		// Late row lookup: page through the narrow index first, then build
		// full rows (blobs, aggregated events) for the page only, so deep
		// pages cost about what the first page costs.
		from := b.fromClause(p.Entity, u)
		if latestFrom != "" {
			from = latestFrom
		}
		inner := "SELECT r.id FROM " + from + where + b.orderLimit(p.OrderBy, p.Limit, p.Offset)
		outer := ""
		if bound, ok := b.idBound(); ok && latestFrom == "" {
			// the page's reports are all in the head's (or the keyed
			// ids') days: their partitions alone are opened
			outer = " WHERE " + bound("r.id")
		}
		return "SELECT " + sel + " FROM reports r JOIN (" + inner + ") pg ON pg.id = r.id" + outer +
			b.orderLimit(p.OrderBy, 0, 0), nil
	}
	var group string
	if len(p.GroupBy) > 0 {
		parts := make([]string, len(p.GroupBy))
		for i, g := range p.GroupBy {
			parts[i] = b.columnExpr(g)
		}
		group = " GROUP BY " + strings.Join(parts, ", ")
	}
	var tail string
	if paging {
		tail = b.orderLimit(p.OrderBy, p.Limit, p.Offset)
	}
	from := b.from(p, u) // numbered placeholders: text order does not matter
	if latestFrom != "" {
		from = latestFrom
	}
	return "SELECT " + sel + " FROM " + from + where + group + tail, nil
}

func aggregates(p *query.Plan) bool {
	for _, c := range p.Columns {
		if c.Aggregate() {
			return true
		}
	}
	return false
}

func (b *builder) orderLimit(orders []query.Order, limit, offset int64) string {
	keys := make([]orderKey, len(orders))
	for i, o := range orders {
		if o.Column != nil {
			keys[i] = orderKey{o.Column.Name, o.Desc, false}
		} else {
			keys[i] = orderKey{b.d.OrderKey(b.col(o.Field), o.Field.Type), o.Desc, !o.Field.NotNull}
		}
	}
	return b.orderLimitKeys(keys, limit, offset)
}

// orderKey is one rendered ORDER BY expression.
type orderKey struct {
	expr     string
	desc     bool
	nullable bool // NULLs sort as PostgreSQL's default puts them (last ascending, first descending)
}

// orderLimitKeys renders ORDER BY, then LIMIT/OFFSET (0 = none).
func (b *builder) orderLimitKeys(keys []orderKey, limit, offset int64) string {
	var sb strings.Builder
	if len(keys) > 0 {
		sb.WriteString(" ORDER BY ")
		for i, k := range keys {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(k.expr)
			switch {
			case k.desc && k.nullable:
				sb.WriteString(" DESC NULLS FIRST")
			case k.desc:
				sb.WriteString(" DESC")
			case k.nullable:
				sb.WriteString(" ASC NULLS LAST")
			}
		}
	}
	if limit > 0 || offset > 0 {
		l, o := "", ""
		if limit > 0 {
			l = b.arg(limit)
		}
		if offset > 0 {
			// An offset decides the plan: planned without its value, a
			// deep page of reports (offset 10,000 of 475,000) estimated
			// a tenth of the table before its limit and joined it by
			// hash, 128 ms instead of 7 (10,000 nodes, one day).
			o = b.rangeArg(offset)
		}
		sb.WriteString(b.d.LimitOffset(l, o))
	}
	return sb.String()
}

// from renders the FROM clause of a statement that reads u (for
// distinct_resources, whose inner query carries only the event columns the
// statement uses).
func (b *builder) from(p *query.Plan, u uses) string {
	if p.Distinct == nil {
		return b.fromClause(p.Entity, u)
	}
	// distinct_resources: keep only the events that are the newest of
	// their (certname, type, title, property, name) within the window.
	w := p.Distinct
	if p.DistinctLatest == nil {
		// One pass: the newest timestamp of each group as a window
		// function over the columns the statement needs; statement()
		// keeps the rows that have it.
		var sel []string
		for _, c := range eventColumns {
			if c == "report_id" || c == "timestamp" || u.events[c] {
				sel = append(sel, "e."+c)
			}
		}
		key := "r2.certname, e.resource_type, e.resource_title, e.property, e.name"
		if h := b.d.SortHash("r2.certname || e.resource_title"); h != "" {
			key = h + ", " + key // cheap comparisons; same partitions
		}
		from := "(SELECT " + strings.Join(sel, ", ") + ", MAX(e.timestamp) OVER (PARTITION BY " + key +
			") AS distinct_max FROM resource_events e " +
			"JOIN reports r2 ON r2.id = e.report_id WHERE e.timestamp >= " + b.rangeArg(w.Start) +
			" AND e.timestamp <= " + b.rangeArg(w.End) + b.eventWindowCond(w.Start, w.End, "e", "r2")
		if b.distinctGate != "" {
			from += " AND " + b.distinctGate
		}
		from += ") e"
		if u.tables.has(query.ReportsTable) {
			from += tableSQL[query.ReportsTable].join
		}
		return from
	}
	// Candidates restricted to (non-)latest reports: pick the newest
	// timestamp per group among them, then keep every stored event with
	// that timestamp (PuppetDB does not restrict this second step).
	cond := fmt.Sprintf("e2.timestamp >= %s AND e2.timestamp <= %s", b.rangeArg(w.Start), b.rangeArg(w.End))
	cond += " AND " + latestSQL("e2.report_id", *p.DistinctLatest, "")
	return "resource_events e JOIN reports r ON r.id = e.report_id JOIN (" +
		"SELECT r2.certname AS certname, e2.resource_type AS resource_type, e2.resource_title AS resource_title, " +
		"e2.property AS property, e2.name AS name, MAX(e2.timestamp) AS ts " +
		"FROM resource_events e2 JOIN reports r2 ON r2.id = e2.report_id WHERE " + cond +
		" GROUP BY r2.certname, e2.resource_type, e2.resource_title, e2.property, e2.name) d " +
		"ON d.certname = r.certname AND d.resource_type = e.resource_type AND d.resource_title = e.resource_title AND " +
		b.d.NotDistinct("d.property", "e.property") + " AND " + b.d.NotDistinct("d.name", "e.name") +
		" AND d.ts = e.timestamp"
}

// titleKeyPrefix is how many leading characters of a title its key
// keeps whatever its length (postgres.Dialect.TitleKey).
const titleKeyPrefix = 200

// titleKey returns the dialect's title key function when f is the events'
// resource_title and the dialect indexes titles by key (Dialect.TitleKey),
// else "".
func (b *builder) titleKey(f *query.Field) string {
	if f.Table != query.EventsTable || f.Column != "resource_title" {
		return ""
	}
	return b.d.TitleKey()
}

// keyedEq renders col op v, and when col is a keyed title (titleKey) and
// op is =, the same comparison of their keys, which the title indexes
// serve.
func (b *builder) keyedEq(f *query.Field, col, op, v string) string {
	k := b.titleKey(f)
	if k == "" || op != "=" {
		return col + " " + op + " " + v
	}
	return "(" + col + " = " + v + " AND " + k + "(" + col + ") = " + k + "(" + v + "))"
}

// eventColumns are the columns of resource_events, in table order.
var eventColumns = []string{"report_id", "status", "timestamp", "resource_type", "resource_title", "property",
	"new_value", "old_value", "message", "file", "line", "containment_path", "containing_class", "name",
	"corrective_change"}

// latestOfNode returns, among the arguments of an AND, a certname = X on
// the reports' certname beside a latest_report? test (else nil): then only X's latest
// report can match, and the latest-report subquery reads X's row of
// certnames instead of every node's (a one-node query's cost then does
// not grow with the fleet: 11 ms at 10,000 nodes before, for 2 events).
// Both are the same condition: certnames.latest_report_id of a node is
// always a report of that node.
func latestOfNode(args []query.Expr) *query.Cmp {
	var node *query.Cmp
	hasLatest := false
	for _, a := range args {
		switch x := a.(type) {
		case query.LatestReport:
			hasLatest = true
		case query.Cmp:
			if _, isString := x.Value.(string); isString && x.Op == "=" && !x.Literal &&
				x.Field.Name == "certname" && x.Field.Table == query.ReportsTable && x.Field.Column == "certname" {
				node = &x
			}
		}
	}
	if !hasLatest {
		return nil
	}
	return node
}

// onLatestReports: when the dialect keeps a copy of each node's latest
// report (Dialect.LatestReports) and p reads reports or events with
// latest_report? = true as its filter or a term of its top-level AND
// (withoutLatest), it returns p without that term and the FROM item that
// reads the copies instead (the same rows):
//   - reports: the copies themselves, one row per node whose pointer is
//     set (nothing else may be joined to reports then: ok false);
//   - events: for each copy, its report's events, as a nested loop
//     (LATERAL, not flattened: OFFSET 0), each probe an index lookup in
//     the one day partition of the report's id. A semi join of the events
//     with the latest ids scans every day kept (267 ms against 52 ms at
//     10,000 nodes and 15 days, EXPLAIN ANALYZE of latest_events_by_status).
//     The copy also serves as the events' report (alias r).
//
// selUses is the statement's (see statement): the FROM it would otherwise
// render decides whether anything else is joined.
func (b *builder) onLatestReports(p *query.Plan, selUses *uses) (*query.Plan, string, bool) {
	if p.Distinct != nil {
		return nil, "", false
	}
	var col string
	switch p.Entity.Base {
	case query.ReportsTable:
		col = "id"
	case query.EventsTable:
		col = "report_id"
	default:
		return nil, "", false
	}
	rest, copies, ok := b.latestReportsFilter(p.Filter, p.Entity.Base, col)
	if !ok {
		return nil, "", false
	}
	q := *p
	q.Filter = rest
	from := b.fromClause(q.Entity, planUses(&q, selUses))
	r, e := tableSQL[query.ReportsTable], tableSQL[query.EventsTable]
	switch {
	case p.Entity.Base == query.ReportsTable && from == r.from:
		return &q, copies, true
	case p.Entity.Base == query.EventsTable && (from == e.from || from == e.from+r.join):
		return &q, copies + " CROSS JOIN LATERAL (SELECT " + e.alias + ".* FROM " + e.from +
			" WHERE " + e.alias + ".report_id = " + r.alias + ".id OFFSET 0) " + e.alias, true
	}
	return nil, "", false
}

// latestReportsFilter: when the dialect keeps the copies of the nodes'
// latest reports and f has the term latest_report? = true on column col
// of table base (withoutLatest), it returns f without it and the FROM
// item of the copies under the reports' alias.
func (b *builder) latestReportsFilter(f query.Expr, base query.Table, col string) (query.Expr, string, bool) {
	t := b.d.LatestReports()
	if t == "" {
		return f, "", false
	}
	rest, ok := withoutLatest(f, base, col)
	if !ok {
		return f, "", false
	}
	return rest, t + " " + tableSQL[query.ReportsTable].alias, true
}

// withoutLatest returns f without its term latest_report? = true on
// column col of table base (f itself, or a term of f's top-level AND or of
// an AND among those terms): nil when nothing else is left. ok is false
// when f has no such term.
func withoutLatest(f query.Expr, base query.Table, col string) (rest query.Expr, ok bool) {
	if l, isLatest := f.(query.LatestReport); isLatest && l.Latest && l.Field.Table == base && l.Field.Column == col {
		return nil, true
	}
	and, isAnd := f.(query.And)
	if !isAnd {
		return f, false
	}
	for i, x := range and.Args {
		// the term, or an AND among the terms that has it
		r, found := withoutLatest(x, base, col)
		if !found {
			continue
		}
		args := append([]query.Expr{}, and.Args[:i]...)
		if r != nil {
			args = append(args, r)
		}
		args = append(args, and.Args[i+1:]...)
		if len(args) == 0 {
			return nil, true
		}
		return query.And{Args: args}, true
	}
	return f, false
}

// latestSQL tests col against the nodes' latest reports; with node (a
// bound placeholder), against that node's only.
func latestSQL(col string, latest bool, node string) string {
	not := ""
	if !latest {
		not = "NOT "
	}
	cond := "latest_report_id IS NOT NULL"
	if node != "" {
		cond = "certname = " + node + " AND " + cond
	}
	return col + " " + not + "IN (SELECT latest_report_id FROM certnames WHERE " + cond + ")"
}

// selectList renders the projection and describes its output columns.
func (b *builder) selectList(p *query.Plan) (string, []OutCol) {
	var parts []string
	var cols []OutCol
	if p.Columns == nil {
		for _, name := range p.Entity.Output {
			fld := p.Entity.Field(name)
			s, c := b.fieldColumn(fld)
			parts = append(parts, s)
			cols = append(cols, c)
		}
		return strings.Join(parts, ", "), cols
	}
	for _, c := range p.Columns {
		if !c.IsFunc() {
			s, oc := b.fieldColumn(c.Field)
			oc.Name = c.Name
			parts = append(parts, s)
			cols = append(cols, oc)
			continue
		}
		oc := OutCol{Name: c.Name, Func: c.Func, Width: 1}
		switch c.Func {
		case "count":
			oc.Type = query.Number
			if c.Field == nil {
				parts = append(parts, "COUNT(*)")
			} else {
				parts = append(parts, "COUNT("+b.col(c.Field)+")")
			}
		case "sum":
			oc.Type = query.Number
			parts = append(parts, "SUM("+b.col(c.Field)+")")
		case "avg":
			oc.Type, oc.Width = query.Number, 2
			parts = append(parts, "SUM("+b.col(c.Field)+"), COUNT("+b.col(c.Field)+")")
		case "min", "max":
			oc.Type = c.Field.Type
			parts = append(parts, strings.ToUpper(c.Func)+"("+b.col(c.Field)+")")
		case "octet_length": // a stored document's size, without reading it
			oc.Type = query.Number
			parts = append(parts, "octet_length("+b.col(c.Field)+")")
		case "to_string":
			oc.Type = query.String
			parts = append(parts, b.columnExpr(c))
		}
		cols = append(cols, oc)
	}
	return strings.Join(parts, ", "), cols
}

func (b *builder) fieldColumn(fld *query.Field) (string, OutCol) {
	oc := OutCol{Name: fld.Name, Type: fld.Type, Width: 1}
	sql := b.col(fld)
	if fld.Type == query.Blob {
		oc.Width, oc.BlobSuffix = 2, fld.BlobSuffix
		return sql + ", r.hash", oc
	}
	return sql, oc
}

// columnExpr renders a plain field or a to_string call (for GROUP BY).
func (b *builder) columnExpr(c query.Column) string {
	if c.Func == "to_string" {
		return b.d.ToChar(b.col(c.Field), c.Field.Type, b.sameArg(c.Format))
	}
	return b.col(c.Field)
}

func (b *builder) expr(x query.Expr) (string, error) {
	switch x := x.(type) {
	case query.And:
		return b.join(x.Args, " AND ", latestOfNode(x.Args))
	case query.Or:
		return b.join(x.Args, " OR ", nil)
	case query.Not:
		s, err := b.expr(x.X)
		if err != nil {
			return "", err
		}
		return "NOT (" + s + ")", nil
	case query.Cmp:
		col := b.col(x.Field)
		if x.Field.Type == query.Path {
			return b.d.PathContains(col, b.arg(x.Value)), nil
		}
		if s, ok := x.Value.(string); ok && x.Literal {
			return b.keyedEq(x.Field, col, x.Op, "'"+strings.ReplaceAll(s, "'", "''")+"'"), nil
		}
		if x.Op != "=" {
			return col + " " + x.Op + " " + b.rangeArg(x.Value), nil
		}
		return b.keyedEq(x.Field, col, x.Op, b.arg(x.Value)), nil
	case query.Match:
		col := b.col(x.Field)
		if x.Field.Type == query.Path {
			return b.d.PathRegex(col, b.rangeArg(x.Pattern)), nil
		}
		cond := col + " IS NOT NULL"
		if x.Field.Type == query.String {
			if pre, exact := regexPrefix(x.Pattern); pre != "" {
				// implied by the match; lets an index on the column serve it
				lo, end := b.rangeArg(pre), prefixEnd(pre)
				var hi string
				if end != "" {
					hi = b.rangeArg(end)
				}
				if k := b.titleKey(x.Field); k != "" && utf8.RuneCountInString(pre) <= titleKeyPrefix {
					// A title starts with pre exactly when its key does
					// (both bounds are keys of themselves, and a key keeps
					// its title's first 200 characters), so the keys'
					// range alone is the condition. With the titles' range
					// beside it PostgreSQL multiplied the two selectivities
					// as if independent: 177 estimated rows for 4,020
					// (medium fleet, ^/etc/nginx/), and on some statistics
					// it then read every match and sorted them instead of
					// walking the timestamp index (41 ms instead of 11).
					cond = k + "(" + col + ") >= " + k + "(" + lo + ")"
					if hi != "" {
						cond += " AND " + k + "(" + col + ") < " + k + "(" + hi + ")"
					}
				} else {
					cond = col + " >= " + lo
					if hi != "" {
						cond += " AND " + col + " < " + hi
					}
				}
				if exact {
					// the range is the whole condition
					return "(" + cond + ")", nil
				}
			}
		}
		return "(" + cond + " AND " + b.d.Regex(col, b.rangeArg(x.Pattern)) + ")", nil
	case query.IsNull:
		if x.Null {
			return b.col(x.Field) + " IS NULL", nil
		}
		return b.col(x.Field) + " IS NOT NULL", nil
	case query.InValues:
		ps := make([]string, len(x.Values))
		for i, v := range x.Values {
			ps[i] = b.arg(v)
		}
		col := b.col(x.Field)
		s := col + " IN (" + strings.Join(ps, ", ") + ")"
		if k := b.titleKey(x.Field); k != "" {
			for i := range ps {
				ps[i] = k + "(" + ps[i] + ")"
			}
			s = "(" + s + " AND " + k + "(" + col + ") IN (" + strings.Join(ps, ", ") + "))"
		}
		return s, nil
	case query.InQuery:
		sub := x.Sub
		b.depth++
		parts := make([]string, len(sub.Columns))
		for i, c := range sub.Columns {
			parts[i] = b.col(c.Field)
		}
		inner, err := b.statement(sub, strings.Join(parts, ", "), nil, true)
		b.depth--
		if err != nil {
			return "", err
		}
		if len(x.Fields) == 1 {
			return b.col(x.Fields[0]) + " IN (" + inner + ")", nil
		}
		locals := make([]string, len(x.Fields))
		for i, f := range x.Fields {
			locals[i] = b.col(f)
		}
		return "(" + strings.Join(locals, ", ") + ") IN (" + inner + ")", nil
	case query.LatestReport:
		return latestSQL(b.col(x.Field), x.Latest, ""), nil
	case query.NodeState:
		// few nodes are inactive (certnames_inactive, migration 0021 on
		// PostgreSQL, 0010 on SQLite): both tests read those alone
		if x.Active {
			return b.col(x.Field) + " NOT IN (" + inactiveNodes + ")", nil
		}
		return b.col(x.Field) + " IN (" + inactiveNodes + ")", nil
	case query.Const:
		if x.Value {
			return "1 = 1", nil
		}
		return "1 = 0", nil
	}
	return "", fmt.Errorf("sqlgen: unknown expression %T", x)
}

// inactiveNodes are the certnames of the deactivated and expired nodes.
const inactiveNodes = "SELECT certname FROM certnames WHERE deactivated IS NOT NULL OR expired IS NOT NULL"

// AnyInactiveNode counts 1 when some node is deactivated or expired, 0
// when none is (see query.ResolveNodeState).
const AnyInactiveNode = "SELECT count(*) FROM (" + inactiveNodes + " LIMIT 1) i"

// AnyInactiveNodeSince counts 1 when some deactivated or expired node has
// a latest report produced at or after since (Unix ms), 0 when none has
// (see engine.nodeStates). It reads certnames alone: a probe of the
// reports would open every day partition, which costs more to plan than
// the query it is asked for. A node's plan reports are not its latest
// report: one whose only recent reports are plans is not seen here.
func AnyInactiveNodeSince(d dialect.Dialect, since int64) *Built {
	return &Built{SQL: "SELECT count(*) FROM (SELECT 1 FROM certnames WHERE (deactivated IS NOT NULL OR expired IS NOT NULL)" +
		" AND latest_report_timestamp >= " + d.Placeholder(1) + " LIMIT 1) i", Args: []any{since}}
}

// join renders xs joined by sep. With node (an AND's certname = X, see
// latestOfNode), its latest-report tests read X's row of certnames only.
func (b *builder) join(xs []query.Expr, sep string, node *query.Cmp) (string, error) {
	parts := make([]string, len(xs))
	for i, x := range xs {
		if l, ok := x.(query.LatestReport); ok && node != nil {
			parts[i] = latestSQL(b.col(l.Field), l.Latest, b.arg(node.Value))
			continue
		}
		s, err := b.expr(x)
		if err != nil {
			return "", err
		}
		parts[i] = s
	}
	return balanced(parts, sep), nil
}

// maxFlat is the longest list of AND or OR terms rendered as one flat
// list.
const maxFlat = 4

// balanced joins parts with sep, in parentheses. A longer list than
// maxFlat is split into halves, recursively, each in its own parentheses:
// SQLite parses "a OR b OR c ..." into a chain as deep as the list is long
// and refuses an expression more than 1000 deep (the depth of a subquery
// counting again for every query around it), while a tree of halves is
// only logarithmically deep. Both databases flatten the groups again when
// they plan, so the plan is the same.
func balanced(parts []string, sep string) string {
	if len(parts) <= maxFlat {
		return "(" + strings.Join(parts, sep) + ")"
	}
	mid := len(parts) / 2
	return "(" + balanced(parts[:mid], sep) + sep + balanced(parts[mid:], sep) + ")"
}
