package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"
)

// timedReportBody is a wire v8 report of certname that started at start,
// ended at end and was produced at produced (Unix ms), with one event.
func timedReportBody(certname string, start, end, produced int64) []byte {
	f := func(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z") }
	return []byte(fmt.Sprintf(`{"certname":%q,"puppet_version":"7.23.0","report_format":12,"configuration_version":"%d",
	 "start_time":%q,"end_time":%q,"producer_timestamp":%q,"producer":"p","corrective_change":null,"noop":false,
	 "noop_pending":false,"transaction_uuid":null,"catalog_uuid":null,"code_id":null,"cached_catalog_status":null,
	 "environment":"production","status":"changed","metrics":[{"category":"time","name":"total","value":1.5}],
	 "logs":[{"file":null,"line":null,"level":"info","message":"run %d","source":"Puppet","tags":["info"],"time":%q}],
	 "resources":[{"skipped":false,"timestamp":%q,"resource_type":"File","resource_title":"/tmp/x",
	 "file":null,"line":null,"containment_path":null,"corrective_change":null,"events":[{"status":"success",
	 "timestamp":%q,"property":"ensure","new_value":"file","old_value":"absent","message":null,"corrective_change":null}]}]}`,
		certname, start, f(start), f(end), f(produced), start, f(end), f(end), f(end)))
}

// TestNarrowedReportPagesAreExact: a page of reports ordered by start_time
// or end_time is read from the newest (oldest) days first (report_time_bounds,
// migration 0015; engine's narrowing), and answers exactly what ordering all
// stored reports answers. The reports are random over nine days: nodes that
// report often, rarely, or stopped days ago; start and end times hours or
// days before their producer_timestamp (reports sent late, so that an old
// time sits in a new day's partition) and after it (a clock ahead);
// times on whole hours (the bound of the newest day's head is one); stored
// out of order and some twice. Pages at every limit and offset that
// reach into and past the head are compared with the submitted reports
// sorted, and a full page's blobs with its reports' own. Then retention
// drops the oldest days and the pages are checked again.
func TestNarrowedReportPagesAreExact(t *testing.T) {
	u, db, h := newServer(t)
	rng := rand.New(rand.NewSource(15))
	const day, hour = int64(86_400_000), int64(3_600_000)
	base := time.Now().UTC().Truncate(24*time.Hour).UnixMilli() - 8*day
	type report struct {
		certname             string
		start, end, produced int64
	}
	var all []report
	nodes := []struct {
		name         string
		from, to     int64 // producer times in [from, to)
		every, count int
	}{
		{"busy.example.com", 0, 9 * day, 0, 90},
		{"rare.example.com", 0, 9 * day, 0, 6},
		{"gone.example.com", 0, 2 * day, 0, 15},
		{"late.example.com", 7 * day, 9 * day, 0, 4},
	}
	for i := 0; i < 8; i++ {
		nodes = append(nodes, struct {
			name         string
			from, to     int64
			every, count int
		}{fmt.Sprintf("n%d.example.com", i), 0, 9 * day, 0, 5 + rng.Intn(20)})
	}
	for _, n := range nodes {
		for k := 0; k < n.count; k++ {
			produced := base + n.from + rng.Int63n(n.to-n.from)
			if rng.Intn(4) == 0 {
				produced -= produced % hour // on the hour
			}
			start := produced - rng.Int63n(10*60_000)
			switch rng.Intn(8) {
			case 0: // sent late: run days before its producer day
				start = produced - rng.Int63n(4*day)
			case 1: // a clock ahead: after it
				start = produced + rng.Int63n(day)
			case 2: // on the hour
				start -= start % hour
			}
			end := start + rng.Int63n(5*60_000)
			if rng.Intn(6) == 0 {
				end -= end % hour
				start = min(start, end)
			}
			all = append(all, report{n.name, start, end, produced})
		}
	}
	for _, i := range rng.Perm(len(all)) {
		r := all[i]
		submit(t, h, r.certname, timedReportBody(r.certname, r.start, r.end, r.produced))
		if rng.Intn(6) == 0 {
			submit(t, h, r.certname, timedReportBody(r.certname, r.start, r.end, r.produced))
		}
	}
	iso := func(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z") }
	key := func(r report) string { return r.certname + " " + iso(r.start) + " " + iso(r.end) }
	check := func(certname, field string, desc bool, limit, offset int) {
		t.Helper()
		var want []report
		for _, r := range all {
			if certname == "" || r.certname == certname {
				want = append(want, r)
			}
		}
		val := func(r report) int64 {
			if field == "start_time" {
				return r.start
			}
			return r.end
		}
		sort.Slice(want, func(i, j int) bool {
			a, b := val(want[i]), val(want[j])
			if a != b {
				return (a > b) == desc
			}
			return key(want[i]) < key(want[j])
		})
		want = want[min(offset, len(want)):]
		want = want[:min(limit, len(want))]
		dir := "asc"
		if desc {
			dir = "desc"
		}
		q := url.Values{"limit": {fmt.Sprint(limit)}, "order_by": {fmt.Sprintf(
			`[{"field":%q,"order":%q},{"field":"certname"},{"field":"start_time"},{"field":"end_time"}]`, field, dir)}}
		if offset > 0 {
			q.Set("offset", fmt.Sprint(offset))
		}
		if certname != "" {
			q.Set("query", fmt.Sprintf(`["=","certname",%q]`, certname))
		}
		var got, exp []string
		for _, row := range getRows(t, h, "/pdb/query/v4/reports", q) {
			st, _ := time.Parse(time.RFC3339Nano, row["start_time"].(string))
			en, _ := time.Parse(time.RFC3339Nano, row["end_time"].(string))
			got = append(got, key(report{row["certname"].(string), st.UnixMilli(), en.UnixMilli(), 0}))
			// the blobs are the report's own
			logs, _ := json.Marshal(row["logs"])
			if !strings.Contains(string(logs), fmt.Sprintf(`"message":"run %d"`, st.UnixMilli())) {
				t.Errorf("%s %s: logs %s", certname, iso(st.UnixMilli()), logs)
			}
			if ev, _ := json.Marshal(row["resource_events"]); !strings.Contains(string(ev), `"resource_title":"/tmp/x"`) {
				t.Errorf("%s %s: resource_events %s", certname, iso(st.UnixMilli()), ev)
			}
		}
		for _, r := range want {
			exp = append(exp, key(r))
		}
		if strings.Join(got, "\n") != strings.Join(exp, "\n") {
			t.Errorf("certname %q, %s %s, limit %d offset %d: %d reports\ngot  %v\nwant %v",
				certname, field, dir, limit, offset, len(got), got, exp)
		}
	}
	// lookups by hash, of reports, their logs, metrics and events: each
	// stored report's own, wherever its day; another node's, or an
	// unknown hash, nothing
	hashes := func() {
		t.Helper()
		stored := getRows(t, h, "/pdb/query/v4/reports", url.Values{})
		if len(stored) != len(all) {
			t.Fatalf("%d reports stored, want %d", len(stored), len(all))
		}
		for i, row := range stored {
			if i%3 != 0 && row["certname"] != "gone.example.com" && row["certname"] != "skew.example.com" {
				continue
			}
			hash, cn := row["hash"].(string), row["certname"].(string)
			got := getRows(t, h, "/pdb/query/v4/reports", url.Values{"query": {fmt.Sprintf(`["=","hash",%q]`, hash)}})
			if len(got) != 1 || got[0]["certname"] != cn || got[0]["start_time"] != row["start_time"] {
				t.Errorf("report %s (%s %s): %v", hash, cn, row["start_time"], got)
			}
			st, _ := time.Parse(time.RFC3339Nano, row["start_time"].(string))
			logs := getRows(t, h, "/pdb/query/v4/reports/"+hash+"/logs", url.Values{})
			if len(logs) != 1 || logs[0]["message"] != fmt.Sprintf("run %d", st.UnixMilli()) {
				t.Errorf("logs of report %s (%s %s): %v", hash, cn, row["start_time"], logs)
			}
			if m := getRows(t, h, "/pdb/query/v4/reports/"+hash+"/metrics", url.Values{}); len(m) != 1 || m[0]["name"] != "total" {
				t.Errorf("metrics of report %s: %v", hash, m)
			}
			ev := getRows(t, h, "/pdb/query/v4/events", url.Values{"query": {fmt.Sprintf(`["=","report",%q]`, hash)}})
			if len(ev) != 1 || ev[0]["certname"] != cn || ev[0]["timestamp"] != row["end_time"] {
				t.Errorf("events of report %s (%s %s): %v", hash, cn, row["end_time"], ev)
			}
			if other := getRows(t, h, "/pdb/query/v4/events", url.Values{"query": {fmt.Sprintf(
				`["and",["=","report",%q],["=","certname","n1.example.com"]]`, hash)}}); cn != "n1.example.com" && len(other) != 0 {
				t.Errorf("events of report %s of another node: %v", hash, other)
			}
		}
		if got := getRows(t, h, "/pdb/query/v4/reports", url.Values{"query": {`["=","hash","0000000000000000000000000000000000000000"]`}}); len(got) != 0 {
			t.Errorf("unknown hash: %v", got)
		}
	}
	hashes()
	pages := func() {
		for _, cn := range []string{"", "busy.example.com", "rare.example.com", "gone.example.com",
			"late.example.com", "skew.example.com", "n3.example.com", "none.example.com"} {
			for _, field := range []string{"start_time", "end_time"} {
				for _, desc := range []bool{true, false} {
					check(cn, field, desc, 1, 0)
					check(cn, field, desc, 10, 0)
					check(cn, field, desc, 1+rng.Intn(120), 0)
					check(cn, field, desc, 1+rng.Intn(30), rng.Intn(80))
					check(cn, field, desc, 5, 200)
				}
			}
		}
	}
	pages()

	// the spans hold their partitions' reports
	conn := getConn(t, u)
	defer conn.Close(context.Background())
	ctx := context.Background()
	var bad int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM (SELECT id >> 32 AS day, min(start_time) AS sl, max(start_time) AS sh,
		min(end_time) AS el, max(end_time) AS eh FROM reports GROUP BY 1) s LEFT JOIN report_time_bounds b ON b.day = s.day
		WHERE b.day IS NULL OR b.min_start > s.sl OR b.max_start < s.sh OR b.min_end > s.el OR b.max_end < s.eh`).Scan(&bad); err != nil || bad != 0 {
		t.Errorf("%d days whose reports' times are not within report_time_bounds (%v)", bad, err)
	}

	// a busy node's newest reports read the head's days only
	rows := getRows(t, h, "/pdb/query/v4/reports", url.Values{"explain": {"analyze"}, "limit": {"10"},
		"query":    {`["=","certname","busy.example.com"]`},
		"order_by": {`[{"field":"start_time","order":"desc"}]`}})
	read := planRelations(rows)
	var days int // with reports
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM report_time_bounds").Scan(&days); err != nil {
		t.Fatal(err)
	}
	for _, tab := range []string{"reports", "report_data", "resource_events"} {
		n := 0
		for r := range read {
			if strings.HasPrefix(r, tab+"_") {
				n++
			}
		}
		var created int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_inherits WHERE inhparent = $1::regclass`, tab).Scan(&created); err != nil {
			t.Fatal(err)
		}
		if n == 0 || n > 3+created-days {
			t.Errorf("%s: the head read %d of %d partitions (days with reports: %d)", tab, n, created, days)
		}
	}

	// a report whose times are ahead of every other, stored in the oldest
	// day: the heads read that day too
	skew := report{"skew.example.com", base + 9*day + 2*hour, base + 9*day + 3*hour, base + hour}
	submit(t, h, skew.certname, timedReportBody(skew.certname, skew.start, skew.end, skew.produced))
	all = append(all, skew)
	pages()
	hashes()

	// retention drops the oldest days (and their spans); pages stay exact
	cut := base + 3*day
	if _, err := db.DeleteReportsBefore(ctx, cut); err != nil {
		t.Fatal(err)
	}
	var kept []report
	for _, r := range all {
		if r.produced >= cut {
			kept = append(kept, r)
		}
	}
	all = kept
	var stale int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM report_time_bounds b WHERE NOT EXISTS
		(SELECT 1 FROM reports r WHERE r.id >> 32 = b.day)`).Scan(&stale); err != nil || stale != 0 {
		t.Errorf("%d spans of days without reports after retention (%v)", stale, err)
	}
	pages()
	hashes()

	// lookups by hash reuse the head's bound of the last one for a while
	// (engine.HashHeadTTL): reports stored since, in a day newer than
	// every other and in the oldest day kept, are found at once
	for _, r := range []report{
		{"newday.example.com", base + 9*day + hour, base + 9*day + hour + 60_000, base + 9*day + 2*hour},
		{"oldday.example.com", cut + hour, cut + hour + 60_000, cut + 2*hour},
	} {
		submit(t, h, r.certname, timedReportBody(r.certname, r.start, r.end, r.produced))
		all = append(all, r)
		stored := getRows(t, h, "/pdb/query/v4/reports", url.Values{"query": {fmt.Sprintf(`["=","certname",%q]`, r.certname)}})
		if len(stored) != 1 {
			t.Fatalf("%s: %d reports", r.certname, len(stored))
		}
		hash := stored[0]["hash"].(string)
		if got := getRows(t, h, "/pdb/query/v4/reports", url.Values{"query": {fmt.Sprintf(
			`["and",["=","certname",%q],["or",["=","hash",%q],["=","configuration_version",%q]]]`, r.certname, hash, hash)}}); len(got) != 1 {
			t.Errorf("%s: report %s: %v", r.certname, hash, got)
		}
		if ev := getRows(t, h, "/pdb/query/v4/events", url.Values{"query": {fmt.Sprintf(`["=","report",%q]`, hash)}}); len(ev) != 1 || ev[0]["certname"] != r.certname {
			t.Errorf("%s: events of report %s: %v", r.certname, hash, ev)
		}
	}
	hashes()
}

// TestMigration0015OnExistingData: migration 0015 applied to a database
// with reports in several day partitions records each partition's spans
// of start and end times, rounded out to whole hours, and its trigger
// widens them from then on.
func TestMigration0015OnExistingData(t *testing.T) {
	u, db, h := newServer(t)
	base := time.Date(2025, 3, 1, 10, 30, 0, 0, time.UTC).UnixMilli()
	const day, hour = int64(86_400_000), int64(3_600_000)
	for d := int64(0); d < 3; d++ {
		cn := fmt.Sprintf("mig%02d.example.com", d)
		p := base + d*day
		submit(t, h, cn, timedReportBody(cn, p-2*hour-d, p+60_000, p))
	}
	conn := getConn(t, u)
	defer conn.Close(context.Background())
	ctx := context.Background()
	mustExec(t, conn,
		"DROP TRIGGER reports_time_bounds ON reports",
		"DROP FUNCTION report_time_bounds_widen()",
		"DROP TABLE report_time_bounds",
		"DELETE FROM reportdb_schema_migrations WHERE version = 15",
	)
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	spans := func() string {
		rows, err := conn.Query(ctx, "SELECT day, min_start, max_start, min_end, max_end FROM report_time_bounds ORDER BY day")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		f := func(ms int64) string { return time.UnixMilli(ms).UTC().Format("02T15:04") }
		var got []string
		for rows.Next() {
			var d, a, b, c, e int64
			if err := rows.Scan(&d, &a, &b, &c, &e); err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprintf("%d %s-%s %s-%s", d-100000, f(a), f(b), f(c), f(e)))
		}
		return strings.Join(got, ", ")
	}
	if got, want := spans(), "20148 01T08:00-01T09:00 01T10:00-01T11:00, 20149 02T08:00-02T09:00 02T10:00-02T11:00, "+
		"20150 03T08:00-03T09:00 03T10:00-03T11:00"; got != want {
		t.Errorf("report_time_bounds after the migration: %v, want %v", got, want)
	}
	// the trigger is back: a later report of day 2 widens its day
	p := base + day
	submit(t, h, "late.example.com", timedReportBody("late.example.com", p+5*hour, p+6*hour, p+30*60_000))
	if got, want := spans(), "20148 01T08:00-01T09:00 01T10:00-01T11:00, 20149 02T08:00-02T16:00 02T10:00-02T17:00, "+
		"20150 03T08:00-03T09:00 03T10:00-03T11:00"; got != want {
		t.Errorf("report_time_bounds after a later report: %v, want %v", got, want)
	}
}
