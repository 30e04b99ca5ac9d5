package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"reportdb"
	"reportdb/engine"
	"reportdb/internal/pgtest"
	"reportdb/postgres"
	"reportdb/query"
	"reportdb/query/opt"
	"reportdb/query/sqlgen"
	"reportdb/schema"
	"reportdb/schema/dialect"
	"reportdb/sqlite"
	"reportdb/store"
)

// Rollups answer covered aggregates; these tests compare every answer with
// the scanning path (the same engine with rollups turned off) on random
// data: reports out of order, duplicates, timestamps on and next to bucket
// boundaries, retention cutting through a day, compaction between steps.

type rollupBackend interface {
	engine.Backend
	store.Compactor
}

// scanning is a backend whose dialect says it keeps no rollups.
type scanning struct{ engine.Backend }

type noRollups struct{ dialect.Dialect }

// Capabilities: none, so that every statement is the plain scan.
func (noRollups) Capabilities() dialect.Capabilities { return dialect.Capabilities{} }

func (s scanning) Dialect() dialect.Dialect { return noRollups{s.Backend.Dialect()} }

func TestRollupsSQLite(t *testing.T) {
	db, err := sqlite.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	testRollups(t, db, 3)
}

func TestRollupsPostgres(t *testing.T) {
	for _, far := range []int{3, 0} {
		// far: 1 in far events has a time anywhere in the three days,
		// so that every day's events span them all (0: none, so that
		// the days' spans of event times, which bound the partitions
		// the scan of an edge reads, are apart)
		t.Run(fmt.Sprintf("far=%d", far), func(t *testing.T) {
			db, err := postgres.Open(context.Background(), pgtest.NewDatabase(t), postgres.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			testRollups(t, db, far)
		})
	}
}

// base is a UTC midnight; the data spans the three days after it.
var base = time.Date(2026, 1, 12, 0, 0, 0, 0, time.UTC).UnixMilli()

// randomTime returns an instant in [base, base+3 days), often on a bucket
// boundary or a millisecond either side of one.
func randomTime(r *rand.Rand) int64 {
	t := base + r.Int63n(3*86400000)
	switch r.Intn(4) {
	case 0:
		w := schema.RollupWidths[r.Intn(len(schema.RollupWidths))]
		t = t - t%w + int64(r.Intn(3)-1)
	}
	return t
}

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.Intn(len(xs))] }

func ptr[T any](v T) *T { return &v }

// randomReport is report i; 1 in far of its events (none for 0) has a
// time anywhere in the three days, the others are of the ten minutes
// before the report's.
func randomReport(r *rand.Rand, i, far int) *reportdb.Report {
	ts := randomTime(r)
	rep := &reportdb.Report{
		Hash:                 fmt.Sprintf("%040x", i),
		Certname:             fmt.Sprintf("node%d.example.com", r.Intn(12)),
		PuppetVersion:        "7.23.0",
		ReportFormat:         8,
		ConfigurationVersion: "1",
		StartTime:            ts - 30000,
		EndTime:              ts - 1000,
		ProducerTimestamp:    ts,
		ReceiveTime:          ts + 500,
		Environment:          pick(r, "production", "qa", "dev"),
		Status:               pick(r, ptr("changed"), ptr("unchanged"), ptr("failed"), nil),
		Noop:                 pick(r, ptr(true), ptr(false), nil),
		NoopPending:          pick(r, ptr(true), ptr(false), nil),
		CachedCatalogStatus:  pick(r, ptr("not_used"), ptr("explicitly_requested"), nil),
		Type:                 pick(r, "agent", "agent", "agent", "plan"),
	}
	for j := r.Intn(5); j > 0; j-- {
		et := ts - int64(r.Intn(600000))
		if far > 0 && r.Intn(far) == 0 {
			et = randomTime(r)
		}
		rep.Events = append(rep.Events, reportdb.Event{
			// mostly the four statuses reports store counts of; now and
			// then one they do not (Puppet's audit, any a wire report names)
			Status:        pick(r, "success", "failure", "noop", "skipped", "success", "failure", "noop", "skipped", "audit", "weird"),
			Timestamp:     et,
			ResourceType:  pick(r, "File", "Service", "Package"),
			ResourceTitle: fmt.Sprintf("/etc/f%d", r.Intn(5)),
			NewValue:      `"a"`,
			OldValue:      `"b"`,
		})
	}
	return rep
}

