// Package puppetreport converts Puppet's own report JSON (report_format 10,
// 11 and 12, as agents send it) into the PuppetDB "store report" wire
// format v8 exactly as PuppetDB's Ruby report processor (the terminus in
// Puppet Server) builds it, after validating the report strictly.
//
// # Conversion (SPEC §8)
//
//   - certname <- host; configuration_version <- Ruby to_s (integer ->
//     decimal, null -> ""); report_format passed through as an integer.
//   - start_time <- time; end_time <- time + metrics.time "total" (0 when
//     absent), added exactly (a float is its exact binary value); every
//     timestamp is printed as Ruby's Time#iso8601(3): milliseconds truncated,
//     the original UTC offset kept, "Z" only when the source said Z.
//   - logs -> {file, line, level, message, source, tags, time}.
//   - metrics flattened to {category, name, value}: categories in document
//     order, each category's rows sorted (stably) by label, bytewise; values
//     printed as Ruby prints the number (integers canonical, floats as
//     Float#to_s).
//   - resources: only statuses with events or skipped == true, in document
//     order, as {skipped, timestamp, resource_type, resource_title, file,
//     line, containment_path, corrective_change, events}; events as
//     {status, timestamp, name, property, new_value, old_value,
//     corrective_change, message} with new_value/old_value = Ruby to_s of
//     desired_value/previous_value (RubyToS).
//   - job_id, transaction_uuid, catalog_uuid, code_id, cached_catalog_status,
//     noop_pending, corrective_change: passed through, null when absent.
//   - producer_timestamp and producer come from Options.
//
// # Validation
//
// The seed schema (report format 10, sections 2.1-2.6) decides: unknown or
// duplicate properties in the report, a log, the metrics object, a metric
// category, a resource status or an event are rejected, as are missing
// required properties, wrong JSON types and values outside the enums
// (status failed/changed/unchanged; log level debug/info/notice/warning/
// err/alert/emerg/crit; event status success/failure/noop/audit;
// cached_catalog_status not_used/explicitly_requested/on_failure;
// resource_type ^[A-Z]). The whole document is validated before anything
// is produced. These allowances, needed by real agents and by the corpus,
// widen the seed:
//
//  1. puppet_version is the real name of the seed's agent_version; exactly
//     one is needed; if both are present they must be equal.
//  2. report_format may be 10, 11 or 12, as an integer or the strings
//     "10"/"11"/"12" (the wire always gets an integer). server_used and
//     master_used (string or null) are accepted with every format: agents
//     of format 10 write master_used, Puppet 6+ server_used, and a Puppet 7
//     server (its http and store report processors) reads an older agent's
//     master_used into server_used and writes server_used with the
//     agent's report_format.
//  3. Event previous_value, desired_value and historical_value may be any
//     JSON value (string, array, object, null, number, boolean).
//  4. Every optional property may be null, meaning absent (real Puppet
//     writes "redacted": null, "provider_used": null, "file": null,
//     "line": null, "evaluation_time": null, ...).
//  5. line (logs and resource statuses) may be an integer, a string of
//     digits or null, and must fit in 32 bits; the wire gets an integer or
//     null.
//  6. time values: YYYY-MM-DDThh:mm:ss, then 0-9 fraction digits, then Z or
//     ±hh:mm (real reports have 9 digits); the date must exist, seconds are
//     00-59, the offset below 24h. "-00:00" is UTC, as in Ruby.
//  7. configuration_version may be null (failed runs before a catalog;
//     corpus) and becomes "".
//  8. Event message and name may be null (corpus: audit events and
//     Pending_reboot events); property stays "string or null".
//  9. corrective_change of resource statuses and events may be absent or
//     null (older agents omit it; corpus); it is then null on the wire.
//  10. metrics may be an empty object (failed runs; corpus) or absent. Its
//     categories are limited to time, resources, events and changes — the
//     only ones real reports (corpus, Puppet 7.23 samples) carry — and each
//     category's "name" must equal its key. Row names and labels are free
//     strings (Puppet 7 adds time rows such as fact_generation and writes
//     zero-valued events rows, unlike the seed's table); rows must be
//     [string, string, number], integers outside "time", all finite, and a
//     time/total that moves end_time out of years 0000-9999 is rejected.
//  11. A status's time is optional (seed) but required when the status is
//     sent (has events or is skipped): the terminus needs it. A status's
//     "resource", when given, must equal its resource_statuses key (seed
//     2.4).
//  12. environment must be a non-null string: the terminus refuses null.
//
// noop and noop_pending stay required booleans (the terminus's fallback
// computation of noop is therefore never needed).
//
// # Where this follows Ruby rather than the corpus's convert.py
//
// All 150 corpus submissions convert byte-for-byte; the reference
// converter differs from MRI Ruby in corners the corpus does not reach,
// and this package follows Ruby there:
//
//   - Float#to_s keeps fixed notation whenever the decimal point falls
//     inside the digits (1234567890123456.7 -> "1234567890123456.8";
//     convert.py writes "1.2345678901234568e+15").
//   - String#inspect escapes C1 controls (U+0080-U+009F) as \u0085 etc.
//   - "-00:00" is UTC (Time.parse's zone_utc?), printed "Z".
//   - Metric values are printed as Ruby's JSON generator prints the parsed
//     number (1e-05 -> 1.0e-05, 1E2 -> 100.0), not as the literal text.
//   - A string line ("9") becomes the integer 9 (PuppetDB requires one).
//
// Puppet 7 writes binary strings in event values (File content checksums
// in desired_value) as base64 in its JSON; the terminus, fed that JSON,
// sends the base64 text, and so does Convert. Only an in-process terminus
// (puppet apply) sees the raw "{sha256}..." value.
package puppetreport

import (
	"fmt"

	"reportdb/jsonv"
)

// Options carries what format 10 does not contain.
type Options struct {
	// ProducerTimestamp is the wire datetime to put in producer_timestamp
	// (the caller decides, e.g. its receive time "2025-01-06T06:00:51.788Z").
	// It must have the form of a report time; it is printed with 3 digits.
	ProducerTimestamp string
	// Producer is the server certname; nil gives JSON null.
	Producer *string
}

// Convert validates a parsed Puppet report (format 10/11/12 JSON, parsed
// with jsonv.Parse) and returns the wire v8 document, its 21 keys in the
// order the terminus sends them (WireKeys). A report that fails validation
// yields a *ValidationError; an unusable Options.ProducerTimestamp yields
// another error (a caller bug, not the client's).
func Convert(doc any, opt Options) (*jsonv.Object, error) {
	pt, err := parseTime(opt.ProducerTimestamp)
	if err != nil {
		return nil, fmt.Errorf("puppetreport: Options.ProducerTimestamp %q %v", opt.ProducerTimestamp, err)
	}
	r, err := validate(doc)
	if err != nil {
		return nil, err
	}
	return r.wire(pt.trunc(), opt.Producer), nil
}
