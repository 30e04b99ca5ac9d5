package postgres_test

import (
	"context"
	"fmt"
	"math/rand"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"
)

// eventsReportBody is a wire v8 report of certname produced at ts (Unix
// ms) with one event per timestamp of events, on resources /tmp/<i>.
func eventsReportBody(certname string, ts int64, events []int64) []byte {
	f := func(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z") }
	var res []string
	for i, e := range events {
		res = append(res, fmt.Sprintf(`{"skipped":false,"timestamp":%q,"resource_type":"File","resource_title":"/tmp/%d",
		 "file":null,"line":null,"containment_path":null,"corrective_change":null,"events":[{"status":"success",
		 "timestamp":%q,"property":"ensure","new_value":"file","old_value":"absent","message":null,"corrective_change":null}]}`,
			f(e), i, f(e)))
	}
	return []byte(fmt.Sprintf(`{"certname":%q,"puppet_version":"7.23.0","report_format":12,"configuration_version":"%d",
	 "start_time":%q,"end_time":%q,"producer_timestamp":%q,"producer":"p","corrective_change":null,"noop":false,
	 "noop_pending":false,"transaction_uuid":null,"catalog_uuid":null,"code_id":null,"cached_catalog_status":null,
	 "environment":"production","status":"changed","metrics":[],"logs":[],"resources":[%s]}`,
		certname, ts, f(ts), f(ts), f(ts), strings.Join(res, ",")))
}

// TestEventWindowsReadOnlyTheirDays: an event query on a window of
// timestamps reads only the day partitions whose span of event timestamps
// (event_time_bounds, kept by a trigger: migration 0012) meets the window,
// and answers exactly the events in the window. The reports are random:
// events hours or days before and after their report's producer day (so
// in other days' ranges of time than their partition's), reports stored
// out of order and some twice; the windows are random, one-sided too, and
// their answers are compared with the events submitted.
func TestEventWindowsReadOnlyTheirDays(t *testing.T) {
	u, _, h := newServer(t)
	rng := rand.New(rand.NewSource(12))
	base := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	const day, hour = int64(86_400_000), int64(3_600_000)
	type event struct {
		certname, title string
		ts              int64
	}
	var all []event
	var bodies [][]byte
	var certnames []string
	for i := 0; i < 60; i++ {
		cn := fmt.Sprintf("n%02d.example.com", i)
		produced := base + rng.Int63n(6*day)
		var evs []int64
		for j := 0; j < 1+rng.Intn(3); j++ {
			off := -rng.Int63n(3 * hour)
			switch rng.Intn(6) {
			case 0: // days before the report (a report sent late)
				off = -rng.Int63n(3 * day)
			case 1: // after it (an agent's clock ahead)
				off = rng.Int63n(2 * day)
			}
			evs = append(evs, produced+off)
			all = append(all, event{cn, fmt.Sprintf("/tmp/%d", j), produced + off})
		}
		bodies = append(bodies, eventsReportBody(cn, produced, evs))
		certnames = append(certnames, cn)
	}
	order := rng.Perm(len(bodies))
	for _, i := range order {
		submit(t, h, certnames[i], bodies[i])
		if rng.Intn(5) == 0 { // a duplicate stores nothing
			submit(t, h, certnames[i], bodies[i])
		}
	}
	lo, hi := all[0].ts, all[0].ts
	for _, e := range all {
		lo, hi = min(lo, e.ts), max(hi, e.ts)
	}
	iso := func(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z") }
	key := func(cn, title string, ts int64) string { return fmt.Sprintf("%s %s %d", cn, title, ts) }
	check := func(query string, in func(int64) bool) {
		t.Helper()
		var want []string
		for _, e := range all {
			if in(e.ts) {
				want = append(want, key(e.certname, e.title, e.ts))
			}
		}
		var got []string
		for _, r := range getRows(t, h, "/pdb/query/v4/events", url.Values{"query": {query}}) {
			ts, err := time.Parse(time.RFC3339Nano, r["timestamp"].(string))
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, key(r["certname"].(string), r["resource_title"].(string), ts.UnixMilli()))
		}
		sort.Strings(want)
		sort.Strings(got)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: %d events, want %d\ngot  %v\nwant %v", query, len(got), len(want), got, want)
		}
	}
	for i := 0; i < 40; i++ {
		a := lo - hour + rng.Int63n(hi-lo+2*hour)
		b := a + rng.Int63n(2*day)
		check(fmt.Sprintf(`["and",[">=","timestamp",%q],["<=","timestamp",%q]]`, iso(a), iso(b)),
			func(ts int64) bool { return ts >= a && ts <= b })
		check(fmt.Sprintf(`[">","timestamp",%q]`, iso(a)), func(ts int64) bool { return ts > a })
		check(fmt.Sprintf(`["and",["<","timestamp",%q],["=","status","success"]]`, iso(b)),
			func(ts int64) bool { return ts < b })
	}
	// an event's exact timestamp, and a window before every event
	e := all[rng.Intn(len(all))]
	check(fmt.Sprintf(`["=","timestamp",%q]`, iso(e.ts)), func(ts int64) bool { return ts == e.ts })
	check(fmt.Sprintf(`["<","timestamp",%q]`, iso(lo-day)), func(int64) bool { return false })

	// The spans hold their partitions' events, and a window inside one
	// hour of the last day reads only that day's partitions (when no
	// other day's events reach into it).
	conn := getConn(t, u)
	defer conn.Close(context.Background())
	ctx := context.Background()
	var bad int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM (SELECT report_id >> 32 AS day, min(timestamp) AS lo, max(timestamp) AS hi
		FROM resource_events GROUP BY 1) s LEFT JOIN event_time_bounds b ON b.day = s.day
		WHERE b.day IS NULL OR b.min_ts > s.lo OR b.max_ts < s.hi`).Scan(&bad); err != nil || bad != 0 {
		t.Errorf("%d days whose events' span is not within event_time_bounds (%v)", bad, err)
	}
	var probe int64
	var days int
	if err := conn.QueryRow(ctx, `SELECT max(b.max_ts) - 1800000, (SELECT count(*) FROM event_time_bounds b2
		WHERE b2.max_ts >= max(b.max_ts) - 1800000 AND b2.min_ts <= max(b.max_ts) - 1800000) FROM event_time_bounds b`).Scan(&probe, &days); err != nil {
		t.Fatal(err)
	}
	rows := getRows(t, h, "/pdb/query/v4/events", url.Values{"explain": {"analyze"},
		"query": {fmt.Sprintf(`["and",[">=","timestamp",%q],["<=","timestamp",%q]]`, iso(probe), iso(probe))}})
	read := planRelations(rows)
	var events, reports int
	for r := range read {
		switch {
		case strings.HasPrefix(r, "resource_events_"):
			events++
		case strings.HasPrefix(r, "reports_"):
			reports++
		}
	}
	if events != days || reports != days {
		t.Errorf("a window met by %d days' spans read %d partitions of resource_events and %d of reports: %v", days, events, reports, read)
	}
}

// TestMigration0012OnExistingData: migration 0012 applied to a database
// with events in several day partitions (and an empty partition) records
// each partition's span, rounded out to whole hours.
func TestMigration0012OnExistingData(t *testing.T) {
	u, db, h := newServer(t)
	base := time.Date(2025, 3, 1, 10, 30, 0, 0, time.UTC).UnixMilli()
	for d := int64(0); d < 3; d++ {
		cn := fmt.Sprintf("mig%02d.example.com", d)
		p := base + d*86_400_000
		submit(t, h, cn, eventsReportBody(cn, p, []int64{p - 7_200_000 - d, p + 60_000}))
	}
	conn := getConn(t, u)
	defer conn.Close(context.Background())
	ctx := context.Background()
	mustExec(t, conn,
		"DROP TRIGGER resource_events_time_bounds ON resource_events",
		"DROP FUNCTION event_time_bounds_widen()",
		"DROP TABLE event_time_bounds",
		"DELETE FROM reportdb_schema_migrations WHERE version = 12",
	)
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(ctx, "SELECT day, min_ts, max_ts FROM event_time_bounds ORDER BY day")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var day, lo, hi int64
		if err := rows.Scan(&day, &lo, &hi); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d %s %s", day-100000, time.UnixMilli(lo).UTC().Format("2006-01-02T15:04"),
			time.UnixMilli(hi).UTC().Format("2006-01-02T15:04")))
	}
	want := []string{"20148 2025-03-01T08:00 2025-03-01T11:00", "20149 2025-03-02T08:00 2025-03-02T11:00",
		"20150 2025-03-03T08:00 2025-03-03T11:00"}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("event_time_bounds after the migration: %v, want %v", got, want)
	}
	// and the trigger is back: a later event widens its day
	p := base + 86_400_000
	submit(t, h, "late.example.com", eventsReportBody("late.example.com", p, []int64{p + 5*3_600_000}))
	var hi int64
	if err := conn.QueryRow(ctx, "SELECT max_ts FROM event_time_bounds WHERE day = 120149").Scan(&hi); err != nil ||
		time.UnixMilli(hi).UTC().Format("15:04") != "16:00" {
		t.Errorf("after a later event: max_ts %s (%v), want 16:00", time.UnixMilli(hi).UTC(), err)
	}
}

// TestNarrowedEventPagesAreExact: a page of events ordered by timestamp,
// with no window of timestamps (a search by resource title, newest
// first), is read from the newest (oldest) days first by the days' spans
// of event timestamps (engine's narrowing), and answers exactly what
// ordering every stored event answers. The events are random over nine
// days, hours or days before and after their report's producer day (in
// other days' spans of time than their partition's), reports stored out
// of order and some twice; pages at limits and offsets into and past the
// head, filtered by title, node or nothing, both directions. The newest
// few events read fewer day partitions than there are.
func TestNarrowedEventPagesAreExact(t *testing.T) {
	u, _, h := newServer(t)
	rng := rand.New(rand.NewSource(26))
	const day, hour = int64(86_400_000), int64(3_600_000)
	base := time.Now().UTC().Truncate(24*time.Hour).UnixMilli() - 8*day
	type event struct {
		certname, title string
		ts              int64
	}
	var all []event
	var bodies [][]byte
	var certnames []string
	for i := 0; i < 90; i++ {
		cn := fmt.Sprintf("n%02d.example.com", i%30)
		produced := base + rng.Int63n(9*day)
		var evs []int64
		for j := 0; j < 1+rng.Intn(4); j++ {
			off := -rng.Int63n(3 * hour)
			switch rng.Intn(6) {
			case 0: // days before the report (a report sent late)
				off = -rng.Int63n(3 * day)
			case 1: // after it (an agent's clock ahead)
				off = rng.Int63n(2 * day)
			case 2: // on the hour
				off -= (produced + off) % hour
			}
			evs = append(evs, produced+off)
			all = append(all, event{cn, fmt.Sprintf("/tmp/%d", j), produced + off})
		}
		bodies = append(bodies, eventsReportBody(cn, produced, evs))
		certnames = append(certnames, cn)
	}
	// the newest event on a whole hour, and an event a day before it: on
	// the head's bound (the newest span's end less NarrowSpan)
	newest := all[0].ts
	for _, e := range all {
		newest = max(newest, e.ts)
	}
	newest += 2*hour - newest%hour
	bodies = append(bodies, eventsReportBody("edge.example.com", newest, []int64{newest, newest - day}))
	certnames = append(certnames, "edge.example.com")
	all = append(all, event{"edge.example.com", "/tmp/0", newest}, event{"edge.example.com", "/tmp/1", newest - day})
	for _, i := range rng.Perm(len(bodies)) {
		submit(t, h, certnames[i], bodies[i])
		if rng.Intn(5) == 0 {
			submit(t, h, certnames[i], bodies[i])
		}
	}
	key := func(e event) string { return fmt.Sprintf("%d %s %s", e.ts, e.certname, e.title) }
	with3 := map[string]bool{} // nodes with an event on /tmp/3, any day
	for _, e := range all {
		if e.title == "/tmp/3" {
			with3[e.certname] = true
		}
	}
	check := func(query string, match func(event) bool, desc bool, limit, offset int) {
		t.Helper()
		var want []event
		for _, e := range all {
			if match(e) {
				want = append(want, e)
			}
		}
		sort.Slice(want, func(i, j int) bool {
			a, b := want[i], want[j]
			if a.ts != b.ts {
				return (a.ts > b.ts) == desc
			}
			if a.certname != b.certname {
				return a.certname < b.certname
			}
			return a.title < b.title
		})
		want = want[min(offset, len(want)):]
		want = want[:min(limit, len(want))]
		dir := "asc"
		if desc {
			dir = "desc"
		}
		q := url.Values{"limit": {fmt.Sprint(limit)}, "order_by": {fmt.Sprintf(
			`[{"field":"timestamp","order":%q},{"field":"certname"},{"field":"resource_title"}]`, dir)}}
		if offset > 0 {
			q.Set("offset", fmt.Sprint(offset))
		}
		if query != "" {
			q.Set("query", query)
		}
		var got, exp []string
		for _, r := range getRows(t, h, "/pdb/query/v4/events", q) {
			ts, _ := time.Parse(time.RFC3339Nano, r["timestamp"].(string))
			got = append(got, key(event{r["certname"].(string), r["resource_title"].(string), ts.UnixMilli()}))
		}
		for _, e := range want {
			exp = append(exp, key(e))
		}
		if strings.Join(got, "\n") != strings.Join(exp, "\n") {
			t.Errorf("%s %s limit %d offset %d: %d events\ngot  %v\nwant %v", query, dir, limit, offset, len(got), got, exp)
		}
	}
	for _, f := range []struct {
		query string
		match func(event) bool
	}{
		{"", func(event) bool { return true }},
		{`["~","resource_title","^/tmp/[12]"]`, func(e event) bool { return e.title == "/tmp/1" || e.title == "/tmp/2" }},
		{`["=","certname","n07.example.com"]`, func(e event) bool { return e.certname == "n07.example.com" }},
		{`["=","certname","none.example.com"]`, func(event) bool { return false }},
		// a subquery asks over every day, whatever the head's
		{`["in","certname",["extract","certname",["select_events",["=","resource_title","/tmp/3"]]]]`,
			func(e event) bool { return with3[e.certname] }},
		{`["in","certname",["extract","certname",["select_reports",["=","status","changed"]]]]`,
			func(event) bool { return true }},
	} {
		for _, desc := range []bool{true, false} {
			check(f.query, f.match, desc, 1, 0)
			check(f.query, f.match, desc, 10, 0)
			check(f.query, f.match, desc, 1+rng.Intn(200), 0)
			check(f.query, f.match, desc, 1+rng.Intn(30), rng.Intn(150))
			check(f.query, f.match, desc, 5, 400)
		}
	}
	// the newest five events read the head's days, not every day
	rows := getRows(t, h, "/pdb/query/v4/events", url.Values{"explain": {"analyze"}, "limit": {"5"},
		"order_by": {`[{"field":"timestamp","order":"desc"}]`}})
	conn := getConn(t, u)
	defer conn.Close(context.Background())
	var created int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM pg_inherits WHERE inhparent = 'resource_events'::regclass`).Scan(&created); err != nil {
		t.Fatal(err)
	}
	n := 0
	for r := range planRelations(rows) {
		if strings.HasPrefix(r, "resource_events_") {
			n++
		}
	}
	if n == 0 || n > created-4 {
		t.Errorf("the newest events read %d of %d partitions of resource_events", n, created)
	}
}
