package postgres_test

import (
	"context"
	"fmt"
	"math/rand"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"reportdb/postgres"
)

// TestKeyedLookupsAreExact: lookups by a report's hash or a node's
// configuration version (Puppetboard's report page: certname = N and
// (hash = X or configuration_version = X)) read the ids from report_keys
// (migration 0016; engine's keying) and answer exactly the stored reports
// that match, wherever their days: before the days are archived
// (migration 0020), after, with late reports of archived days not yet
// archived again, and once they are. The reports are random over nine days,
// stored out of order and some twice; configuration versions repeat
// across days and nodes, and some equal another report's hash. Every
// answer (rows and X-Records) is compared with the submitted reports
// filtered; then retention drops the oldest days, their keys go, and the
// answers are checked again. A report whose keys are removed by hand is
// no longer found: the keys are what answers (for the events of one old
// report too, which the newest days' head does not hold).
func TestKeyedLookupsAreExact(t *testing.T) {
	u, db, h := newServer(t)
	ctx := context.Background()
	rng := rand.New(rand.NewSource(16))
	const day, hour = int64(86_400_000), int64(3_600_000)
	base := time.Now().UTC().Truncate(24*time.Hour).UnixMilli() - 8*day
	type report struct {
		certname, version, hash string
		start, produced         int64
	}
	var all []report
	nodes := []string{"a.example.com", "b.example.com", "c.example.com", "d.example.com"}
	versions := []string{"v1", "v2", "v3", "1700000000"}
	for i := 0; i < 120; i++ {
		r := report{certname: nodes[rng.Intn(len(nodes))], version: versions[rng.Intn(len(versions))]}
		r.produced = base + rng.Int63n(9*day)
		r.start = r.produced - rng.Int63n(2*hour)
		all = append(all, r)
	}
	body := func(r report) []byte {
		b := timedReportBody(r.certname, r.start, r.start+60_000, r.produced)
		return []byte(strings.Replace(string(b), fmt.Sprintf(`"configuration_version":"%d"`, r.start),
			fmt.Sprintf(`"configuration_version":%q`, r.version), 1))
	}
	store := func(rs []report) {
		for _, i := range rng.Perm(len(rs)) {
			submit(t, h, rs[i].certname, body(rs[i]))
			if rng.Intn(5) == 0 {
				submit(t, h, rs[i].certname, body(rs[i])) // a duplicate
			}
		}
	}
	// two thirds, then the days before today archived (migration 0020),
	// then the rest: late reports of archived days among them
	store(all[:80])
	if n, err := db.ArchiveKeys(ctx); err != nil || n == 0 {
		t.Fatalf("archived %d keys: %v", n, err)
	}
	store(all[80:])
	iso := func(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z") }
	// the hashes the server gave them
	byStart := map[string]*report{}
	for i := range all {
		byStart[all[i].certname+" "+iso(all[i].start)] = &all[i]
	}
	for _, row := range getRows(t, h, "/pdb/query/v4/reports", url.Values{}) {
		st, _ := time.Parse(time.RFC3339Nano, row["start_time"].(string))
		byStart[row["certname"].(string)+" "+iso(st.UnixMilli())].hash = row["hash"].(string)
	}
	// later reports whose configuration version is an earlier report's hash
	var extra []report
	for i := 0; i < 6; i++ {
		o := all[rng.Intn(len(all))]
		r := report{certname: o.certname, version: o.hash, produced: base + rng.Int63n(9*day)}
		if i%2 == 0 {
			r.certname = nodes[(i/2)%len(nodes)]
		}
		r.start = r.produced - 1000
		extra = append(extra, r)
	}
	store(extra)
	for _, row := range getRows(t, h, "/pdb/query/v4/reports", url.Values{"query": {`["~","configuration_version","^[0-9a-f]{40}$"]`}}) {
		for i := range extra {
			if st, _ := time.Parse(time.RFC3339Nano, row["start_time"].(string)); st.UnixMilli() == extra[i].start && row["certname"] == extra[i].certname {
				extra[i].hash = row["hash"].(string)
			}
		}
	}
	all = append(all, extra...)
	for _, r := range all {
		if r.hash == "" {
			t.Fatalf("report %s %s not stored", r.certname, iso(r.start))
		}
	}

	// ask runs query q on endpoint (reports or events, with include_total)
	// and compares the reports it answers with want's
	ask := func(endpoint, q string, match func(r report) bool) {
		t.Helper()
		var want []string
		for _, r := range all {
			if match(r) {
				want = append(want, r.hash)
			}
		}
		sort.Strings(want)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/pdb/query/v4/"+endpoint+"?"+url.Values{"query": {q}, "include_total": {"true"}}.Encode(), nil))
		if rec.Code != 200 {
			t.Fatalf("%s %s: %d %s", endpoint, q, rec.Code, rec.Body.String())
		}
		rows := getRows(t, h, "/pdb/query/v4/"+endpoint, url.Values{"query": {q}})
		var got []string
		for _, row := range rows {
			k := "hash"
			if endpoint == "events" {
				k = "report"
			}
			got = append(got, row[k].(string))
		}
		sort.Strings(got)
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s %s:\ngot  %v\nwant %v", endpoint, q, got, want)
		}
		if total := rec.Header().Get("X-Records"); total != fmt.Sprint(len(want)) {
			t.Errorf("%s %s: X-Records %s, want %d", endpoint, q, total, len(want))
		}
	}
	check := func() {
		t.Helper()
		v1 := map[string]bool{} // nodes with a report of version v1
		for _, s := range all {
			if s.version == "v1" {
				v1[s.certname] = true
			}
		}
		for i := 0; i < 40; i++ {
			r := all[rng.Intn(len(all))]
			other := nodes[rng.Intn(len(nodes))]
			for _, x := range []string{r.hash, r.version, "0000000000000000000000000000000000000000"} {
				for _, cn := range []string{r.certname, other} {
					ask("reports", fmt.Sprintf(`["and",["=","certname",%q],["or",["=","hash",%q],["=","configuration_version",%q]]]`, cn, x, x),
						func(s report) bool { return s.certname == cn && (s.hash == x || s.version == x) })
					ask("events", fmt.Sprintf(`["and",["=","certname",%q],["=","configuration_version",%q]]`, cn, x),
						func(s report) bool { return s.certname == cn && s.version == x })
				}
			}
			// a subquery asks over every day, whatever the keys' ids
			ask("reports", fmt.Sprintf(`["and",["=","hash",%q],["in","certname",["extract","certname",["select_reports",["=","configuration_version","v1"]]]]]`, r.hash),
				func(s report) bool { return s.hash == r.hash && v1[s.certname] })
			// the events of one report: the newest days first, the keys
			// when it is older (with include_total, in one snapshot)
			ask("events", fmt.Sprintf(`["=","report",%q]`, r.hash), func(s report) bool { return s.hash == r.hash })
			ask("reports", fmt.Sprintf(`["or",["=","hash",%q],["and",["=","certname",%q],["=","configuration_version",%q]]]`, r.hash, other, r.version),
				func(s report) bool { return s.hash == r.hash || (s.certname == other && s.version == r.version) })
		}
	}
	check()

	conn := getConn(t, u)
	defer conn.Close(context.Background())
	// every stored report has its keys
	missing := func() int {
		t.Helper()
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM reports r WHERE NOT EXISTS (SELECT 1 FROM report_keys k
			WHERE k.id = r.id AND k.key = hashtextextended('h' || r.hash, 0)) OR NOT EXISTS (SELECT 1 FROM report_keys k
			WHERE k.id = r.id AND k.key = hashtextextended('c' || r.certname || chr(1) || r.configuration_version, 0))`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := missing(); n != 0 {
		t.Errorf("%d reports without their keys", n)
	}
	// the late reports' days are marked (their keys are read from
	// report_keys until maintenance archives them again), then archived
	// and unmarked; the answers are the same
	lateDays := func() int {
		t.Helper()
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM report_keys_late`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := lateDays(); n == 0 {
		t.Errorf("no archived day marked late after late reports were stored")
	}
	if n, err := db.ArchiveKeys(ctx); err != nil || n == 0 {
		t.Fatalf("archived %d late keys: %v", n, err)
	}
	if n := lateDays(); n != 0 {
		t.Errorf("%d days still marked late after archiving them", n)
	}
	check()
	// and the reports of archived days have them in the archive
	unarchived := func() int {
		t.Helper()
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM reports r, report_keys_merge m WHERE (r.id >> 32) <= m.merged
			AND (NOT EXISTS (SELECT 1 FROM report_keys_archive k WHERE k.id = r.id AND k.key = hashtextextended('h' || r.hash, 0))
			  OR NOT EXISTS (SELECT 1 FROM report_keys_archive k WHERE k.id = r.id
			    AND k.key = hashtextextended('c' || r.certname || chr(1) || r.configuration_version, 0)))`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	var archivedReports int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM reports r, report_keys_merge m WHERE (r.id >> 32) <= m.merged`).Scan(&archivedReports); err != nil || archivedReports < 40 {
		t.Errorf("%d reports in archived days (%v), want most", archivedReports, err)
	}
	if n := unarchived(); n != 0 {
		t.Errorf("%d reports of archived days without their keys in the archive", n)
	}

	// retention drops the oldest days, and their keys
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
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM report_keys WHERE id < $1`,
		(time.UnixMilli(cut).UTC().Truncate(24*time.Hour).UnixMilli()/day+100000)<<32).Scan(&stale); err != nil || stale != 0 {
		t.Errorf("%d keys of dropped days (%v)", stale, err)
	}
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM report_keys_archive WHERE id < $1`,
		(time.UnixMilli(cut).UTC().Truncate(24*time.Hour).UnixMilli()/day+100000)<<32).Scan(&stale); err != nil || stale != 0 {
		t.Errorf("%d archived keys of dropped days (%v)", stale, err)
	}
	if n := missing(); n != 0 {
		t.Errorf("%d reports without their keys after retention", n)
	}
	if n := unarchived(); n != 0 {
		t.Errorf("%d reports of archived days without their keys in the archive after retention", n)
	}
	check()

	// without its keys, a stored report is not found by them
	r := all[0]
	for _, tab := range []string{"report_keys", "report_keys_archive"} {
		mustExec(t, conn, fmt.Sprintf(`DELETE FROM %s WHERE id = (SELECT id FROM reports WHERE hash = '%s')`, tab, r.hash))
	}
	if got := getRows(t, h, "/pdb/query/v4/reports", url.Values{"query": {fmt.Sprintf(
		`["and",["=","certname",%q],["or",["=","hash",%q],["=","configuration_version",%q]]]`, r.certname, r.hash, r.hash)}}); len(got) != 0 {
		t.Errorf("report %s found without its keys: the lookup did not read them", r.hash)
	}
	// the events of one report (report = H, narrowed to the newest days
	// first): the newest report's are found by the head, keys or not; the
	// oldest report's, beyond the head, through its keys (the fallback)
	oldest, newest := all[0], all[0]
	for _, r := range all {
		if r.produced < oldest.produced {
			oldest = r
		}
		if r.produced > newest.produced {
			newest = r
		}
	}
	events := func(r report) int {
		n := len(getRows(t, h, "/pdb/query/v4/events", url.Values{"query": {fmt.Sprintf(`["=","report",%q]`, r.hash)}}))
		// ordered by timestamp, a page: by the report's day too, not by
		// the newest events' days
		if m := len(getRows(t, h, "/pdb/query/v4/events", url.Values{"query": {fmt.Sprintf(`["=","report",%q]`, r.hash)},
			"limit": {"5"}, "order_by": {`[{"field":"timestamp","order":"desc"}]`}})); m != n {
			t.Errorf("events of report %s: %d, ordered by timestamp %d", r.hash, n, m)
		}
		return n
	}
	if n, m := events(oldest), events(newest); n != 1 || m != 1 {
		t.Errorf("events of the oldest and newest reports: %d and %d, want 1 and 1", n, m)
	}
	// a page at an offset, with its total (one snapshot: the head's rows
	// are closed before the keys are read on its connection)
	for _, r := range []report{oldest, newest} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/pdb/query/v4/reports/"+r.hash+"/events?limit=5&offset=1&include_total=true", nil))
		if rec.Code != 200 || rec.Header().Get("X-Records") != "1" || strings.TrimSpace(rec.Body.String()) != "[]" {
			t.Errorf("events of report %s at offset 1: %d X-Records %q %s", r.hash, rec.Code, rec.Header().Get("X-Records"), rec.Body.String())
		}
	}
	for _, tab := range []string{"report_keys", "report_keys_archive"} {
		mustExec(t, conn, fmt.Sprintf(`DELETE FROM %s WHERE id IN (SELECT id FROM reports WHERE hash IN ('%s', '%s'))`,
			tab, oldest.hash, newest.hash))
	}
	if n, m := events(oldest), events(newest); n != 0 || m != 1 {
		t.Errorf("without their keys, events of the oldest and newest reports: %d and %d, want 0 (the keys answer) and 1 (the head)", n, m)
	}
}

