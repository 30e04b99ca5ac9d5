package query

import (
	"sort"
	"strings"
)

// Type is the query type of a field.
type Type int

// Field types. They decide which operators apply and how values are read
// from the query and written to the response.
const (
	String    Type = iota
	Number         // integer column
	Timestamp      // Unix ms column, output as yyyy-MM-ddTHH:mm:ss.SSSZ
	Boolean
	Path        // array of strings (containment_path)
	JSONValue   // JSON text column (new_value, old_value)
	Latest      // latest_report? (query only)
	Blob        // report metrics/logs/resource_events: {"data":..,"href":..}
	NullString  // declared string, always null (reports.corrective_change)
	NullBoolean // declared boolean, always null (events.corrective_change)
)

// Table is where a field's value is stored. Package sqlgen maps each table
// to its SQL (name, alias, how it joins the entity's base table) and each
// backend's Dialect maps columns that differ between databases.
type Table uint8

// Tables.
const (
	// NoTable: the field has no stored column and is always null.
	NoTable Table = iota
	// EventsTable is resource_events.
	EventsTable
	// ReportsTable is reports; for events, the event's report.
	ReportsTable
	// CertnamesTable is certnames, one row per node.
	CertnamesTable
	// LatestReportTable is the latest report of a node (nodes).
	LatestReportTable
	// EnvironmentsTable is environments.
	EnvironmentsTable
	// ProducersTable is the distinct producers of stored reports.
	ProducersTable
	// EmptyTable stands for an entity reportdb does not store (facts,
	// catalogs, ...): it has the entity's fields and no rows.
	EmptyTable
)

// Field is one field of an entity.
type Field struct {
	Name   string
	Type   Type
	Table  Table  // where the value is stored
	Column string // its column in Table ("" when Table is NoTable)
	// Queryable, Extract and Sortable say where the field may be used.
	Queryable  bool
	Extract    bool // projectable
	Sortable   bool
	BlobSuffix string // for Blob fields: href suffix (events, metrics, logs)
	// NotNull marks columns that are never NULL, so ORDER BY needs no
	// NULLS FIRST/LAST clause (which would keep SQLite off the index).
	NotNull bool
	// Dotted fields (facts, trusted, parameters) take a path: facts.os.family.
	Dotted bool
}

// Relationship is an implicit subquery: ["subquery", E, Q] expands to
// ["in", Local, ["extract", Foreign, ["select_E", Q]]].
type Relationship struct {
	Local, Foreign string
}

// Entity is a queryable object.
type Entity struct {
	Name string
	// Fields in PuppetDB's internal map order, which is the order of the
	// field lists in order_by and extract error messages.
	Fields []*Field
	// Output is the key order of a full row (Clojure hash-map order for
	// rows of more than 8 keys).
	Output []string
	// Base is the table with one row per entity row; fields of other
	// tables are joined to it.
	Base Table
	// Relations are the implicit subquery targets.
	Relations map[string]Relationship
	// Exists is false for entities PuppetDB knows but reportdb does not
	// store (facts, catalogs, ...): they can be named in subqueries and
	// are always empty.
	Exists bool
	// Label, when set, names the entity in error messages (PuppetDB says
	// fact_nodes for fact_contents).
	Label string
	// HashOrder gives each output key its hash-map position (for extracts
	// of more than 8 columns).
	hashPos map[string]int
	byName  map[string]*Field
}

func (e *Entity) label() string {
	if e.Label != "" {
		return e.Label
	}
	return e.Name
}

// dottedField resolves "facts.os.family" on a field marked Dotted (facts,
// trusted, parameters of the entities reportdb does not store).
func (e *Entity) dottedField(name string) *Field {
	base, _, ok := strings.Cut(name, ".")
	if !ok {
		return nil
	}
	if b := e.byName[base]; b != nil && b.Dotted {
		return &Field{Name: name, Type: JSONValue, Table: b.Table, Column: b.Column, Queryable: true, Extract: true}
	}
	return nil
}

// anyField is Field, then dottedField.
func (e *Entity) anyField(name string) *Field {
	if f := e.byName[name]; f != nil {
		return f
	}
	return e.dottedField(name)
}

// Field returns the named field or nil.
func (e *Entity) Field(name string) *Field { return e.byName[name] }

