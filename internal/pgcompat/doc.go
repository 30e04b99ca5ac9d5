// Package pgcompat emulates the PostgreSQL 15 and Joda-Time/clj-time
// behaviours that PuppetDB 7.12.1's query answers depend on, so that a
// backend that is not PostgreSQL (the embedded SQLite store) can answer byte
// for byte like PuppetDB on PostgreSQL (database locale C.UTF-8, session
// time zone UTC).
//
//   - ParseTimestamp: PuppetDB's lenient parsing of timestamp strings in
//     queries (clj-time formatters, tried in PuppetDB's order).
//   - ToCharTimestamp, ToCharNumber, ToCharNumberErr: PostgreSQL to_char()
//     (used by the query function to_string).
//   - AvgText: the numeric text of avg() over integer columns.
//   - CompileRegex, TranslateRegex: PostgreSQL ARE (the ~ operator) to Go
//     regexp, with PostgreSQL's error messages.
//
// Standard library only, and internal: a leaf library of the module (the
// query compiler validates regular expressions and parses timestamps with
// it, the SQLite store registers its functions, the engine renders avg(),
// the HTTP API matches the node rows it merges from an upstream PuppetDB),
// not an API for others.
package pgcompat
