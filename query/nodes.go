package query

import "strings"

// Nodes answers /pdb/query/v4/nodes from what reportdb knows: the node's
// activity and its latest report. Fact and catalog fields are always null
// (reportdb stores reports only).
var Nodes = (&Entity{
	Name: "nodes",
	Fields: []*Field{
		f("latest_report_corrective_change", NullBoolean, "CAST(NULL AS BOOLEAN)"),
		f("deactivated", Timestamp, "c.deactivated"),
		f("expired", Timestamp, "c.expired"),
		f("report_environment", String, "lr.environment"),
		nn("certname", String, "c.certname"),
		f("facts_timestamp", Timestamp, "CAST(NULL AS BIGINT)"),
		f("facts_environment", String, "CAST(NULL AS TEXT)"),
		f("cached_catalog_status", String, "lr.cached_catalog_status"),
		f("latest_report_status", String, "lr.status"),
		f("latest_report_hash", String, "lr.hash"),
		f("catalog_timestamp", Timestamp, "CAST(NULL AS BIGINT)"),
		f("latest_report_noop_pending", Boolean, "lr.noop_pending"),
		f("report_timestamp", Timestamp, "lr.end_time"),
		f("latest_report_noop", Boolean, "lr.noop"),
		f("catalog_environment", String, "CAST(NULL AS TEXT)"),
		f("latest_report_job_id", String, "lr.job_id"),
	},
	Output: []string{"deactivated", "latest_report_hash", "facts_environment", "cached_catalog_status",
		"report_environment", "latest_report_corrective_change", "catalog_environment", "facts_timestamp",
		"latest_report_noop", "expired", "latest_report_noop_pending", "report_timestamp", "certname",
		"catalog_timestamp", "latest_report_job_id", "latest_report_status"},
	From:      "certnames c LEFT JOIN reports lr ON lr.id = c.latest_report_id",
	Certname:  "c.certname",
	Relations: withCertnameRelations(map[string]Relationship{}),
	Exists:    true,
}).init()

// stub describes an entity PuppetDB has and reportdb does not store.
type stub struct {
	name   string
	fields string // name:type, comma separated; type s(tring), t(imestamp), n(umber), b(oolean)
}

var stubs = []stub{
	{"facts", "certname:s,environment:s,name:s,value:s"},
	{"fact_contents", "certname:s,environment:s,name:s,path:s,value:s"},
	{"fact_paths", "path:s,type:s"},
	{"factsets", "certname:s,environment:s,facts:s,hash:s,producer:s,producer_timestamp:t,timestamp:t,trusted:s"},
	{"catalogs", "catalog_uuid:s,certname:s,code_id:s,edges:s,environment:s,hash:s,job_id:s,producer:s,producer_timestamp:t,resources:s,transaction_uuid:s,version:s"},
	{"resources", "certname:s,environment:s,exported:b,file:s,line:n,parameters:s,resource:s,tags:s,title:s,type:s"},
	{"edges", "certname:s,relationship:s,source_title:s,source_type:s,target_title:s,target_type:s"},
	{"inventory", "certname:s,environment:s,facts:s,timestamp:t,trusted:s"},
	{"packages", "package_name:s,provider:s,version:s"},
	{"package_inventory", "certname:s,package_name:s,provider:s,version:s"},
	{"catalog_inputs", "catalog_uuid:s,certname:s,inputs:s,producer_timestamp:t"},
	{"catalog_input_contents", "catalog_uuid:s,certname:s,content:s,type:s,producer_timestamp:t"},
}

// stubEntity builds an always-empty entity with the given fields, so that
// queries naming it validate like PuppetDB and return no rows.
func stubEntity(s stub) *Entity {
	e := &Entity{Name: s.name, Relations: map[string]Relationship{}}
	var cols []string
	for _, spec := range strings.Split(s.fields, ",") {
		name, t, _ := strings.Cut(spec, ":")
		typ, sqlType := String, "TEXT"
		switch t {
		case "t":
			typ, sqlType = Timestamp, "BIGINT"
		case "n":
			typ, sqlType = Number, "BIGINT"
		case "b":
			typ, sqlType = Boolean, "BOOLEAN"
		}
		e.Fields = append(e.Fields, f(name, typ, "x."+name))
		e.Output = append(e.Output, name)
		cols = append(cols, "CAST(NULL AS "+sqlType+") AS "+name)
		if name == "certname" {
			e.Certname = "x.certname"
		}
	}
	e.From = "(SELECT " + strings.Join(cols, ", ") + " WHERE 1 = 0) x"
	if e.Certname != "" {
		e.Relations = withCertnameRelations(map[string]Relationship{})
	}
	return e.init()
}

func init() {
	Register(Nodes)
	for _, s := range stubs {
		Register(stubEntity(s))
	}
}
