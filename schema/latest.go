package schema

// The latest reports' counts kept at write time. Dashboards count the
// events of every node's latest report, by status
//
//	["extract", [["function","count"], "status"], ["=","latest_report?",true], ["group_by","status"]]
//
// and how many nodes have failures, successes, noops and skips in it
// (aggregate-event-counts summarised by certname, the PE console's and
// Puppet Explorer's fleet summary). Read from the copies of the latest
// reports they scan one wide row per node (10,000 at 10,000 nodes, 2.4-7.5
// ms with a 2-3x spread as the copies' pages leave and re-enter the
// buffer cache beside the rest of a large database). latest_rollup keeps
// their sums instead: per report type, environment and status (the
// report's, so that a filter on those is covered too), a column per
// measure below, as deltas compaction merges like the time rollups' (its
// width and bucket are always 0: one bucket). The backends keep it with
// triggers on the table that says which report is a node's latest
// (PostgreSQL: latest_reports, statement-level with transition tables;
// SQLite: certnames.latest_report_id, per row), so every write that moves,
// replaces or drops a node's latest report (ingest, retention, whatever
// comes later) moves the sums with it, with the row versions the write
// actually changed: the invariant is that latest_rollup sums the latest
// reports, whatever order concurrent writers commit in.

// LatestRollupTable is the rollup of the nodes' latest reports.
const LatestRollupTable = "latest_rollup"

// LatestMeasures are latest_rollup's summed columns: name and the value
// one report (alias x) adds. The backends' triggers (postgres and sqlite
// migrations, latest_rollup) compute the same values; the randomized
// tests (engine) compare what is read here with a scan of the reports.
var LatestMeasures = []struct{ Name, Value string }{
	{"ev_success", "x.ev_success"},
	{"ev_failure", "x.ev_failure"},
	{"ev_noop", "x.ev_noop"},
	{"ev_skipped", "x.ev_skipped"},
	{"ev_total", "x.ev_total"},
	// reports with events of a status other than the four (audit, or what
	// a wire report names): their events are read when there are any
	{"other", "CASE WHEN x.ev_total > x.ev_success + x.ev_failure + x.ev_noop + x.ev_skipped THEN 1 ELSE 0 END"},
	// nodes with at least one event of a status, and with any event
	{"failures", "CASE WHEN x.ev_failure > 0 THEN 1 ELSE 0 END"},
	{"skips", "CASE WHEN x.ev_skipped > 0 THEN 1 ELSE 0 END"},
	{"successes", "CASE WHEN x.ev_success > 0 THEN 1 ELSE 0 END"},
	{"noops", "CASE WHEN x.ev_noop > 0 THEN 1 ELSE 0 END"},
	{"nodes", "CASE WHEN x.ev_total > 0 THEN 1 ELSE 0 END"},
}

// LatestSums are the names of LatestMeasures, in order.
var LatestSums = func() []string {
	var names []string
	for _, m := range LatestMeasures {
		names = append(names, m.Name)
	}
	return names
}()

// LatestDims are latest_rollup's dimensions: report columns.
var LatestDims = []string{"type", "environment", "status"}
