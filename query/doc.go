// Package query turns PuppetDB v4 queries (the JSON AST, after PQL has been
// translated) plus their paging parameters into a validated, typed Plan.
// It knows the entities as tables of fields (entity.go), reproduces
// PuppetDB 7.12.1's validation order and error texts, and never touches a
// database: package sqlgen renders a Plan as SQL for a dialect.
package query