// rollupQueries are the queries compared: count aggregates on both
// entities, and totals of row queries; each gets random time bounds.
func rollupQueries(r *rand.Rand) []struct {
	e     *query.Entity
	q     any
	total bool
} {
	tsField := func(e *query.Entity) string {
		if e == query.Reports {
			return "producer_timestamp"
		}
		return "timestamp"
	}
	ts := func(v int64) string { return time.UnixMilli(v).UTC().Format("2006-01-02T15:04:05.000Z") }
	bounds := func(e *query.Entity) []any {
		var out []any
		for i := r.Intn(3); i > 0; i-- {
			out = append(out, []any{pick(r, ">", ">=", "<", "<=", "="), tsField(e), ts(randomTime(r))})
		}
		return out
	}
	and := func(xs ...any) any {
		var args []any
		for _, x := range xs {
			switch x := x.(type) {
			case nil:
			case []any:
				if len(x) > 0 {
					if _, ok := x[0].(string); ok {
						args = append(args, x)
						continue
					}
				}
				args = append(args, x...)
			}
		}
		if len(args) == 0 {
			return nil
		}
		return append([]any{"and"}, args...)
	}
	count := []any{"function", "count"}
	var qs []struct {
		e     *query.Entity
		q     any
		total bool
	}
	add := func(e *query.Entity, q any, total bool) {
		qs = append(qs, struct {
			e     *query.Entity
			q     any
			total bool
		}{e, q, total})
	}
	extract := func(cols []any, where any, group ...any) any {
		q := []any{"extract", cols}
		if where != nil {
			q = append(q, where)
		}
		if len(group) > 0 {
			q = append(q, append([]any{"group_by"}, group...))
		}
		return q
	}
	for _, e := range []*query.Entity{query.Reports, query.Events} {
		dim := "status"
		other := pick(r, "environment", "status")
		if e == query.Events {
			other = pick(r, "resource_type", "environment", "status")
		}
		filter := pick[any](r, nil, []any{"=", "environment", "qa"}, []any{"not", []any{"=", "status", "failure"}},
			[]any{"~", "environment", "^prod"}, []any{"null?", "status", false}, []any{"in", "environment", []any{"array", []any{"qa", "dev"}}})
		if e == query.Reports {
			filter = pick[any](r, filter, []any{"=", "noop", true}, []any{"=", "type", "plan"}, []any{"null?", "cached_catalog_status", true})
		}
		day := []any{"function", "to_string", tsField(e), "YYYY-MM-DD"}
		hour := []any{"function", "to_string", tsField(e), "YYYY-MM-DD HH24"}
		if other == dim {
			other = "environment"
		}
		add(e, extract([]any{count, dim}, and(filter, bounds(e)), dim), false)
		add(e, extract([]any{count, dim, other}, and(filter, bounds(e)), dim, other), false)
		add(e, extract([]any{count}, and(filter, bounds(e))), false)
		add(e, extract([]any{count, day}, and(filter, bounds(e)), day), false)
		add(e, extract([]any{count, hour, dim}, and(filter, bounds(e)), hour, dim), false)
		add(e, and(filter, bounds(e)), true)
	}
	// reports counted by time and type only (report_type_rollup): reports
	// per day, include_total of an unfiltered page
	byType := pick[any](r, nil, nil, []any{"=", "type", "agent"}, []any{"not", []any{"=", "type", "plan"}},
		[]any{"in", "type", []any{"array", []any{"plan"}}})
	rday := []any{"function", "to_string", "producer_timestamp", "YYYY-MM-DD"}
	add(query.Reports, extract([]any{count, rday}, and(byType, bounds(query.Reports)), rday), false)
	add(query.Reports, extract([]any{"type", count}, and(byType, bounds(query.Reports)), "type"), false)
	add(query.Reports, and(byType, bounds(query.Reports)), true)
	// failure events per resource (failure_rollup): the dashboard's
	// failing resources and the fleet state's hourly counts
	failure := []any{"=", "status", "failure"}
	title := pick[any](r, nil, []any{"=", "resource_title", "/etc/f1"}, []any{"~", "resource_title", "f[23]$"},
		[]any{"not", []any{"=", "resource_type", "File"}})
	hour := []any{"function", "to_string", "timestamp", "YYYY-MM-DD HH24"}
	add(query.Events, []any{"extract", []any{count, "resource_type", "resource_title"},
		and(failure, title, bounds(query.Events)), []any{"group_by", "resource_type", "resource_title"}}, false)
	add(query.Events, []any{"extract", []any{count, "resource_title", hour},
		and(title, bounds(query.Events), failure), []any{"group_by", "resource_title", hour}}, false)
	add(query.Events, and(failure, title, bounds(query.Events)), true)
	// events by status with a filter on the events' reports only: from the
	// counts stored with each report (statusCountsFromReports)
	latest := []any{"=", "latest_report?", pick(r, true, true, false)}
	onReport := pick[any](r, latest, []any{"and", latest, []any{"=", "certname", fmt.Sprintf("node%d.example.com", r.Intn(12))}},
		[]any{"and", latest, []any{"=", "environment", "qa"}}, []any{"=", "certname", fmt.Sprintf("node%d.example.com", r.Intn(12))},
		[]any{"or", []any{"=", "report", fmt.Sprintf("%040x", r.Intn(400))}, []any{"=", "report", fmt.Sprintf("%040x", r.Intn(400))}},
		[]any{"not", latest}, nil)
	add(query.Events, extract([]any{count, "status"}, onReport, "status"), false)
	add(query.Events, extract([]any{"status", count}, onReport, "status"), false)
	add(query.Events, extract([]any{count}, onReport), false)
	return qs
}

