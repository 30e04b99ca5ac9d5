package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"reportdb"
	"reportdb/engine"
	"reportdb/internal/pgtest"
	"reportdb/jsonv"
	"reportdb/postgres"
	"reportdb/query"
	"reportdb/query/sqlgen"
	"reportdb/store"
)

// joined is a backend whose dialect is only a sqlgen.Dialect: pages of
// events join their reports (and nothing is narrowed or keyed), the
// plainest statement of every query.
type joined struct{ engine.Backend }

type plainDialect struct{ sqlgen.Dialect }

func (j joined) Dialect() sqlgen.Dialect { return plainDialect{j.Backend.Dialect()} }

// lookups counts the statements that read reports by id (the split's
// second statement) run through it.
type lookups struct {
	engine.Backend
	n *atomic.Int64
}

func (l lookups) Query(ctx context.Context, st store.Statement) (store.Rows, error) {
	if strings.Contains(st.SQL, "r.id = ANY(") {
		l.n.Add(1)
	}
	return l.Backend.Query(ctx, st)
}

func (l lookups) Snapshot(ctx context.Context, fn func(store.Querier) error) error {
	return l.Backend.Snapshot(ctx, func(q store.Querier) error {
		return fn(lookups{Backend: l.Backend, n: l.n}.on(q))
	})
}

// on counts the statements run on q.
func (l lookups) on(q store.Querier) store.Querier { return countingQuerier{q, l.n} }

type countingQuerier struct {
	store.Querier
	n *atomic.Int64
}

func (c countingQuerier) Query(ctx context.Context, st store.Statement) (store.Rows, error) {
	if strings.Contains(st.SQL, "r.id = ANY(") {
		c.n.Add(1)
	}
	return c.Querier.Query(ctx, st)
}

