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
	"reportdb/jsonv"
	"reportdb/postgres"
	"reportdb/query"
	"reportdb/query/sqlgen"
)

// withoutCopies is a backend whose dialect keeps no copies of the nodes'
// latest reports: latest_report? is answered from reports and certnames'
// pointers, and the stored counts are grouped by node.
type withoutCopies struct{ engine.Backend }

type noCopies struct{ sqlgen.Dialect }

func (noCopies) LatestReports() string { return "" }

func (w withoutCopies) Dialect() sqlgen.Dialect { return noCopies{w.Backend.Dialect()} }

// TestLatestCountsMatchGrouped: event counts by certname, the aggregate
// counts and the events counted by status, over the nodes' latest reports,
// are answered from their copies one row per node (no grouping); every
// answer is the one grouping the reports by node gives, on random reports
// stored out of order, with duplicates, statuses other than Puppet's four
// and retention, under random count_by, counts_filter, order and paging.
func TestLatestCountsMatchGrouped(t *testing.T) {
	ctx := context.Background()
	db, err := postgres.Open(ctx, pgtest.NewDatabase(t), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
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
			if want, got := aggregate(withoutCopies{db}, o), aggregate(db, o); got != want {
				t.Fatalf("%s: aggregate-event-counts %v count_by %q filter %v:\ncopies:  %s\ngrouped: %s",
					step, q, o.CountBy, o.CountsFilter, got, want)
			}
			ext := []any{"extract", []any{[]any{"function", "count"}, "status"}, q, []any{"group_by", "status"}}
			if want, got := answer(t, withoutCopies{db}, query.Events, ext, false), answer(t, db, query.Events, ext, false); got != want {
				t.Fatalf("%s: %v:\ncopies:\n%s\ngrouped:\n%s", step, ext, got, want)
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
	storeInBatches(t, db, r, reports[220:], reports, 20)
	compare("after more reports")
}
