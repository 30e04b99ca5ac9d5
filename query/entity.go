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

// Field is one field of an entity.
type Field struct {
	Name       string
	Type       Type
	SQL        string // column expression; "" for latest_report?
	Queryable  bool
	Extract    bool // projectable
	Sortable   bool
	BlobSuffix string // for Blob fields: href suffix (events, metrics, logs)
	// NotNull marks columns that are never NULL, so ORDER BY needs no
	// NULLS FIRST/LAST clause (which would keep SQLite off the index).
	NotNull bool
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
	// From is the SQL FROM clause; field SQL refers to its aliases.
	From string
	// NarrowFrom, when set, is a FROM clause without the joined tables
	// (alias r), valid when no column of r is used.
	NarrowFrom string
	// Certname is the SQL of the row's certname, used by the node-activity
	// filter ("" when the entity has no certname).
	Certname string
	// Relations are the implicit subquery targets.
	Relations map[string]Relationship
	// Exists is false for entities PuppetDB knows but reportdb does not
	// store (facts, catalogs, ...): they can be named in subqueries and
	// are always empty.
	Exists bool
	// HashOrder gives each output key its hash-map position (for extracts
	// of more than 8 columns).
	hashPos map[string]int
	byName  map[string]*Field
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

func f(name string, t Type, sql string) *Field {
	return &Field{Name: name, Type: t, SQL: sql, Queryable: true, Extract: true, Sortable: true}
}

// nn is f for a column that is never NULL.
func nn(name string, t Type, sql string) *Field {
	x := f(name, t, sql)
	x.NotNull = true
	return x
}

// Events is the resource-event entity (SPEC §13).
var Events = (&Entity{
	Name: "events",
	Fields: []*Field{
		f("message", String, "e.message"),
		nn("old_value", JSONValue, "e.old_value"),
		nn("report_receive_time", Timestamp, "r.receive_time"),
		f("corrective_change", NullBoolean, "CAST(NULL AS BOOLEAN)"),
		f("containment_path", Path, "e.containment_path"),
		nn("certname", String, "r.certname"),
		nn("timestamp", Timestamp, "e.timestamp"),
		nn("run_end_time", Timestamp, "r.end_time"),
		f("name", String, "e.name"),
		nn("configuration_version", String, "r.configuration_version"),
		nn("new_value", JSONValue, "e.new_value"),
		nn("resource_title", String, "e.resource_title"),
		nn("status", String, "e.status"),
		f("property", String, "e.property"),
		nn("resource_type", String, "e.resource_type"),
		f("line", Number, "e.line"),
		nn("environment", String, "r.environment"),
		f("containing_class", String, "e.containing_class"),
		nn("run_start_time", Timestamp, "r.start_time"),
		{Name: "latest_report?", Type: Latest, Queryable: true, Sortable: true, SQL: "e.report_id"},
		f("file", String, "e.file"),
		nn("report", String, "r.hash"),
	},
	Output: []string{"new_value", "report", "corrective_change", "run_start_time", "property", "name", "file",
		"old_value", "containing_class", "line", "resource_type", "status", "configuration_version",
		"resource_title", "environment", "timestamp", "run_end_time", "report_receive_time",
		"containment_path", "certname", "message"},
	From:       "resource_events e JOIN reports r ON r.id = e.report_id",
	NarrowFrom: "resource_events e",
	Certname:   "r.certname",
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
		nn("receive_time", Timestamp, "r.receive_time"),
		f("corrective_change", NullString, "CAST(NULL AS TEXT)"),
		f("code_id", String, "r.code_id"),
		f("noop", Boolean, "r.noop"),
		nn("certname", String, "r.certname"),
		nn("puppet_version", String, "r.puppet_version"),
		nn("hash", String, "r.hash"),
		f("cached_catalog_status", String, "r.cached_catalog_status"),
		f("transaction_uuid", String, "r.transaction_uuid"),
		nn("configuration_version", String, "r.configuration_version"),
		f("status", String, "r.status"),
		f("job_id", String, "r.job_id"),
		f("producer", String, "r.producer"),
		f("catalog_uuid", String, "r.catalog_uuid"),
		{Name: "logs", Type: Blob, SQL: "r.logs", Extract: true, BlobSuffix: "logs"},
		f("noop_pending", Boolean, "r.noop_pending"),
		nn("end_time", Timestamp, "r.end_time"),
		nn("type", String, "r.type"),
		nn("environment", String, "r.environment"),
		{Name: "latest_report?", Type: Latest, Queryable: true, Sortable: true, SQL: "r.id"},
		nn("start_time", Timestamp, "r.start_time"),
		{Name: "resource_events", Type: Blob, SQL: "r.resource_events", Extract: true, BlobSuffix: "events"},
		{Name: "metrics", Type: Blob, SQL: "r.metrics", Extract: true, BlobSuffix: "metrics"},
		nn("producer_timestamp", Timestamp, "r.producer_timestamp"),
		nn("report_format", Number, "r.report_format"),
	},
	Output: []string{"catalog_uuid", "receive_time", "producer", "hash", "transaction_uuid", "puppet_version",
		"noop", "corrective_change", "logs", "report_format", "start_time", "producer_timestamp", "type",
		"cached_catalog_status", "end_time", "resource_events", "status", "configuration_version",
		"environment", "code_id", "noop_pending", "certname", "metrics", "job_id"},
	From:     "reports r",
	Certname: "r.certname",
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
	Fields: []*Field{nn("name", String, "env.name")},
	Output: []string{"name"},
	From:   "environments env",
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
	Fields:    []*Field{nn("name", String, "p.name")},
	Output:    []string{"name"},
	From:      "(SELECT DISTINCT producer AS name FROM reports WHERE producer IS NOT NULL) p",
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
