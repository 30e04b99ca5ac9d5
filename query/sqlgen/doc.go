// Package sqlgen renders a query.Plan as SQL text and arguments for a
// Dialect. It maps the query model's tables to SQL (schema.go: aliases and
// joins; the fields' columns come from the plan) and chooses joins from the
// fields a plan uses; the stored tables and the rollups it reads are
// package schema's, which also renders the SQL that writes them. It imports
// no database driver: the storage packages implement Dialect, and package
// engine is its only caller.
package sqlgen
