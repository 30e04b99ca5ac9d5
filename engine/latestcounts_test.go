package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"reportdb"
	"reportdb/engine"
	"reportdb/internal/pgtest"
	"reportdb/jsonv"
	"reportdb/postgres"
	"reportdb/query"
	"reportdb/schema"
	"reportdb/schema/dialect"
	"reportdb/sqlite"
	"reportdb/store"
)

// withoutCopies is a backend whose dialect keeps no copies of the nodes'
// latest reports: latest_report? is answered from reports and certnames'
// pointers, and the stored counts are grouped by node.
type withoutCopies struct{ engine.Backend }

type noCopies struct{ dialect.Dialect }

func (noCopies) LatestReports() string { return "" }

// Capabilities: the rollups without latest_rollup, and no other fast path.
func (d noCopies) Capabilities() dialect.Capabilities {
	return dialect.Capabilities{Rollups: true, Lateral: d.Dialect.Capabilities().Lateral}
}

func (w withoutCopies) Dialect() dialect.Dialect { return noCopies{w.Backend.Dialect()} }

// withoutLatestRollup is a backend whose dialect reads the copies of the
// nodes' latest reports but not latest_rollup's sums of them.
type withoutLatestRollup struct{ engine.Backend }

type noLatestRollup struct{ dialect.Dialect }

// Capabilities: as noCopies'. Lateral is the backend's own, so that the
// copies' and the grouped statements are the ones its dialect would run
// without latest_rollup.
func (d noLatestRollup) Capabilities() dialect.Capabilities {
	return dialect.Capabilities{Rollups: true, Lateral: d.Dialect.Capabilities().Lateral}
}

func (w withoutLatestRollup) Dialect() dialect.Dialect { return noLatestRollup{w.Backend.Dialect()} }