// answer runs a query and returns its rows (sorted: aggregates have no
// order) or its total.
func answer(t *testing.T, b engine.Backend, e *query.Entity, q any, total bool) string {
	t.Helper()
	p, err := query.Compile(e, q, &query.Options{})
	if err != nil {
		t.Fatalf("%v: %v", q, err)
	}
	if !total {
		rows := pageRows(t, engine.New(b), p)
		slices.Sort(rows)
		return strings.Join(rows, "\n")
	}
	var n int64
	err = engine.New(b).Query(context.Background(), p, true, func(_ *engine.Rows, tot int64) error {
		n = tot
		return nil
	})
	if err != nil {
		t.Fatalf("%v: %v", q, err)
	}
	return fmt.Sprint(n)
}

// storeInBatches stores rs in batches of 1 to most reports, a quarter of
// them with a duplicate within the batch and one of a report of all
// (stored or about to be).
func storeInBatches(t *testing.T, db store.Backend, r *rand.Rand, rs, all []*reportdb.Report, most int) {
	t.Helper()
	for len(rs) > 0 {
		n := min(len(rs), 1+r.Intn(most))
		batch := rs[:n]
		if r.Intn(4) == 0 { // a duplicate within the batch and of a stored one
			batch = append(slices.Clone(batch), batch[0], all[r.Intn(len(all))])
		}
		if _, _, err := db.StoreReports(context.Background(), batch); err != nil {
			t.Fatal(err)
		}
		rs = rs[n:]
	}
}

