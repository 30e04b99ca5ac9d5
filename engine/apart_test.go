package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"reportdb"
	"reportdb/engine"
	"reportdb/internal/pgtest"
	"reportdb/postgres"
	"reportdb/query"
	"reportdb/query/sqlgen"
	"reportdb/store"
)

// apartReport is report i of a random fleet for the pages whose reports
// are read apart: events of every column (NULLs, containment paths,
// lines, long and escaped text), their times times[i*8+j] (distinct, so
// that the pages' orders are total: rows that tie may come in either
// order, and a page's edge may cut through them differently) and
// interleaved across reports.
func apartReport(r *rand.Rand, i int, times []int) *reportdb.Report {
	ts := int64(1_700_000_000_000) + int64(r.Intn(40))*60_000
	rep := &reportdb.Report{
		Hash:                 fmt.Sprintf("%040x", i),
		Certname:             fmt.Sprintf("node%d.example.com", r.Intn(30)),
		PuppetVersion:        "7.23.0",
		ReportFormat:         8,
		ConfigurationVersion: pick(r, "1", "c\"onf\\ig", strings.Repeat("v", 300)),
		StartTime:            ts - 30000,
		EndTime:              ts - 1000 + int64(r.Intn(3)),
		ProducerTimestamp:    ts,
		ReceiveTime:          ts + int64(r.Intn(900)),
		Environment:          pick(r, "production", "qa", "dev"),
		Status:               pick(r, ptr("changed"), ptr("unchanged"), ptr("failed")),
		Type:                 "agent",
	}
	for j := r.Intn(8); j > 0; j-- {
		e := reportdb.Event{
			Status:        pick(r, "success", "failure", "noop", "skipped"),
			Timestamp:     int64(1_700_000_000_000) + int64(times[i*8+j])*1000,
			ResourceType:  pick(r, "File", "Service", "Package"),
			ResourceTitle: pick(r, "/etc/nginx/a.conf", "/etc/nginx/b\u00e9.conf", "/etc/ssh/sshd_config", "ntp", "x\ty"),
			NewValue:      pick(r, `"a"`, `null`, `{"k":[1,2]}`),
			OldValue:      pick(r, `"b"`, `null`, `3`),
		}
		if r.Intn(3) > 0 {
			e.Property = ptr(pick(r, "ensure", "content", "mode"))
			e.Message = ptr(pick(r, "changed", "line1\nline2", strings.Repeat("m", 2000)))
			e.File = ptr("/etc/puppet/site.pp")
			e.Line = ptr(int64(r.Intn(200)))
			e.ContainmentPath = []string{"Stage[main]", pick(r, "Main", "Nginx::Config"), "File[" + e.ResourceTitle + "]"}
			e.ContainingClass = ptr("Nginx::Config")
			e.Name = ptr(e.ResourceTitle)
		} else if r.Intn(2) == 0 {
			e.ContainmentPath = []string{}
		}
		rep.Events = append(rep.Events, e)
	}
	return rep
}

// apartFleet is a new PostgreSQL database holding n reports of
// apartReport, stored in random batches (duplicates among them) from the
// random source seed.
func apartFleet(t *testing.T, seed int64, n int) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(context.Background(), pgtest.NewDatabase(t), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	r := rand.New(rand.NewSource(seed))
	var all []*reportdb.Report
	times := r.Perm(n * 8)
	for i := 0; i < n; i++ {
		all = append(all, apartReport(r, i, times))
	}
	storeInBatches(t, db, r, all, all, 50)
	return db
}

// pageRows runs a plan and returns its rows as JSON, in order.
func pageRows(t *testing.T, eng *engine.Engine, p *query.Plan) []string {
	t.Helper()
	rows, _ := queryPage(t, eng, p, false)
	return rows
}