// TestLatestCountsMatchGrouped: event counts by certname, the aggregate
// counts and the events counted by status, over the nodes' latest reports,
// are answered from their copies one row per node (no grouping), and the
// aggregate counts and counts by status from latest_rollup's sums; every
// answer is the one grouping the reports by node gives, on random reports
// stored out of order, with duplicates, statuses other than Puppet's four,
// retention and compaction, under random count_by, counts_filter, filters
// on the rollup's dimensions and others, order and paging.
func TestLatestCountsMatchGrouped(t *testing.T) {
	t.Run("postgres", func(t *testing.T) {
		db, err := postgres.Open(context.Background(), pgtest.NewDatabase(t), postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		testLatestCounts(t, db)
	})
	t.Run("sqlite", func(t *testing.T) {
		// no copies: the scans group the reports by node; the sums are
		// kept by certnames' triggers
		db, err := sqlite.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		testLatestCounts(t, db)
	})
}

func testLatestCounts(t *testing.T, db rollupBackend) {
	ctx := context.Background()
	seed := time.Now().UnixNano()
	r := rand.New(rand.NewSource(seed))
	t.Logf("seed %d", seed)
	var reports []*reportdb.Report
	for i := 0; i < 300; i++ {
		reports = append(reports, randomReport(r, i, 3))
	}
	counts := func(b engine.Backend, o *query.Options) string {
		t.Helper()
		p, err := query.CompileEventCounts(o, false)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		err = engine.New(b).EventCounts(ctx, p, false, func(rows *engine.Rows, _ int64) error {
			var buf []byte
			for rows.Next() {
				if buf, err = rows.AppendJSON(buf[:0]); err != nil {
					return err
				}
				out = append(out, string(buf))
			}
			return rows.Err()
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(o.OrderBy) == 0 {
			slices.Sort(out)
		}
		return strings.Join(out, "\n")
	}
	aggregate := func(b engine.Backend, o *query.Options) string {
		t.Helper()
		ap, err := query.CompileAggregate(o, false)
		if err != nil {
			t.Fatal(err)
		}
		res, err := engine.New(b).AggregateEventCounts(ctx, ap)
		if err != nil {
			t.Fatal(err)
		}
		j, _ := json.Marshal(res)
		return string(j)
	}
	cols := []string{"failures", "skips", "successes", "noops", "certname"}
	compare := func(step string) {
		t.Helper()
		nonEmpty := 0
		for i := 0; i < 60; i++ {
			latest := []any{"=", "latest_report?", true}
			q := pick[any](r, latest, []any{"and", latest, []any{"=", "environment", "qa"}},
				[]any{"and", []any{"or", []any{"~", "environment", "^pr"}, []any{"=", "environment", "qa"}}, latest},
				[]any{"and", latest, []any{"not", []any{"=", "environment", "qa"}}},
				[]any{"and", []any{"=", "certname", fmt.Sprintf("node%d.example.com", r.Intn(12))}, latest})
			o := &query.Options{Query: q, SummarizeBy: "certname", CountBy: pick(r, "", "resource", "certname")}
			if r.Intn(2) == 0 {
				o.CountsFilter = []any{pick(r, ">", ">=", "=", "<"), pick(r, "failures", "successes", "noops", "skips"),
					jsonv.Number(fmt.Sprint(r.Intn(3)))}
			}
			if r.Intn(2) == 0 {
				o.OrderBy = []query.OrderSpec{{Field: pick(r, cols...), Desc: r.Intn(2) == 0}, {Field: "certname"}}
				o.Limit, o.Offset = int64(1+r.Intn(8)), int64(r.Intn(4))
			}
			want, got := counts(withoutCopies{db}, o), counts(db, o)
			if got != want {
				t.Fatalf("%s: event-counts %v count_by %q filter %v order %v limit %d offset %d:\ncopies:\n%s\ngrouped:\n%s",
					step, q, o.CountBy, o.CountsFilter, o.OrderBy, o.Limit, o.Offset, got, want)
			}
			if got != "" {
				nonEmpty++
			}
			o.OrderBy, o.Limit, o.Offset = nil, 0, 0
			want = aggregate(withoutCopies{db}, o)
			for name, b := range map[string]engine.Backend{"rollup": db, "copies": withoutLatestRollup{db}} {
				if got := aggregate(b, o); got != want {
					t.Fatalf("%s: aggregate-event-counts %v count_by %q filter %v:\n%s: %s\ngrouped: %s",
						step, q, o.CountBy, o.CountsFilter, name, got, want)
				}
			}
			for _, ext := range [][]any{
				{"extract", []any{[]any{"function", "count"}, "status"}, q, []any{"group_by", "status"}},
				{"extract", []any{[]any{"function", "count"}}, q},
			} {
				want := answer(t, withoutCopies{db}, query.Events, ext, false)
				for name, b := range map[string]engine.Backend{"rollup": db, "copies": withoutLatestRollup{db}} {
					if got := answer(t, b, query.Events, ext, false); got != want {
						t.Fatalf("%s: %v:\n%s:\n%s\ngrouped:\n%s", step, ext, name, got, want)
					}
				}
			}
		}
		if nonEmpty == 0 {
			t.Fatalf("%s: every answer was empty", step)
		}
	}
	first := slices.Clone(reports[:220])
	r.Shuffle(len(first), func(i, j int) { first[i], first[j] = first[j], first[i] })
	storeInBatches(t, db, r, first, reports, 20)
	compare("after ingest")
	if _, err := db.DeleteReportsBefore(ctx, base+86400000+13*3600000); err != nil {
		t.Fatal(err)
	}
	compare("after retention")
	if _, err := db.CompactRollups(ctx); err != nil {
		t.Fatal(err)
	}
	compare("after compaction")
	storeInBatches(t, db, r, reports[220:], reports, 20)
	compare("after more reports")
}

// TestLatestRollupConcurrentWriters: latest_rollup sums the rows of
// latest_reports (migration 0018's triggers) after batches of the same
// nodes stored by several writers at once, out of order and with
// duplicates, while retention deletes old reports and drops whole days:
// each write adds and subtracts the row versions it actually changed, so
// no interleaving counts a node's latest report twice or not at all. The
// answers read from the sums are then those of grouping the reports.
func TestLatestRollupConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	db, err := postgres.Open(ctx, pgtest.NewDatabase(t), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewSource(seed))
	var reports []*reportdb.Report
	for i := 0; i < 600; i++ {
		reports = append(reports, randomReport(r, i, 3))
	}
	r.Shuffle(len(reports), func(i, j int) { reports[i], reports[j] = reports[j], reports[i] })
	const writers = 4
	errs := make(chan error, writers+1)
	for w := 0; w < writers; w++ {
		go func(w int, r *rand.Rand) {
			var mine []*reportdb.Report
			for i := w; i < len(reports); i += writers {
				mine = append(mine, reports[i])
			}
			for len(mine) > 0 {
				n := min(len(mine), 1+r.Intn(15))
				batch := mine[:n]
				if r.Intn(4) == 0 {
					batch = append(slices.Clone(batch), reports[r.Intn(len(reports))])
				}
				if _, _, err := db.StoreReports(ctx, batch); err != nil {
					errs <- err
					return
				}
				mine = mine[n:]
			}
			errs <- nil
		}(w, rand.New(rand.NewSource(seed+int64(w))))
	}
	go func() {
		// retention keeps moving, by rows and by whole days
		for _, cutoff := range []int64{base + 6*3600000, base + 86400000, base + 86400000 + 13*3600000} {
			time.Sleep(20 * time.Millisecond)
			if _, err := db.DeleteReportsBefore(ctx, cutoff); err != nil && !errors.Is(err, store.ErrBusy) {
				errs <- err
				return
			}
		}
		errs <- nil
	}()
	for i := 0; i < writers+1; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for _, step := range []string{"after the writers", "after compaction"} {
		if step == "after compaction" {
			if _, err := db.CompactRollups(ctx); err != nil {
				t.Fatal(err)
			}
		}
		var diff, rows int64
		err := db.Snapshot(ctx, func(q store.Querier) error {
			// the sums per combination, and the same measures of the
			// copies (schema.LatestMeasures), combinations of zeros left out
			var sumCols, scanCols, nonZero, scanNonZero []string
			for _, m := range schema.LatestMeasures {
				sumCols = append(sumCols, "sum("+m.Name+") AS "+m.Name)
				scanCols = append(scanCols, "sum("+m.Value+") AS "+m.Name)
				nonZero = append(nonZero, "sum("+m.Name+") <> 0")
				scanNonZero = append(scanNonZero, "sum("+m.Value+") <> 0")
			}
			sums := `SELECT type, environment, status, ` + strings.Join(sumCols, ", ") +
				` FROM latest_rollup GROUP BY 1, 2, 3 HAVING ` + strings.Join(nonZero, " OR ")
			scan := `SELECT x.type, x.environment, x.status, ` + strings.Join(scanCols, ", ") +
				` FROM latest_reports x GROUP BY 1, 2, 3 HAVING ` + strings.Join(scanNonZero, " OR ")
			rs, err := q.Query(ctx, store.Statement{SQL: `SELECT (SELECT count(*) FROM ((` + sums + ` EXCEPT ALL ` + scan + `)
				UNION ALL (` + scan + ` EXCEPT ALL ` + sums + `)) d), (SELECT count(*) FROM (` + scan + `) s)`})
			if err != nil {
				return err
			}
			defer rs.Close()
			if rs.Next() {
				err = rs.Scan(&diff, &rows)
			}
			if err == nil {
				err = rs.Err()
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if rows == 0 {
			t.Fatalf("%s: latest_reports counts nothing", step)
		}
		if diff != 0 {
			t.Fatalf("%s: latest_rollup and latest_reports differ in %d of %d sums", step, diff, rows)
		}
		for _, q := range []any{[]any{"=", "latest_report?", true},
			[]any{"and", []any{"=", "latest_report?", true}, []any{"=", "environment", "qa"}}} {
			ext := []any{"extract", []any{[]any{"function", "count"}, "status"}, q, []any{"group_by", "status"}}
			if want, got := answer(t, withoutCopies{db}, query.Events, ext, false), answer(t, db, query.Events, ext, false); got != want {
				t.Fatalf("%s: %v:\nrollup:\n%s\ngrouped:\n%s", step, ext, got, want)
			}
		}
	}
}