// TestMigration0016OnExistingData: migration 0016 applied to a database
// with reports in several days records each report's keys, and its
// trigger records those of the reports stored after it.
func TestMigration0016OnExistingData(t *testing.T) {
	u, db, h := newServer(t)
	base := time.Date(2025, 3, 1, 10, 30, 0, 0, time.UTC).UnixMilli()
	const day = int64(86_400_000)
	for d := int64(0); d < 3; d++ {
		cn := fmt.Sprintf("mig%02d.example.com", d)
		submit(t, h, cn, timedReportBody(cn, base+d*day-60_000, base+d*day, base+d*day))
	}
	conn := getConn(t, u)
	defer conn.Close(context.Background())
	ctx := context.Background()
	mustExec(t, conn,
		"DROP TRIGGER reports_keys ON reports",
		"DROP FUNCTION report_keys_add()",
		"DROP TABLE report_keys",
		"DELETE FROM reportdb_schema_migrations WHERE version = 16",
	)
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	submit(t, h, "after.example.com", timedReportBody("after.example.com", base+day, base+day+1000, base+day+1000))
	var reports, keys, matched int
	if err := conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM reports), (SELECT count(*) FROM report_keys),
		(SELECT count(*) FROM reports r JOIN report_keys k ON k.id = r.id AND k.key IN (hashtextextended('h' || r.hash, 0),
		  hashtextextended('c' || r.certname || chr(1) || r.configuration_version, 0)))`).Scan(&reports, &keys, &matched); err != nil {
		t.Fatal(err)
	}
	if reports != 4 || keys != 8 || matched != 8 {
		t.Errorf("%d reports, %d keys, %d of them the reports' own; want 4, 8, 8", reports, keys, matched)
	}
	for d := int64(0); d < 3; d++ {
		cn := fmt.Sprintf("mig%02d.example.com", d)
		if got := getRows(t, h, "/pdb/query/v4/reports", url.Values{"query": {fmt.Sprintf(
			`["and",["=","certname",%q],["=","configuration_version","%d"]]`, cn, base+d*day-60_000)}}); len(got) != 1 {
			t.Errorf("%s by its configuration version: %d reports", cn, len(got))
		}
	}
}

// TestMigration0017OnExistingData: on a database whose report_keys has
// migration 0016's index (key, id), migration 0017 builds the index by
// day and drops the old one; lookups by hash and by configuration version
// still find the reports of every day, their plan reads the new index
// (with sequential scans off: these tables are too small for the planner
// to prefer an index otherwise), and retention deletes the dropped day's
// keys.
func TestMigration0017OnExistingData(t *testing.T) {
	u, db, h := newServer(t)
	ctx := context.Background()
	const day = int64(86_400_000)
	base := time.Now().UTC().Truncate(24*time.Hour).UnixMilli() - 3*day + 36_000_000
	for d := int64(0); d < 3; d++ {
		cn := fmt.Sprintf("mig%02d.example.com", d)
		submit(t, h, cn, timedReportBody(cn, base+d*day-60_000, base+d*day, base+d*day))
	}
	conn := getConn(t, u)
	defer conn.Close(ctx)
	mustExec(t, conn,
		"DROP INDEX report_keys_day_key",
		"CREATE INDEX report_keys_key ON report_keys (key, id)",
		"DELETE FROM reportdb_schema_migrations WHERE version = 17",
	)
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(ctx, "SELECT indexname FROM pg_indexes WHERE tablename = 'report_keys' ORDER BY 1")
	if err != nil {
		t.Fatal(err)
	}
	indexes, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(indexes) != "[report_keys_day_key]" {
		t.Fatalf("report_keys indexes %v, want [report_keys_day_key]", indexes)
	}
	var hash string
	if err := conn.QueryRow(ctx, "SELECT hash FROM reports WHERE certname = 'mig00.example.com'").Scan(&hash); err != nil {
		t.Fatal(err)
	}
	for d := int64(0); d < 3; d++ {
		cn := fmt.Sprintf("mig%02d.example.com", d)
		if got := getRows(t, h, "/pdb/query/v4/reports", url.Values{"query": {fmt.Sprintf(
			`["and",["=","certname",%q],["=","configuration_version","%d"]]`, cn, base+d*day-60_000)}}); len(got) != 1 {
			t.Errorf("%s by its configuration version: %d reports", cn, len(got))
		}
	}
	if got := getRows(t, h, "/pdb/query/v4/reports", url.Values{"query": {fmt.Sprintf(`["=","hash",%q]`, hash)}}); len(got) != 1 {
		t.Errorf("by hash: %d reports, want 1", len(got))
	}

	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	for _, set := range []string{"SET LOCAL enable_seqscan = off", "SET LOCAL enable_bitmapscan = off"} {
		if _, err := tx.Exec(ctx, set); err != nil {
			t.Fatal(err)
		}
	}
	prows, err := tx.Query(ctx, "EXPLAIN "+postgres.Dialect{}.ReportKeysSQL(), []string{"h" + hash})
	if err != nil {
		t.Fatal(err)
	}
	lines, err := pgx.CollectRows(prows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	plan := strings.Join(lines, "\n")
	if !strings.Contains(plan, "report_keys_day_key") || !regexp.MustCompile(`Index Cond: \(\(\(\(id >> 32\)\) = [a-z_]+\.day\) AND \(key = `).MatchString(plan) {
		t.Errorf("the lookup does not read report_keys_day_key by day:\n%s", plan)
	}
	tx.Rollback(ctx)

	if _, err := db.DeleteReportsBefore(ctx, base+day); err != nil {
		t.Fatal(err)
	}
	var left, old int
	if err := conn.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE NOT EXISTS (SELECT 1 FROM reports r WHERE r.id = k.id))
		FROM report_keys k`).Scan(&left, &old); err != nil {
		t.Fatal(err)
	}
	if left != 4 || old != 0 {
		t.Errorf("after retention: %d keys, %d of them of no report; want 4, 0", left, old)
	}
}

