package schema

import "strings"

// Backend is a set of the backends whose migrations create a table.
type Backend uint8

// The backends.
const (
	PostgreSQL Backend = 1 << iota
	SQLite
	Both = PostgreSQL | SQLite
)

func (b Backend) String() string {
	switch b {
	case PostgreSQL:
		return "PostgreSQL"
	case SQLite:
		return "SQLite"
	case Both:
		return "both backends"
	}
	return "no backend"
}

// Tables the code names besides the rollups' (Rollup.Table,
// LatestRollupTable and the distinct tables are declared with their
// definitions).
const (
	Reports        = "reports"
	ResourceEvents = "resource_events"
	Certnames      = "certnames"
	Environments   = "environments"
	// PostgreSQL only: a report's metrics and logs (migration 0004), the
	// copies of the nodes' latest reports (0005), the spans of each day's
	// event and report times (0012, 0015), the reports' lookup keys
	// (0016, 0017, 0020) and the migrations applied
	ReportData        = "report_data"
	LatestReports     = "latest_reports"
	EventTimeBounds   = "event_time_bounds"
	ReportTimeBounds  = "report_time_bounds"
	ReportKeys        = "report_keys"
	ReportKeysArchive = "report_keys_archive"
	ReportKeysLate    = "report_keys_late"
	ReportKeysMerge   = "report_keys_merge"
	Migrations        = "reportdb_schema_migrations"
)

// Table is a stored table, the backends that have it, and the columns of
// it the code names (not necessarily all of its columns).
type Table struct {
	Name    string
	On      Backend
	Columns []string
}

// EventColumns are the columns of each event that a report's
// resource_events lists, in its order (PostgreSQL aggregates them so, and
// reads them so for a page of reports apart: dialect.EventsByIDs).
var EventColumns = []string{"status", "timestamp", "resource_type", "resource_title", "property", "new_value",
	"old_value", "message", "file", "line", "containment_path", "containing_class", "name"}

// Catalogue is every table the code names, with the columns of it the
// definitions of this package name. Its tests check it against the
// migrated schema of each backend and check that the SQL of the stores,
// of sqlgen and of this package names no table outside it: a table added
// by a migration is added here, with the backends that have it.
var Catalogue = func() []Table {
	reportCols := []string{"id", "hash", "certname", "producer_timestamp", "start_time", "end_time", "receive_time",
		"environment", "type", "status", "noop", "noop_pending", "cached_catalog_status",
		"ev_success", "ev_failure", "ev_noop", "ev_skipped", "ev_total"}
	tabs := []Table{
		{Reports, Both, reportCols},
		{ResourceEvents, Both, append([]string{"report_id", "corrective_change"}, EventColumns...)},
		{Certnames, Both, []string{"id", "certname", "latest_report_id", "latest_report_timestamp", "deactivated", "expired"}},
		{Environments, Both, []string{"id", "name"}},
		{ResourceLatest, Both, append(strings.Split(latestKey, ", "), latestColumns()...)},
		{DistinctState, Both, []string{"valid_from"}},
		{ReportData, PostgreSQL, []string{"id", "metrics", "logs"}},
		{LatestReports, PostgreSQL, reportCols},
		{EventTimeBounds, PostgreSQL, []string{"day", "min_ts", "max_ts"}},
		{ReportTimeBounds, PostgreSQL, []string{"day", "min_start", "max_start", "min_end", "max_end"}},
		{ReportKeys, PostgreSQL, []string{"id", "key"}},
		{ReportKeysArchive, PostgreSQL, []string{"id", "key"}},
		{ReportKeysLate, PostgreSQL, []string{"day", "gen"}},
		{ReportKeysMerge, PostgreSQL, []string{"one", "archiving", "merged"}},
		{Migrations, PostgreSQL, []string{"version", "applied_at"}},
	}
	for _, r := range RollupTables {
		cols := append([]string{"width", "bucket"}, r.Cols...)
		tabs = append(tabs, Table{r.Table, Both, append(append(cols, r.Sums()...), "merged")})
	}
	return tabs
}()
