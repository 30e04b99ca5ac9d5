package engine_test

import (
	"fmt"
	"strings"
	"testing"

	"reportdb/engine"
	"reportdb/postgres"
	"reportdb/query"
	"reportdb/query/sqlgen"
)

// TestEventsApartMatchesJoin: pages of reports whose events are read
// apart (sqlgen.EventsApart) are the pages the statement with each
// report's events subquery gives, byte for byte: on random reports (0-7
// events each, inserted in an order that is not their timestamps', every
// column, NULLs, empty and missing containment paths, escaped text), for
// filters, orders, limits and offsets, with and without their total (in a
// snapshot); and a page one of whose reports' events are gone by the time
// they are read, or too large to hold, is read again with the subqueries.
func TestEventsApartMatchesJoin(t *testing.T) {
	db := apartFleet(t, 39, 600)

	desc := func(f string) query.OrderSpec { return query.OrderSpec{Field: f, Desc: true} }
	asc := func(f string) query.OrderSpec { return query.OrderSpec{Field: f} }
	filters := []any{
		nil,
		[]any{"=", "status", "failed"},
		[]any{"~", "certname", "^node1"},
		[]any{"=", "latest_report?", true},
		[]any{"and", []any{">", "end_time", "2023-11-14T22:30:00Z"}, []any{"=", "environment", "qa"}},
	}
	orders := [][]query.OrderSpec{
		{desc("end_time")},
		{asc("certname"), desc("receive_time")},
		{desc("receive_time")},
		nil,
	}
	apart, joined := engine.New(db), engine.New(db)
	joined.ReadReportsApart(false)
	lossy := &losing{Backend: db}
	retried := engine.New(lossy)
	pages, lost := 0, 0
	for _, f := range filters {
		for _, o := range orders {
			for _, page := range [][2]int{{20, 0}, {100, 0}, {100, 150}, {1000, 0}} {
				q := fmt.Sprint(f, o, page)
				keys := []string{"hash"} // no order: a total one for the comparison
				if o != nil {
					keys = nil
					for _, k := range o {
						keys = append(keys, k.Field)
					}
				}
				pq := entityPageQuery(t, query.Reports, f, o, page[0], page[1])
				b, err := sqlgen.Select(db.Dialect(), pq, sqlgen.EventsApart())
				if err != nil {
					t.Fatal(err)
				}
				if b.Apart == nil || !b.Apart.Events {
					t.Fatalf("%v: events not read apart", q)
				}
				want, wantTotal := queryPage(t, joined, pq, true)
				got, total := queryPage(t, apart, pq, true)
				if !sameUpToTies(t, got, want, keys) || total != wantTotal {
					t.Errorf("%v: apart (total %d)\n%s\njoined (total %d)\n%s", q, total, strings.Join(got, "\n"),
						wantTotal, strings.Join(want, "\n"))
				}
				if got := pageRows(t, apart, pq); !sameUpToTies(t, got, want, keys) {
					t.Errorf("%v: apart without total\n%s\njoined\n%s", q, strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				restore := engine.SetApartMaxBytes(8 << 10)
				if got := pageRows(t, apart, pq); !sameUpToTies(t, got, want, keys) {
					t.Errorf("%v: too large to hold\n%s\njoined\n%s", q, strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				restore()
				before := lossy.lost
				if got := pageRows(t, retried, pq); !sameUpToTies(t, got, want, keys) {
					t.Errorf("%v: with a report's events gone\n%s\njoined\n%s", q, strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				if lossy.lost > before {
					lost++
				}
				pages++
			}
		}
	}
	if lost < pages/2 {
		t.Fatalf("the events of %d of %d pages were read apart", lost, pages)
	}
}

// TestEventsApartOnlyWhereTheyMayBe: a page of reports reads its events
// apart only when it is whole reports and its limit is within bounds;
// never on a dialect whose results are text.
func TestEventsApartOnlyWhereTheyMayBe(t *testing.T) {
	byEnd := []query.OrderSpec{{Field: "end_time", Desc: true}}
	for _, c := range []struct {
		filter any
		limit  int
		apart  bool
	}{
		{nil, 100, true},
		{nil, 20, true},
		{nil, 1000, true},
		{nil, 19, false},
		{nil, 1001, false},
		{nil, 0, false},
		{[]any{"=", "latest_report?", true}, 100, true},
		{[]any{"extract", []any{"hash", "resource_events"}}, 100, false},
		{[]any{"extract", []any{"hash", []any{"function", "count"}}, []any{"=", "type", "agent"}, []any{"group_by", "hash"}}, 100, false},
	} {
		q := fmt.Sprint(c.filter, c.limit)
		order := byEnd
		if strings.Contains(q, "group_by") {
			order = nil
		}
		p := entityPageQuery(t, query.Reports, c.filter, order, c.limit, 0)
		b, err := sqlgen.Select(postgres.Dialect{}, p, sqlgen.EventsApart())
		if err != nil {
			t.Fatalf("%v: %v", q, err)
		}
		if got := b.Apart != nil && b.Apart.Events; got != c.apart {
			t.Errorf("%v: events apart %v, want %v\n%s", q, got, c.apart, b.SQL)
		}
		if b.Apart != nil && strings.Contains(b.SQL, "FROM resource_events") {
			t.Errorf("%v: apart with the events subquery: %s", q, b.SQL)
		}
		if c.apart {
			b, err := sqlgen.Select(postgres.Dialect{TextResults: true}, p, sqlgen.EventsApart())
			if err != nil {
				t.Fatal(err)
			}
			if b.Apart != nil {
				t.Errorf("%v: events apart with text results", q)
			}
		}
	}
	p := pageQuery(t, nil, []query.OrderSpec{{Field: "timestamp", Desc: true}}, 100, 0)
	if b, err := sqlgen.Select(postgres.Dialect{}, p, sqlgen.EventsApart()); err != nil || b.Apart != nil {
		t.Errorf("a page of events reads events apart (%v)", err)
	}
}
