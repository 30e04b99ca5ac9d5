// Package sqlgen renders a query.Plan as SQL text and arguments for a
// Dialect. It holds the schema's SQL side (schema.go: table names, aliases
// and joins; the fields' columns come from the plan) and chooses joins from
// the fields a plan uses. It imports no database driver: the storage
// packages implement Dialect, and package engine is its only caller.
package sqlgen
