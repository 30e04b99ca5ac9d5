package query

import "strings"

// Nodes answers /pdb/query/v4/nodes from what reportdb knows: the node's
// activity and its latest report. Fact and catalog fields are always null
// (reportdb stores reports only).
var Nodes = (&Entity{
	Name: "nodes",
	Fields: []*Field{
		f("latest_report_corrective_change", NullBoolean, NoTable, ""),
		f("deactivated", Timestamp, CertnamesTable, "deactivated"),
		f("expired", Timestamp, CertnamesTable, "expired"),
		f("report_environment", String, LatestReportTable, "environment"),
		nn("certname", String, CertnamesTable, "certname"),
		f("facts_timestamp", Timestamp, NoTable, ""),
		f("facts_environment", String, NoTable, ""),
		f("cached_catalog_status", String, LatestReportTable, "cached_catalog_status"),
		f("latest_report_status", String, LatestReportTable, "status"),
		f("latest_report_hash", String, LatestReportTable, "hash"),
		f("catalog_timestamp", Timestamp, NoTable, ""),
		f("latest_report_noop_pending", Boolean, LatestReportTable, "noop_pending"),
		f("report_timestamp", Timestamp, LatestReportTable, "end_time"),
		f("latest_report_noop", Boolean, LatestReportTable, "noop"),
		f("catalog_environment", String, NoTable, ""),
		f("latest_report_job_id", String, LatestReportTable, "job_id"),
	},
	Output: []string{"deactivated", "latest_report_hash", "facts_environment", "cached_catalog_status",
		"report_environment", "latest_report_corrective_change", "catalog_environment", "facts_timestamp",
		"latest_report_noop", "expired", "latest_report_noop_pending", "report_timestamp", "certname",
		"catalog_timestamp", "latest_report_job_id", "latest_report_status"},
	Base:      CertnamesTable,
	Relations: withCertnameRelations(map[string]Relationship{}),
	Exists:    true,
}).init()

// stub describes an entity PuppetDB has and reportdb does not store.
// fields are name:type[:flags] in PuppetDB's field order (the order of its
// extract and order_by error lists), comma separated; type s(tring),
// t(imestamp), n(umber), b(oolean), j(son value: compared as JSON text);
// flags: X not extractable, O not sortable, Q not queryable, D dotted
// (facts.os.family). Observed on PuppetDB 7.12.1 (httpapi/testdata/puppetdb-empty.json).
type stub struct {
	name, label string
	fields      string
}

var stubs = []stub{
	{"facts", "", "certname:s,environment:s,name:s,value:j"},
	{"fact_contents", "fact_nodes", "certname:s,environment:s,path:j,name:s,value:j"},
	{"fact_paths", "", "type:s,path:j,name:s,depth:n:X"},
	{"factsets", "", "timestamp:t,facts:j:D,certname:s,hash:s,producer_timestamp:t,producer:s,environment:s"},
	{"catalogs", "", "code_id:s,certname:s,hash:s,transaction_uuid:s,job_id:s,producer:s,catalog_uuid:s,environment:s,edges:j:OQ,version:s,producer_timestamp:t,resources:j:OQ"},
	{"resources", "", "resource:s,certname:s,tags:j,tag:s:X,exported:b,line:n,title:s,type:s,environment:s,file:s,parameters:j:D"},
	{"edges", "", "certname:s,relationship:s,source_title:s,source_type:s,target_title:s,target_type:s"},
	{"inventory", "", "certname:s,timestamp:t,environment:s,facts:j:D,trusted:j:D"},
	{"packages", "", "package_name:s,version:s,provider:s"},
	{"package_inventory", "", "certname:s,package_name:s,version:s,provider:s"},
	{"catalog_inputs", "", "certname:s,producer_timestamp:t,catalog_uuid:s,inputs:j"},
	{"catalog_input_contents", "", "certname:s,producer_timestamp:t,catalog_uuid:s,name:s,type:s"},
}

// FactNames is /fact-names (an endpoint, not a root entity): always empty.
var FactNames = stubEntity(stub{"fact_names", "", "name:s"})

// stubEntity builds an always-empty entity with the given fields, so that
// queries naming it validate like PuppetDB and return no rows.
func stubEntity(s stub) *Entity {
	e := &Entity{Name: s.name, Label: s.label, Base: EmptyTable, Relations: map[string]Relationship{}}
	for _, spec := range strings.Split(s.fields, ",") {
		parts := strings.Split(spec, ":")
		name, t, flags := parts[0], parts[1], ""
		if len(parts) > 2 {
			flags = parts[2]
		}
		typ := String
		switch t {
		case "t":
			typ = Timestamp
		case "n":
			typ = Number
		case "b":
			typ = Boolean
		case "j":
			typ = JSONValue
		}
		fld := f(name, typ, EmptyTable, name)
		fld.Extract = !strings.Contains(flags, "X")
		fld.Sortable = !strings.Contains(flags, "O")
		fld.Queryable = !strings.Contains(flags, "Q")
		fld.Dotted = strings.Contains(flags, "D")
		e.Fields = append(e.Fields, fld)
		if fld.Extract {
			e.Output = append(e.Output, name)
		}
		if name == "certname" {
			e.Relations = withCertnameRelations(map[string]Relationship{})
		}
	}
	return e.init()
}

func init() {
	Register(Nodes)
	for _, s := range stubs {
		Register(stubEntity(s))
	}
}

// SetCatalogEnvironmentFromReports makes the nodes' catalog_environment
// (output, filters, order_by, on every endpoint and in subqueries) the
// environment of the node's latest report, or null again (PuppetDB's answer
// without catalogs, the default). It is a process-wide setting of
// `reportdb serve --catalog-environment-from-reports`; call it before
// serving.
func SetCatalogEnvironmentFromReports(on bool) {
	f := Nodes.Field("catalog_environment")
	if on {
		f.Table, f.Column = LatestReportTable, "environment"
	} else {
		f.Table, f.Column = NoTable, ""
	}
}

// CatalogEnvironmentFromReports reports whether
// SetCatalogEnvironmentFromReports is on.
func CatalogEnvironmentFromReports() bool {
	return Nodes.Field("catalog_environment").Table == LatestReportTable
}