// queryPage runs a plan, with its total (include_total, which runs it in
// a snapshot) when withTotal is set, and returns its rows as JSON, in
// order, and the total (-1 without).
func queryPage(t *testing.T, eng *engine.Engine, p *query.Plan, withTotal bool) ([]string, int64) {
	t.Helper()
	var rows []string
	var n int64
	err := eng.Query(context.Background(), p, withTotal, func(res *engine.Rows, total int64) error {
		n = total
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
		t.Fatalf("%v: %v", p, err)
	}
	return rows, n
}

// sameUpToTies reports whether pages a and b hold the same rows in the
// same order, but for the order of rows that tie on the keys (the fields
// a page is ordered by: rows that tie may come in either order).
func sameUpToTies(t *testing.T, a, b []string, keys []string) bool {
	t.Helper()
	if len(a) != len(b) {
		return false
	}
	key := func(row string) string {
		var m map[string]any
		if err := json.Unmarshal([]byte(row), &m); err != nil {
			t.Fatal(err)
		}
		var k []string
		for _, f := range keys {
			k = append(k, fmt.Sprint(m[f]))
		}
		return strings.Join(k, "\x00")
	}
	for i := 0; i < len(a); {
		j := i + 1
		for j < len(a) && key(a[j]) == key(a[i]) {
			j++
		}
		ga, gb := slices.Clone(a[i:j]), slices.Clone(b[i:j])
		slices.Sort(ga)
		slices.Sort(gb)
		if !slices.Equal(ga, gb) {
			return false
		}
		i = j
	}
	return true
}

// losing is a backend that loses one report of each statement that reads
// a page's reports by their ids (sqlgen.ReportsApart), as when retention
// drops its day between the page's statement and that one.
type losing struct {
	engine.Backend
	lost int
}

func (l *losing) Query(ctx context.Context, st store.Statement) (store.Rows, error) {
	if !strings.Contains(st.SQL, "= ANY(") || len(st.Args) == 0 {
		return l.Backend.Query(ctx, st)
	}
	if ids, ok := st.Args[0].([]int64); ok && len(ids) > 1 {
		st.Args = append([]any{ids[1:]}, st.Args[1:]...)
		l.lost++
	}
	return l.Backend.Query(ctx, st)
}

// TestReportsApartMatchesJoin: pages of events whose reports are read
// apart (sqlgen.ReportsApart) are the pages the statement with the join
// gives, on random reports (every column, NULLs, escaped text), for
// filters, orders, limits and offsets; and a page one of whose reports is
// gone by the time they are read, or too large to hold, is read again
// with the join.
func TestReportsApartMatchesJoin(t *testing.T) {
	db := apartFleet(t, 37, 900)

	desc := func(f string) query.OrderSpec { return query.OrderSpec{Field: f, Desc: true} }
	asc := func(f string) query.OrderSpec { return query.OrderSpec{Field: f} }
	filters := []any{
		nil,
		[]any{"~", "resource_title", "^/etc/nginx/"},
		[]any{"=", "status", "failure"},
		[]any{"and", []any{">", "timestamp", "2023-11-14T22:30:00Z"}, []any{"~", "resource_title", "^/etc/"}},
		[]any{"or", []any{"=", "resource_type", "Service"}, []any{"null?", "property", true}},
		[]any{"=", "latest_report?", true},
	}
	orders := [][]query.OrderSpec{
		{desc("timestamp")},
		{asc("timestamp")},
		{asc("resource_title"), desc("timestamp")},
		{asc("status"), desc("timestamp")},
	}
	apart, joined := engine.New(db), engine.New(db)
	joined.ReadReportsApart(false)
	lossy := &losing{Backend: db}
	retried := engine.New(lossy)
	pages, read := 0, 0
	for _, f := range filters {
		for _, o := range orders {
			for _, page := range [][2]int{{500, 0}, {1000, 0}, {600, 450}, {10000, 0}} {
				q := fmt.Sprint(f, o, page)
				var keys []string
				for _, k := range o {
					keys = append(keys, k.Field)
				}
				pq := pageQuery(t, f, o, page[0], page[1])
				b, err := sqlgen.Select(db.Dialect(), pq, sqlgen.ReportsApart())
				if err != nil {
					t.Fatal(err)
				}
				if b.Apart == nil {
					t.Fatalf("%v: not read apart", q)
				}
				want := pageRows(t, joined, pq)
				if got := pageRows(t, apart, pq); !sameUpToTies(t, got, want, keys) {
					t.Errorf("%v: apart\n%s\njoined\n%s", q, strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				restore := engine.SetApartMaxBytes(4 << 10)
				if got := pageRows(t, apart, pq); !sameUpToTies(t, got, want, keys) {
					t.Errorf("%v: too large to hold\n%s\njoined\n%s", q, strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				restore()
				before := lossy.lost
				if got := pageRows(t, retried, pq); !sameUpToTies(t, got, want, keys) {
					t.Errorf("%v: with a report gone\n%s\njoined\n%s", q, strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				if len(want) > 0 {
					read++
					if lossy.lost == before {
						t.Errorf("%v: no report was read apart", q)
					}
				}
				pages++
			}
		}
	}
	if read < pages/2 {
		t.Fatalf("%d of %d pages had rows", read, pages)
	}
}

// pageQuery compiles a query over events: filter (nil for none), its
// order, limit and offset.
func pageQuery(t *testing.T, filter any, order []query.OrderSpec, limit, offset int) *query.Plan {
	t.Helper()
	return entityPageQuery(t, query.Events, filter, order, limit, offset)
}

// entityPageQuery compiles a query over entity e: filter (nil for none),
// its order, limit and offset.
func entityPageQuery(t *testing.T, e *query.Entity, filter any, order []query.OrderSpec, limit, offset int) *query.Plan {
	t.Helper()
	o := &query.Options{OrderBy: order, OrderBySet: order != nil, Limit: int64(limit), LimitSet: limit > 0,
		Offset: int64(offset), OffsetSet: offset > 0}
	p, err := query.Compile(e, filter, o)
	if err != nil {
		t.Fatalf("%v: %v", filter, err)
	}
	return p
}

// TestReportsApartOnlyWhereTheyMayBe: a page is read apart only when its
// filter and order read no report, it is whole events, and its limit is
// within bounds; never on a dialect without id arrays.
func TestReportsApartOnlyWhereTheyMayBe(t *testing.T) {
	db, err := postgres.Open(context.Background(), pgtest.NewDatabase(t), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	byTime := []query.OrderSpec{{Field: "timestamp", Desc: true}}
	title := []any{"~", "resource_title", "^/etc/"}
	for _, c := range []struct {
		filter any
		order  []query.OrderSpec
		limit  int
		apart  bool
	}{
		{title, byTime, 1000, true},
		{[]any{"=", "certname", "a"}, byTime, 1000, false},
		{title, []query.OrderSpec{{Field: "certname"}}, 1000, false},
		{title, byTime, 100, false},
		{title, byTime, 20000, false},
		{title, nil, 1000, false},
		{[]any{"extract", []any{"resource_title", "certname"}, title}, byTime, 1000, false},
		{[]any{"in", "certname", []any{"extract", "certname", []any{"select_nodes", []any{"=", "certname", "a"}}}}, byTime, 1000, false},
		{[]any{"=", "latest_report?", true}, byTime, 1000, true}, // the copies' ids are the reports'
		{[]any{"=", "report", "x"}, byTime, 1000, false},
		{[]any{"~", "environment", "prod"}, byTime, 1000, false},
	} {
		q := fmt.Sprint(c.filter, c.order, c.limit)
		p := pageQuery(t, c.filter, c.order, c.limit, 0)
		b, err := sqlgen.Select(db.Dialect(), p, sqlgen.ReportsApart())
		if err != nil {
			t.Fatal(err)
		}
		if got := b.Apart != nil; got != c.apart {
			t.Errorf("%v: apart %v, want %v\n%s", q, got, c.apart, b.SQL)
		}
		if b.Apart != nil && strings.Contains(b.SQL, "JOIN reports") {
			t.Errorf("%v: apart with its join: %s", q, b.SQL)
		}
	}
}
