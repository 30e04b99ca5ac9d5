// Package query turns PuppetDB v4 queries plus their paging options into a
// validated, typed Plan. The query arrives as the JSON AST (PQL having been
// translated by package pql), is decoded into typed nodes by package ast,
// and is planned here against the entities, which are described as data:
// each field names its type, the table and column that hold it, and where
// it may be used (entity.go, nodes.go). The planner reproduces PuppetDB
// 7.12.1's validation order and error texts. It never touches a database
// and writes no SQL: package sqlgen renders a Plan for a dialect and
// package engine runs it.
package query