// TestArchiveKeysWhileIngesting: reports of past days stored while those
// days are archived, one day after another (migration 0020: the trigger
// reads how far archiving goes while the archiver raises it and copies),
// are all found by their keys afterwards, by hash and by configuration
// version, through the lookup the engine runs: while the days that took
// reports after they were archived are marked late, and once archiving
// has copied them again, when the archive holds the keys of every report
// of the archived days.
func TestArchiveKeysWhileIngesting(t *testing.T) {
	u, db, h := newServer(t)
	ctx := context.Background()
	const day = int64(86_400_000)
	today := time.Now().UTC().Truncate(24 * time.Hour).UnixMilli()
	const days = 30
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var stored atomic.Int64
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				cn := fmt.Sprintf("w%d-%d.example.com", w, i%5)
				start := today - int64(i%days+1)*day + int64(i)*1000 + int64(w)*100
				submit(t, h, cn, timedReportBody(cn, start, start+50, start+50))
				stored.Add(1)
			}
		}(w)
	}
	// each step waits for reports stored since the last one (however
	// slow the machine), at most a second
	atLeast := func(n int64) {
		for deadline := time.Now().Add(time.Second); stored.Load() < n && time.Now().Before(deadline); {
			time.Sleep(2 * time.Millisecond)
		}
	}
	var archived int64
	for d := int64(days); d >= 1; d-- {
		atLeast(stored.Load() + 2)
		n, err := postgres.ArchiveKeysThrough(ctx, db, today-d*day)
		if err != nil {
			t.Fatal(err)
		}
		archived += n
	}
	atLeast(stored.Load() + 6)
	close(stop)
	wg.Wait()

	conn := getConn(t, u)
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT id, hash, certname, configuration_version FROM reports ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	type rep struct {
		id                        int64
		hash, certname, cfversion string
	}
	reps, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (rep, error) {
		var x rep
		return x, r.Scan(&x.id, &x.hash, &x.certname, &x.cfversion)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) < 30 || archived == 0 {
		t.Fatalf("%d reports stored, %d keys archived while storing: too few to tell", len(reps), archived)
	}
	lookups := func(state string) {
		t.Helper()
		for _, r := range reps {
			for _, key := range []string{"h" + r.hash, "c" + r.certname + "\x01" + r.cfversion} {
				if ids := lookupIDs(t, conn, key); !slices.Contains(ids, r.id) {
					t.Errorf("%s: report %d (%s) not found by key %q: ids %v", state, r.id, r.certname, key, ids)
				}
			}
		}
	}
	// the days archived while reports came are marked late; their keys
	// are read from report_keys
	var late int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM report_keys_late`).Scan(&late); err != nil || late == 0 {
		t.Errorf("%d days marked late (%v): the writers stored nothing into archived days", late, err)
	}
	lookups("with late days")
	// archived again, every key is in the archive and no day is marked
	if _, err := postgres.ArchiveKeysThrough(ctx, db, today-day); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM report_keys_late`).Scan(&late); err != nil || late != 0 {
		t.Errorf("%d days still marked late (%v)", late, err)
	}
	lookups("archived")
	var missing int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM report_keys k, report_keys_merge m
		WHERE (k.id >> 32) <= m.merged AND NOT EXISTS (SELECT 1 FROM report_keys_archive a WHERE a.key = k.key AND a.id = k.id)`).Scan(&missing); err != nil {
		t.Fatal(err)
	}
	if missing != 0 {
		t.Errorf("%d keys of archived days not in the archive", missing)
	}
}

// TestArchiveKeysWaitsForKeyWriters: archiving does not copy the keys of
// a day (and does not say they are archived) while a transaction that may
// have read how far archiving went before it was raised is still open (as
// the trigger of report_keys, it holds the advisory lock 0x72646205
// shared); it copies them once that transaction ends.
func TestArchiveKeysWaitsForKeyWriters(t *testing.T) {
	u, db, h := newServer(t)
	ctx := context.Background()
	const day = int64(86_400_000)
	start := time.Now().UTC().Truncate(24*time.Hour).UnixMilli() - 2*day
	submit(t, h, "a.example.com", timedReportBody("a.example.com", start, start+50, start+50))
	writer := getConn(t, u)
	defer writer.Close(ctx)
	tx, err := writer.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock_shared(x'72646205'::bigint)"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := postgres.ArchiveKeysThrough(ctx, db, start)
		done <- err
	}()
	conn := getConn(t, u)
	defer conn.Close(ctx)
	merged := func() (archiving, merged, keys int64) {
		t.Helper()
		if err := conn.QueryRow(ctx, `SELECT archiving, merged, (SELECT count(*) FROM report_keys_archive) FROM report_keys_merge`).Scan(&archiving, &merged, &keys); err != nil {
			t.Fatal(err)
		}
		return
	}
	time.Sleep(300 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("archiving returned (%v) while a writer of keys was open", err)
	default:
	}
	a, m, n := merged()
	if want := start/day + 100000; a != want || m != -1 || n != 0 {
		t.Errorf("while waiting: archiving %d merged %d, %d keys archived; want %d, -1, 0", a, m, n, want)
	}
	tx.Rollback(ctx)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if a, m, n := merged(); a != m || n != 2 {
		t.Errorf("after: archiving %d merged %d, %d keys archived; want equal, 2", a, m, n)
	}
}

// TestLateMarkOutlivesAConcurrentCopy: archiving a day marked late
// removes the mark only if no batch marked it again meanwhile. Here a
// batch (its key and its mark, by hand) is still open while the day is
// copied again: the copy cannot see its key, the mark stays (the lookup
// reads the day from report_keys and finds the key), and the next run
// archives the key and removes the mark.
func TestLateMarkOutlivesAConcurrentCopy(t *testing.T) {
	u, db, h := newServer(t)
	ctx := context.Background()
	const day = int64(86_400_000)
	start := time.Now().UTC().Truncate(24*time.Hour).UnixMilli() - 2*day
	submit(t, h, "a.example.com", timedReportBody("a.example.com", start, start+50, start+50))
	if _, err := db.ArchiveKeys(ctx); err != nil {
		t.Fatal(err)
	}
	submit(t, h, "b.example.com", timedReportBody("b.example.com", start+1000, start+1050, start+1050)) // late
	conn := getConn(t, u)
	defer conn.Close(ctx)
	d := start/day + 100000 // the day's report ids >> 32
	var marks int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM report_keys_late WHERE day = $1`, d).Scan(&marks); err != nil || marks != 1 {
		t.Fatalf("%d marks for the late report's day (%v), want 1", marks, err)
	}

	batch := getConn(t, u)
	defer batch.Close(ctx)
	tx, err := batch.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	fake := d<<32 | 4_000_000_000
	if _, err := tx.Exec(ctx, `INSERT INTO report_keys (key, id) VALUES (hashtextextended('hfake', 0), $1)`, fake); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO report_keys_late (day, gen) VALUES ($1, nextval('report_keys_late_gen'))
		ON CONFLICT (day) DO UPDATE SET gen = EXCLUDED.gen`, d); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := postgres.ArchiveKeysThrough(ctx, db, start)
		done <- err
	}()
	time.Sleep(300 * time.Millisecond) // the copy done, the mark's removal waiting for the batch
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	found := func() (inLookup, inArchive bool) {
		t.Helper()
		inLookup = slices.Contains(lookupIDs(t, conn, "hfake"), fake)
		if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM report_keys_archive WHERE id = $1)`, fake).Scan(&inArchive); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM report_keys_late WHERE day = $1`, d).Scan(&marks); err != nil || marks != 1 {
		t.Errorf("after a copy that could not see the batch: %d marks (%v), want 1", marks, err)
	}
	if l, a := found(); !l || a {
		t.Errorf("the batch's key: found by the lookup %v, in the archive %v; want true, false", l, a)
	}
	if _, err := db.ArchiveKeys(ctx); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM report_keys_late`).Scan(&marks); err != nil || marks != 0 {
		t.Errorf("after the next run: %d marks (%v), want 0", marks, err)
	}
	if l, a := found(); !l || !a {
		t.Errorf("after the next run, the batch's key: found by the lookup %v, in the archive %v; want true, true", l, a)
	}
}

// lookupIDs runs the engine's key lookup (postgres.Dialect.ReportKeysSQL)
// for one key and returns the ids it reads.
func lookupIDs(t *testing.T, conn *pgx.Conn, key string) []int64 {
	t.Helper()
	rows, err := conn.Query(context.Background(), postgres.Dialect{}.ReportKeysSQL(), []string{key})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		t.Fatal(err)
	}
	return ids
}