func (e *Entity) init() *Entity {
	e.byName = map[string]*Field{}
	for _, f := range e.Fields {
		e.byName[f.Name] = f
	}
	e.hashPos = map[string]int{}
	for i, k := range e.Output {
		e.hashPos[k] = i
	}
	return e
}

// queryableList renders the alphabetical list of queryable fields used by
// "'x' is not a queryable object for E. Known queryable objects are ...".
func (e *Entity) queryableList() string {
	var names []string
	for _, f := range e.Fields {
		if f.Queryable {
			names = append(names, f.Name)
		}
	}
	sort.Strings(names)
	return andList(names)
}

func (e *Entity) extractList() string {
	var names []string
	for _, f := range e.Fields {
		if f.Extract {
			names = append(names, f.Name)
		}
	}
	return andList(names)
}

func (e *Entity) sortList() string {
	var names []string
	for _, f := range e.Fields {
		if f.Sortable {
			names = append(names, "'"+f.Name+"'")
		}
	}
	return strings.Join(names, ", ")
}

// andList renders 'a', 'b', and 'c' (a single item: 'a').
func andList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "'" + n + "'"
	}
	switch len(q) {
	case 0:
		return ""
	case 1:
		return q[0]
	case 2:
		return q[0] + " and " + q[1]
	}
	return strings.Join(q[:len(q)-1], ", ") + ", and " + q[len(q)-1]
}

// f declares a queryable, projectable, sortable field stored in column
// col of table t ("" col: NoTable, always null).
func f(name string, typ Type, t Table, col string) *Field {
	if col == "" {
		t = NoTable
	}
	return &Field{Name: name, Type: typ, Table: t, Column: col, Queryable: true, Extract: true, Sortable: true}
}

// nn is f for a column that is never NULL.
func nn(name string, typ Type, t Table, col string) *Field {
	x := f(name, typ, t, col)
	x.NotNull = true
	return x
}

// latest declares latest_report?, a query-only condition on the column
// holding the row's report id.
func latest(t Table, col string) *Field {
	return &Field{Name: "latest_report?", Type: Latest, Table: t, Column: col, Queryable: true, Sortable: true}
}

// blob declares a report document (metrics, logs, resource_events),
// answered as {"data": ..., "href": ...}.
func blob(name, col, suffix string) *Field {
	return &Field{Name: name, Type: Blob, Table: ReportsTable, Column: col, Extract: true, BlobSuffix: suffix}
}

// Events is the resource-event entity (SPEC §13).
var Events = (&Entity{
	Name: "events",
	Fields: []*Field{
		f("message", String, EventsTable, "message"),
		nn("old_value", JSONValue, EventsTable, "old_value"),
		nn("report_receive_time", Timestamp, ReportsTable, "receive_time"),
		f("corrective_change", NullBoolean, NoTable, ""),
		f("containment_path", Path, EventsTable, "containment_path"),
		nn("certname", String, ReportsTable, "certname"),
		nn("timestamp", Timestamp, EventsTable, "timestamp"),
		nn("run_end_time", Timestamp, ReportsTable, "end_time"),
		f("name", String, EventsTable, "name"),
		nn("configuration_version", String, ReportsTable, "configuration_version"),
		nn("new_value", JSONValue, EventsTable, "new_value"),
		nn("resource_title", String, EventsTable, "resource_title"),
		nn("status", String, EventsTable, "status"),
		f("property", String, EventsTable, "property"),
		nn("resource_type", String, EventsTable, "resource_type"),
		f("line", Number, EventsTable, "line"),
		nn("environment", String, ReportsTable, "environment"),
		f("containing_class", String, EventsTable, "containing_class"),
		nn("run_start_time", Timestamp, ReportsTable, "start_time"),
		latest(EventsTable, "report_id"),
		f("file", String, EventsTable, "file"),
		nn("report", String, ReportsTable, "hash"),
	},
	Output: []string{"new_value", "report", "corrective_change", "run_start_time", "property", "name", "file",
		"old_value", "containing_class", "line", "resource_type", "status", "configuration_version",
		"resource_title", "environment", "timestamp", "run_end_time", "report_receive_time",
		"containment_path", "certname", "message"},
	Base: EventsTable,
	Relations: withCertnameRelations(map[string]Relationship{
		"reports":      {Local: "report", Foreign: "hash"},
		"environments": {Local: "environment", Foreign: "name"},
	}),
	Exists: true,
}).init()

