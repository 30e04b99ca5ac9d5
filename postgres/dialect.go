package postgres

import (
	"fmt"
	"strconv"

	"reportdb/query"
	"reportdb/schema/dialect"
)

// Dialect renders SQL for PostgreSQL.
type Dialect struct {
	// RegexCollation, when set, is the collation regular expressions are
	// matched under ("C.utf8": Unicode character classes, as on PuppetDB's
	// C.UTF-8 database, while columns keep the bytewise "C" ordering).
	RegexCollation string
	// TextResults is set when the connections return results as text
	// (the database URL chose pgx's exec or simple_protocol mode, as a
	// pooler in transaction mode needs): a report's events are then
	// built as JSON by PostgreSQL (jsonEventsSQL), not read as records,
	// whose text form the server does not decode.
	TextResults bool
}

// Placeholder implements dialect.Dialect.
func (Dialect) Placeholder(n int) string { return "$" + strconv.Itoa(n) }

func (d Dialect) collate(col string) string {
	if d.RegexCollation == "" {
		return col
	}
	return col + ` COLLATE "` + d.RegexCollation + `"`
}

// Regex implements dialect.Dialect.
func (d Dialect) Regex(col, param string) string { return d.collate(col) + " ~ " + param }

// PathContains implements dialect.Dialect.
func (Dialect) PathContains(col, param string) string { return param + "::text = ANY(" + col + ")" }

// PathRegex implements dialect.Dialect.
func (d Dialect) PathRegex(col, param string) string {
	return "EXISTS (SELECT 1 FROM unnest(" + col + ") AS p(el) WHERE " + d.collate("p.el") + " ~ " + param + ")"
}

// NotDistinct implements dialect.Dialect.
func (Dialect) NotDistinct(a, b string) string { return a + " IS NOT DISTINCT FROM " + b }

// ToChar implements dialect.Dialect (sessions run in UTC).
func (Dialect) ToChar(expr string, t query.Type, format string) string {
	if t == query.Timestamp {
		return "to_char(to_timestamp(" + expr + " / 1000.0), " + format + "::text)"
	}
	return "to_char(" + expr + ", " + format + "::text)"
}

// OrderKey implements dialect.Dialect.
func (Dialect) OrderKey(expr string, _ query.Type) string { return expr }

// Bool implements dialect.Dialect.
func (Dialect) Bool(b bool) any { return b }

// LimitOffset implements dialect.Dialect.
func (Dialect) LimitOffset(limit, offset string) string {
	s := ""
	if limit != "" {
		s += " LIMIT " + limit
	}
	if offset != "" {
		s += " OFFSET " + offset
	}
	return s
}

// Explain implements dialect.Dialect.
func (Dialect) Explain(sql string) string { return "EXPLAIN (ANALYZE, FORMAT JSON) " + sql }

// Column implements dialect.Dialect: a report's metrics and logs live in
// report_data; its resource_events are built from the events.
func (d Dialect) Column(t query.Table, alias, col string) string {
	s, _ := d.BoundedColumn(t, alias, col, nil)
	return s
}

// BoundedColumn implements dialect.BoundedColumns: the columns of a report
// read from report_data and resource_events, whose partitions a statement
// over reports with ids within bound then plans and opens alone.
func (d Dialect) BoundedColumn(t query.Table, alias, col string, bound func(id string) string) (string, bool) {
	if t == query.ReportsTable && alias == "r" {
		if bound == nil {
			bound = func(string) string { return "" }
		}
		switch col {
		case "resource_events":
			if d.TextResults {
				return fmt.Sprintf(jsonEventsSQL, and(bound("e.report_id"))), true
			}
			return fmt.Sprintf(resourceEventsSQL, and(bound("e.report_id"))), true
		case "metrics", "logs":
			return "(SELECT d." + col + " FROM report_data d WHERE d.id = r.id" + and(bound("d.id")) + ")", true
		}
	}
	return alias + "." + col, false
}

// InIDs implements dialect.IDArrays.
func (Dialect) InIDs(col, ph string) string { return col + " = ANY(" + ph + ")" }

// and is " AND " c, or "" for no condition c.
func and(c string) string {
	if c == "" {
		return ""
	}
	return " AND " + c
}

// SortHash implements dialect.Dialect.
func (Dialect) SortHash(text string) string { return "hashtextextended(" + text + ", 0)" }

// LatestReports: latest_reports (migration 0005): reports is partitioned
// by day, and reaching each node's latest report through it probes (or
// scans) every day partition.
func (Dialect) LatestReports() string { return "latest_reports" }

