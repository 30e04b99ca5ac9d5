// Package wire decodes PuppetDB "store report" command payloads (wire
// formats 5 to 8) into reportdb.Report, with PuppetDB 7.12.1's semantics:
// older versions are upgraded to v8 by adding defaulted keys, the v8 schema
// is enforced strictly (unknown keys anywhere, missing required keys and
// wrong JSON types reject the whole report), timestamps are truncated to
// milliseconds in UTC, resource events are derived from resources
// (unchanged resources dropped, skipped resources become one synthetic
// "skipped" event, identical events collapsed), and the report hash is
// computed from its eight identity fields.
package wire
