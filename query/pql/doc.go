// Package pql translates PuppetDB's PQL string query language into the
// JSON-array AST that PuppetDB 7.12.1 builds from it (what the root query
// endpoint shows with ast_only=true).
//
// PuppetDB parses PQL with an Instaparse (GLL) grammar and then rewrites the
// parse tree bottom-up. This package is a hand-written parser that follows
// the same grammar and explores every alternative the way a GLL parser does:
// each rule returns all of its parses from a position (memoised per rule and
// position), so the parse that consumes the whole input is found even where
// the grammar is ambiguous, and a failing query reports the furthest input
// position any alternative reached together with every terminal that was
// expected there, as Instaparse does.
//
// Files:
//
//	scan.go      terminals: literal strings, the grammar's regular expressions,
//	             whitespace, failure bookkeeping and memoisation
//	grammar.go   one method per grammar rule, each returning every parse
//	transform.go the deferred parts of PuppetDB's tree rewrite: string
//	             decoding, numbers, and/or chains, subquery arity, the
//	             "Multiple 'limit' clauses" check
//	errors.go    the error types and PuppetDB's parse-error text
//
// The result uses reportdb/jsonv values: strings, bool, jsonv.Number and
// []any.
package pql
