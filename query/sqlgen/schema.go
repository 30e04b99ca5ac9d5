package sqlgen

import (
	"strings"

	"reportdb/query"
)

// table is how one query.Table appears in SQL: its alias, its FROM item
// when it is an entity's base table, and its join when it is not.
type table struct {
	alias string
	from  string // as the base table
	join  string // joined to the base table (which it names by alias)
}

// tableSQL maps every table of the query model to SQL: how the read side
// names and relates the stored tables (package schema lists them, checked
// against the migrations); columns are the fields' own
// (query.Field.Column), mapped by the dialect where databases differ.
var tableSQL = map[query.Table]table{
	query.EventsTable: {alias: "e", from: "resource_events e"},
	query.ReportsTable: {alias: "r", from: "reports r",
		join: " JOIN reports r ON r.id = e.report_id"}, // an event's report
	query.CertnamesTable:    {alias: "c", from: "certnames c"},
	query.LatestReportTable: {alias: "lr", join: " LEFT JOIN reports lr ON lr.id = c.latest_report_id"},
	query.EnvironmentsTable: {alias: "env", from: "environments env"},
	query.ProducersTable: {alias: "p",
		from: "(SELECT DISTINCT producer AS name FROM reports WHERE producer IS NOT NULL) p"},
	query.EmptyTable: {alias: "x"},
}

// sqlType is the SQL type of a field's values (for typed NULLs).
func sqlType(t query.Type) string {
	switch t {
	case query.Timestamp, query.Number:
		return "BIGINT"
	case query.Boolean, query.NullBoolean:
		return "BOOLEAN"
	}
	return "TEXT"
}

// col renders a field's value expression.
func (b *builder) col(f *query.Field) string {
	if f.Table == query.NoTable {
		return "CAST(NULL AS " + sqlType(f.Type) + ")"
	}
	if b.alias != "" {
		return b.alias + "." + f.Column
	}
	if bc := b.d.Capabilities().BoundedColumns; bc != nil && f.Table == query.ReportsTable {
		if bound, ok := b.idBound(); ok {
			if s, ok := bc.BoundedColumn(f.Table, tableSQL[f.Table].alias, f.Column, bound); ok {
				return s
			}
		}
	}
	return b.d.Column(f.Table, tableSQL[f.Table].alias, f.Column)
}

// tableSet is a set of query.Tables.
type tableSet uint16

func (s tableSet) has(t query.Table) bool { return s&(1<<t) != 0 }

// uses collects what a plan's statement reads: the tables, the columns
// of resource_events (distinct_resources projects only those), whether a
// blob (read by a subquery over the day partitions) and whether a
// subquery of the filter ("in" over a query).
type uses struct {
	tables   tableSet
	events   map[string]bool
	blobs    bool
	subquery bool
}

func (u *uses) field(f *query.Field) {
	if f == nil {
		return
	}
	u.tables |= 1 << f.Table
	if f.Type == query.Blob {
		u.tables |= 1 << query.ReportsTable // its href needs the hash
		u.blobs = true
	}
	if f.Table == query.EventsTable {
		if u.events == nil {
			u.events = map[string]bool{}
		}
		u.events[f.Column] = true
	}
}

// planUses returns what the statement of p reads at its own level (a
// subquery's statement has its own FROM). sel is what its select list
// reads when that is not the plan's projection (nil: it is).
func planUses(p *query.Plan, sel *uses) uses {
	var u uses
	if sel != nil {
		u.tables, u.blobs = sel.tables, sel.blobs
		for c := range sel.events {
			u.field(&query.Field{Table: query.EventsTable, Column: c})
		}
	} else if p.Columns == nil {
		for _, name := range p.Entity.Output {
			u.field(p.Entity.Field(name))
		}
	}
	for _, c := range p.Columns {
		u.field(c.Field)
	}
	for _, g := range p.GroupBy {
		u.field(g.Field)
	}
	for _, o := range p.OrderBy {
		u.field(o.Field)
	}
	exprUses(&u, p.Filter)
	return u
}

func exprUses(u *uses, x query.Expr) {
	switch x := x.(type) {
	case query.And:
		for _, a := range x.Args {
			exprUses(u, a)
		}
	case query.Or:
		for _, a := range x.Args {
			exprUses(u, a)
		}
	case query.Not:
		exprUses(u, x.X)
	case query.Cmp:
		u.field(x.Field)
	case query.Match:
		u.field(x.Field)
	case query.IsNull:
		u.field(x.Field)
	case query.InValues:
		u.field(x.Field)
	case query.InQuery:
		u.subquery = true
		for _, f := range x.Fields {
			u.field(f)
		}
	case query.LatestReport:
		u.field(x.Field)
	case query.NodeState:
		u.field(x.Field)
	}
}

// fromClause renders the FROM clause of an entity's statement: its base
// table and the joins the statement needs (a join that is not needed is
// not made: each adds at most one row per base row).
func (b *builder) fromClause(e *query.Entity, u uses) string {
	if e.Base == query.EmptyTable {
		return b.emptyFrom(e)
	}
	var sb strings.Builder
	sb.WriteString(tableSQL[e.Base].from)
	for _, t := range []query.Table{query.ReportsTable, query.LatestReportTable} {
		if t != e.Base && u.tables.has(t) {
			if lr := b.d.LatestReports(); t == query.LatestReportTable && lr != "" {
				// a node's latest report, from the copies (one row per node)
				// by certname: its key (the row is there exactly when
				// c.latest_report_id is set, and is that report)
				sb.WriteString(" LEFT JOIN " + lr + " " + tableSQL[t].alias + " ON " + tableSQL[t].alias +
					".certname = c.certname")
				continue
			}
			sb.WriteString(tableSQL[t].join)
		}
	}
	return sb.String()
}

// emptyFrom renders an entity reportdb does not store: its fields as typed
// NULL columns, and no row.
func (b *builder) emptyFrom(e *query.Entity) string {
	cols := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		cols[i] = "CAST(NULL AS " + sqlType(f.Type) + ") AS " + f.Column
	}
	return "(SELECT " + strings.Join(cols, ", ") + " WHERE 1 = 0) " + tableSQL[query.EmptyTable].alias
}