// TitleKey: title_key (migration 0014): a title up to 1,000 bytes is its
// own key; a longer one is keyed by its first 200 characters and its MD5.
func (Dialect) TitleKey() string { return TitleKeyFunc }

// TitleKeyFunc is the SQL function migration 0014 creates.
const TitleKeyFunc = "title_key"

// Capabilities implements dialect.Dialect: migration 0002 keeps the
// rollups and 0018's triggers latest_rollup with latest_reports;
// PostgreSQL joins LATERAL; the day partitions' spans (ReportDaysSQL,
// EventDaysSQL), the report keys (0016) and report_data's columns make
// the other fast paths.
func (d Dialect) Capabilities() dialect.Capabilities {
	return dialect.Capabilities{Rollups: true, LatestRollup: true, Lateral: true,
		ReportDays: d, EventDays: d, ReportKeys: d, IDArrays: d, EventsByIDs: d, BoundedColumns: d}
}

// EventDaysSQL implements dialect.EventDays: event_time_bounds (migration
// 0012) holds each day partition's span of event timestamps, by day
// (report id >> 32: see ids.go).
func (Dialect) EventDaysSQL() string {
	return "SELECT min(day) << 32, (max(day) + 1) << 32 FROM event_time_bounds WHERE max_ts >= $1 AND min_ts <= $2"
}

// EventSpansSQL implements dialect.EventDays: each day's span of event
// timestamps (event_time_bounds).
func (Dialect) EventSpansSQL() string {
	return "SELECT day << 32, (day + 1) << 32, min_ts, max_ts FROM event_time_bounds"
}

// ReportDaysSQL implements dialect.ReportDays: report_time_bounds
// (migration 0015) holds each day partition's span of start and end
// times, by day (report id >> 32: see ids.go).
func (Dialect) ReportDaysSQL(column string) (string, bool) {
	var lo, hi string
	switch column {
	case "start_time":
		lo, hi = "min_start", "max_start"
	case "end_time":
		lo, hi = "min_end", "max_end"
	default:
		return "", false
	}
	return "SELECT day << 32, (day + 1) << 32, " + lo + ", " + hi + " FROM report_time_bounds", true
}

// ReportKeysSQL implements dialect.ReportKeys: the keys of the days
// archived (up to report_keys_merge.merged, migration 0020) are read from
// report_keys_archive, one descent of its index by key per key whatever
// the days kept, and those of the later days (today's, yesterday's until
// maintenance archives it) from report_keys (migration 0016), whose index
// leads with the day (migration 0017): a descent per such day, the days
// of report_time_bounds (migration 0015), and per archived day that has
// received reports since (report_keys_late: late reports, a backfill).
// All in one snapshot, so that a day being archived is read from one or
// the other whole; an id found in both is read twice (AnyID does not
// mind). The days to read are a subquery of their own, so that the
// index is read for them alone: with a condition on each day instead
// (b.day > merged OR b.day IN late days) PostgreSQL read the index for
// every day and filtered afterwards (162 buffers instead of 9 at 10,000
// nodes and 18 days). OFFSET 0 keeps each subquery
// a subquery, so that the plan has that shape whatever the tables'
// statistics.
func (Dialect) ReportKeysSQL() string {
	return "SELECT a.id FROM unnest($1::text[]) k(k)," +
		" LATERAL (SELECT id FROM report_keys_archive WHERE key = hashtextextended(k.k, 0) OFFSET 0) a" +
		" UNION ALL" +
		" SELECT r.id FROM (SELECT day FROM report_time_bounds WHERE day > (SELECT merged FROM report_keys_merge)" +
		" UNION ALL SELECT day FROM report_keys_late WHERE day <= (SELECT merged FROM report_keys_merge) OFFSET 0) d," +
		" unnest($1::text[]) k(k)," +
		" LATERAL (SELECT id FROM report_keys WHERE (id >> 32) = d.day AND key = hashtextextended(k.k, 0) OFFSET 0) r"
}

// AnyID implements dialect.ReportKeys.
func (Dialect) AnyID(id, arg string) string { return id + " = ANY(" + arg + "::bigint[])" }

// IDDays implements dialect.ReportKeys: a report id's day is id >> 32
// (ids.go).
func (Dialect) IDDays(ids []int64) (lo, hi int64) {
	for i, id := range ids {
		l, h := id>>32<<32, (id>>32+1)<<32
		if i == 0 {
			lo, hi = l, h
			continue
		}
		lo, hi = min(lo, l), max(hi, h)
	}
	return lo, hi
}