// TestSplitEventPagesMatchJoin: a page of events whose filter and order
// read the events alone is read in two statements on PostgreSQL (the
// events, then their reports by id: sqlgen.SplitReports), and answers
// exactly what the join answers: the same rows in the same order, the
// same total, for random events over five days (reports stored out of
// order and some twice, events whose times lie days from their report's),
// filters on every kind of event column, orders, limits, offsets,
// projections with and without the reports' columns, and after retention
// drops the oldest days (reports then missing for no event).
func TestSplitEventPagesMatchJoin(t *testing.T) {
	ctx := context.Background()
	db, err := postgres.Open(ctx, pgtest.NewDatabase(t), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	seed := time.Now().UnixNano()
	r := rand.New(rand.NewSource(seed))
	t.Logf("seed %d", seed)

	// event times are distinct (ms), so that every order below is total
	day := int64(86_400_000)
	start := time.Now().UTC().Truncate(24*time.Hour).UnixMilli() - 4*day
	used := map[int64]bool{}
	distinctTime := func(t int64) int64 {
		for used[t] {
			t++
		}
		used[t] = true
		return t
	}
	var reports []*reportdb.Report
	for i := 0; i < 300; i++ {
		ts := start + r.Int63n(5*day)
		rep := &reportdb.Report{
			Hash:                 fmt.Sprintf("%040x", i+1),
			Certname:             fmt.Sprintf("node%d.example.com", r.Intn(15)),
			PuppetVersion:        "7.23.0",
			ReportFormat:         8,
			ConfigurationVersion: fmt.Sprint(r.Intn(1000)),
			StartTime:            ts - 30000,
			EndTime:              ts - 1000,
			ProducerTimestamp:    ts,
			ReceiveTime:          ts + 500,
			Environment:          pick(r, "production", "qa", "dev"),
			Status:               pick(r, ptr("changed"), ptr("unchanged"), ptr("failed")),
			Type:                 "agent",
		}
		for j := r.Intn(6); j > 0; j-- {
			et := ts - int64(r.Intn(600000))
			if r.Intn(6) == 0 {
				et = start + r.Int63n(5*day) // far from its report's day
			}
			ev := reportdb.Event{
				Status:          pick(r, "success", "failure", "noop", "skipped"),
				Timestamp:       distinctTime(et),
				ResourceType:    pick(r, "File", "Service", "Package"),
				ResourceTitle:   pick(r, "/etc/nginx/nginx.conf", "/etc/nginx/sites/a", "/etc/hosts", "ntp", "Ünïcode \"x\""),
				Property:        pick(r, ptr("ensure"), ptr("content"), nil),
				NewValue:        pick(r, `"file"`, `{"b":1,"a":[2,3.50]}`, `null`, `12345678901234567890`),
				OldValue:        pick(r, `"absent"`, `""`, `null`),
				Message:         pick(r, ptr("changed"), nil),
				File:            pick(r, ptr("/etc/puppet/site.pp"), nil),
				ContainingClass: pick(r, ptr("Nginx"), nil),
				ContainmentPath: pick(r, []string{"Stage[main]", "Nginx", "File[/etc/nginx]"}, nil, []string{}),
			}
			if r.Intn(2) == 0 {
				ev.Line = ptr(int64(r.Intn(300)))
			}
			rep.Events = append(rep.Events, ev)
		}
		reports = append(reports, rep)
	}
	shuffled := slices.Clone(reports)
	r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	for len(shuffled) > 0 {
		n := min(len(shuffled), 1+r.Intn(20))
		batch := shuffled[:n]
		if r.Intn(3) == 0 { // a duplicate of a stored report
			batch = append(slices.Clone(batch), reports[r.Intn(len(reports))])
		}
		if _, _, err := db.StoreReports(ctx, batch); err != nil {
			t.Fatal(err)
		}
		shuffled = shuffled[n:]
	}

	ts := func(v int64) string { return time.UnixMilli(v).UTC().Format("2006-01-02T15:04:05.000Z") }
	filters := []func() any{
		func() any { return []any{"~", "resource_title", "^/etc/nginx/"} },
		func() any { return []any{"=", "status", pick(r, "failure", "success", "noop")} },
		func() any {
			return []any{"and", []any{">", "timestamp", ts(start + r.Int63n(5*day))}, []any{"<=", "timestamp", ts(start + 5*day)}}
		},
		func() any { return []any{"=", "resource_title", "Ünïcode \"x\""} },
		func() any { return []any{"null?", "property", r.Intn(2) == 0} },
		func() any { return []any{">", "line", r.Intn(300)} },
		func() any { return []any{"=", "containment_path", "Nginx"} },
		func() any { return []any{"~", "containment_path", "^File"} },
		func() any {
			return []any{"or", []any{"=", "resource_type", "Service"}, []any{"not", []any{"=", "status", "success"}}}
		},
		func() any { return []any{"in", "status", []any{"array", []any{"failure", "noop"}}} },
		func() any { return []any{"=", "new_value", "file"} },
		func() any { return nil },
	}
	orders := [][]query.OrderSpec{
		{{Field: "timestamp", Desc: true}},
		{{Field: "timestamp"}},
		{{Field: "resource_type"}, {Field: "timestamp", Desc: true}},
		{{Field: "line", Desc: true}, {Field: "timestamp"}},
	}
	projections := [][]any{
		nil,
		{"certname", "timestamp", "status", "report"},
		{"timestamp", "environment", "resource_title"},
		{"run_end_time", "report_receive_time", "configuration_version", "run_start_time", "corrective_change", "timestamp"},
	}
	n := &atomic.Int64{}
	split := lookups{Backend: db, n: n}
	compare := func(step string) {
		t.Helper()
		nonEmpty := 0
		for round := 0; round < 150; round++ {
			q := filters[r.Intn(len(filters))]()
			if proj := projections[r.Intn(len(projections))]; proj != nil {
				x := []any{"extract", proj}
				if q != nil {
					x = append(x, q)
				}
				q = x
			}
			o := &query.Options{OrderBy: orders[r.Intn(len(orders))], OrderBySet: true,
				Limit: pick[int64](r, 1, 7, 50, 1000), LimitSet: true}
			if r.Intn(3) == 0 {
				o.Offset, o.OffsetSet = pick[int64](r, 3, 40, 5000), true
			}
			total := r.Intn(3) == 0
			want, wantTotal := pageOf(t, joined{db}, q, o, total)
			got, gotTotal := pageOf(t, split, q, o, total)
			if got != want || gotTotal != wantTotal {
				qs, _ := json.Marshal(q)
				t.Fatalf("%s: %s limit %d offset %d order %v: total %d, want %d\nsplit:\n%s\njoin:\n%s",
					step, qs, o.Limit, o.Offset, o.OrderBy, gotTotal, wantTotal, got, want)
			}
			if want != "" {
				nonEmpty++
			}
		}
		if nonEmpty < 50 {
			t.Fatalf("%s: only %d of 150 pages had rows", step, nonEmpty)
		}
	}
	compare("after ingest")
	if n.Load() < 50 {
		t.Fatalf("the reports were looked up by id %d times in 150 pages", n.Load())
	}
	// retention: the two oldest days go
	if _, err := db.DeleteReportsBefore(ctx, start+2*day); err != nil {
		t.Fatal(err)
	}
	compare("after retention")
}

// pageOf runs q with options o on b: its rows, in order, one per line,
// and its total (include_total) when total is set (else -1).
func pageOf(t *testing.T, b engine.Backend, q any, o *query.Options, total bool) (string, int64) {
	t.Helper()
	var ast any
	if q != nil {
		text, err := json.Marshal(q)
		if err != nil {
			t.Fatal(err)
		}
		if ast, err = jsonv.Parse(text); err != nil {
			t.Fatal(err)
		}
	}
	p, err := query.Compile(query.Events, ast, o)
	if err != nil {
		t.Fatalf("%v: %v", q, err)
	}
	var rows []string
	var n int64
	err = engine.New(b).Query(context.Background(), p, total, func(res *engine.Rows, tot int64) error {
		n = tot
		var buf []byte
		for res.Next() {
			var err error
			if buf, err = res.AppendJSON(buf[:0]); err != nil {
				return err
			}
			rows = append(rows, string(buf))
		}
		return res.Err()
	})
	if err != nil {
		t.Fatalf("%v: %v", q, err)
	}
	return strings.Join(rows, "\n"), n
}