// Reports is the report entity (SPEC §17).
var Reports = (&Entity{
	Name: "reports",
	Fields: []*Field{
		nn("receive_time", Timestamp, ReportsTable, "receive_time"),
		f("corrective_change", NullString, NoTable, ""),
		f("code_id", String, ReportsTable, "code_id"),
		f("noop", Boolean, ReportsTable, "noop"),
		nn("certname", String, ReportsTable, "certname"),
		nn("puppet_version", String, ReportsTable, "puppet_version"),
		nn("hash", String, ReportsTable, "hash"),
		f("cached_catalog_status", String, ReportsTable, "cached_catalog_status"),
		f("transaction_uuid", String, ReportsTable, "transaction_uuid"),
		nn("configuration_version", String, ReportsTable, "configuration_version"),
		f("status", String, ReportsTable, "status"),
		f("job_id", String, ReportsTable, "job_id"),
		f("producer", String, ReportsTable, "producer"),
		f("catalog_uuid", String, ReportsTable, "catalog_uuid"),
		blob("logs", "logs", "logs"),
		f("noop_pending", Boolean, ReportsTable, "noop_pending"),
		nn("end_time", Timestamp, ReportsTable, "end_time"),
		nn("type", String, ReportsTable, "type"),
		nn("environment", String, ReportsTable, "environment"),
		latest(ReportsTable, "id"),
		nn("start_time", Timestamp, ReportsTable, "start_time"),
		blob("resource_events", "resource_events", "events"),
		blob("metrics", "metrics", "metrics"),
		nn("producer_timestamp", Timestamp, ReportsTable, "producer_timestamp"),
		nn("report_format", Number, ReportsTable, "report_format"),
	},
	Output: []string{"catalog_uuid", "receive_time", "producer", "hash", "transaction_uuid", "puppet_version",
		"noop", "corrective_change", "logs", "report_format", "start_time", "producer_timestamp", "type",
		"cached_catalog_status", "end_time", "resource_events", "status", "configuration_version",
		"environment", "code_id", "noop_pending", "certname", "metrics", "job_id"},
	Base: ReportsTable,
	Relations: withCertnameRelations(map[string]Relationship{
		"events":       {Local: "hash", Foreign: "report"},
		"environments": {Local: "environment", Foreign: "name"},
		"producers":    {Local: "producer", Foreign: "name"},
	}),
	Exists: true,
}).init()

// Environments is the environment entity (SPEC §18).
var Environments = (&Entity{
	Name:   "environments",
	Fields: []*Field{nn("name", String, EnvironmentsTable, "name")},
	Output: []string{"name"},
	Base:   EnvironmentsTable,
	Relations: map[string]Relationship{
		"events": {Local: "name", Foreign: "environment"}, "reports": {Local: "name", Foreign: "environment"},
		"facts": {Local: "name", Foreign: "environment"}, "fact_contents": {Local: "name", Foreign: "environment"},
		"resources": {Local: "name", Foreign: "environment"}, "catalogs": {Local: "name", Foreign: "environment"},
		"factsets": {Local: "name", Foreign: "environment"}, "inventory": {Local: "name", Foreign: "environment"},
	},
	Exists: true,
}).init()

// Producers lists the names of report producers (the compiling servers).
var Producers = (&Entity{
	Name:      "producers",
	Fields:    []*Field{nn("name", String, ProducersTable, "name")},
	Output:    []string{"name"},
	Base:      ProducersTable,
	Relations: map[string]Relationship{},
	Exists:    true,
}).init()

// certnameEntities are the entities that relate to others by certname.
var certnameEntities = []string{"nodes", "facts", "factsets", "catalogs", "resources", "edges", "inventory",
	"fact_contents", "package_inventory", "catalog_inputs", "catalog_input_contents", "events", "reports"}

func withCertnameRelations(m map[string]Relationship) map[string]Relationship {
	for _, e := range certnameEntities {
		if _, ok := m[e]; !ok {
			m[e] = Relationship{Local: "certname", Foreign: "certname"}
		}
	}
	return m
}

var entities = map[string]*Entity{}

// Register adds an entity to the registry used for subqueries and the root
// endpoint (the nodes entity is registered by nodes.go).
func Register(e *Entity) { entities[e.Name] = e }

// Lookup returns the entity called name (underscored spelling) or nil.
func Lookup(name string) *Entity { return entities[name] }

func init() {
	for _, e := range []*Entity{Events, Reports, Environments, Producers} {
		Register(e)
	}
}