func testRollups(t *testing.T, db rollupBackend, far int) {
	ctx := context.Background()
	r := rand.New(rand.NewSource(time.Now().UnixNano()))
	seed := r.Int63()
	r = rand.New(rand.NewSource(seed))
	t.Logf("seed %d", seed)

	var reports []*reportdb.Report
	for i := 0; i < 400; i++ {
		reports = append(reports, randomReport(r, i, far))
	}
	ingest := func(rs []*reportdb.Report) { storeInBatches(t, db, r, rs, reports, 25) }
	compare := func(step string) {
		t.Helper()
		covered := 0
		for round := 0; round < 8; round++ {
			for _, c := range rollupQueries(r) {
				want := answer(t, scanning{db}, c.e, c.q, c.total)
				got := answer(t, db, c.e, c.q, c.total)
				if got != want {
					q, _ := json.Marshal(c.q)
					t.Fatalf("%s: %s %s (total %v):\nrollup:\n%s\nscan:\n%s", step, c.e.Name, q, c.total, got, want)
				}
				if want != "" && want != "0" {
					covered++
				}
			}
		}
		if covered == 0 {
			t.Fatalf("%s: every answer was empty", step)
		}
	}
	// out of order: shuffled
	first := slices.Clone(reports[:300])
	r.Shuffle(len(first), func(i, j int) { first[i], first[j] = first[j], first[i] })
	ingest(first)
	compare("after ingest")
	if _, err := db.CompactRollups(ctx); err != nil {
		t.Fatal(err)
	}
	compare("after compaction")
	// retention through the middle of the second day (not on a bucket
	// boundary), then more reports, some of them older than the cutoff
	cutoff := base + 86400000 + 13*3600000 + 7*60000 + 123
	if _, err := db.DeleteReportsBefore(ctx, cutoff); err != nil {
		t.Fatal(err)
	}
	compare("after retention")
	ingest(reports[300:])
	compare("after more reports")
	if _, err := db.CompactRollups(ctx); err != nil {
		t.Fatal(err)
	}
	compare("after compaction again")
	// a check on the check: the scanning path is not the rollup path
	p, _ := query.Compile(query.Reports, []any{"extract", []any{[]any{"function", "count"}}}, &query.Options{})
	withRollup := chosen(t, db.Dialect(), p)
	without := chosen(t, scanning{db}.Dialect(), p)
	if !strings.Contains(withRollup.SQL, "report_type_rollup") || strings.Contains(without.SQL, "rollup") {
		t.Fatalf("rollup %q / scan %q", withRollup.SQL, without.SQL)
	}
	// counts by a dimension report_type_rollup does not keep read report_rollup
	p, _ = query.Compile(query.Reports, []any{"extract", []any{[]any{"function", "count"}, "status"},
		[]any{"=", "type", "agent"}, []any{"group_by", "status"}}, &query.Options{})
	withRollup = chosen(t, db.Dialect(), p)
	if !strings.Contains(withRollup.SQL, "report_rollup") || strings.Contains(withRollup.SQL, "report_type_rollup") {
		t.Fatalf("reports by status: %q", withRollup.SQL)
	}
	p, _ = query.Compile(query.Events, []any{"extract", []any{[]any{"function", "count"}, "resource_title"},
		[]any{"=", "status", "failure"}, []any{"group_by", "resource_title"}}, &query.Options{})
	withRollup = chosen(t, db.Dialect(), p)
	if !strings.Contains(withRollup.SQL, "failure_rollup") {
		t.Fatalf("failures by title did not read failure_rollup: %q", withRollup.SQL)
	}
	p, _ = query.Compile(query.Events, []any{"extract", []any{[]any{"function", "count"}, "status"},
		[]any{"=", "latest_report?", true}, []any{"group_by", "status"}}, &query.Options{})
	withRollup = chosen(t, db.Dialect(), p)
	without = chosen(t, scanning{db}.Dialect(), p)
	if !strings.Contains(withRollup.SQL, "ev_failure") || strings.Contains(without.SQL, "ev_failure") {
		t.Fatalf("latest events by status: stored counts %q / scan %q", withRollup.SQL, without.SQL)
	}
}

// chosen is the rows statement the optimiser chooses for p on d.
func chosen(t *testing.T, d dialect.Dialect, p *query.Plan) *sqlgen.Built {
	t.Helper()
	a, err := opt.Choose(d, p, opt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return a.Rows
}
