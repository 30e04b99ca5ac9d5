package storetest

import (
	"errors"
	"fmt"
	"math/rand"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"reportdb"
	"reportdb/engine"
	"reportdb/schema"
	"reportdb/store"
)

// RunDistinctCounts checks the event counts of distinct_resources windows
// answered from the write-time tables (resource_latest, distinct_rollup:
// schema/distinct.go) against the scan of the events, on random
// data: events out of order across reports and days, equal timestamps,
// duplicate reports (within a batch and resent), concurrent batches of
// the same nodes, NULL and non-NULL
// property and name, retention, and reports older than the retention
// cutoff arriving after it. The scan answers the same query with a filter
// that does not change the rows but is not covered (a certname that no
// node has); both answers must be the same row for row. The write-time
// state itself is compared with a model computed from the reports kept.
func RunDistinctCounts(t *testing.T, open Opener) {
	backend := open(t)
	h := NewServer(t, backend)
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))

	const hour = int64(3600000)
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	var kept []*reportdb.Report // the reports stored and not expired
	seen := map[string]bool{}
	n := 0
	newReport := func(producer int64) *reportdb.Report {
		n++
		return randomEventsReport(t, rng, n, producer)
	}
	var mu sync.Mutex
	storeBatch := func(rs []*reportdb.Report) {
		if len(rs) == 0 {
			return
		}
		out, errs, err := backend.StoreReports(ctx(t), rs)
		if err == nil {
			err = errors.Join(errs...)
		}
		if err != nil {
			t.Errorf("store: %v", err)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for i, o := range out {
			if o == reportdb.Stored {
				if seen[rs[i].Hash] {
					t.Errorf("report %s stored twice", rs[i].Hash)
				}
				seen[rs[i].Hash] = true
				kept = append(kept, rs[i])
			}
		}
	}
	ingest := func(reports int, from, span int64) {
		t.Helper()
		var all []*reportdb.Report
		for i := 0; i < reports; i++ {
			at := from + rng.Int63n(span)
			if rng.Intn(2) == 0 {
				// on a grid too: other reports' events share timestamps
				at -= (at - from) % (3 * 3600000)
			}
			all = append(all, newReport(at))
		}
		// batches of 1-8 in random order, with duplicates in and across them
		rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
		var batches [][]*reportdb.Report
		var batch []*reportdb.Report
		for _, r := range all {
			batch = append(batch, r)
			if rng.Intn(5) == 0 {
				batch = append(batch, r)
			}
			if rng.Intn(8) == 0 && len(kept) > 0 {
				batch = append(batch, kept[rng.Intn(len(kept))])
			}
			if len(batch) >= 1+rng.Intn(8) {
				batches = append(batches, batch)
				batch = nil
			}
		}
		batches = append(batches, batch)
		// four writers at once: batches of the same nodes race
		work := make(chan []*reportdb.Report)
		var wg sync.WaitGroup
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for b := range work {
					storeBatch(b)
				}
			}()
		}
		for _, b := range batches {
			work <- b
		}
		close(work)
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
	}

	round := 0
	beforeNewest := 0 // windows answered from the tables that end before the newest event
	check := func(validFrom int64) {
		t.Helper()
		round++
		newest, second := int64(-1<<62), int64(-1<<62) // the two newest event timestamps
		for _, r := range kept {
			for _, e := range r.Events {
				switch {
				case e.Timestamp > newest:
					newest, second = e.Timestamp, newest
				case e.Timestamp < newest && e.Timestamp > second:
					second = e.Timestamp
				}
			}
		}
		twiceAfter := checkLatest(t, backend, kept, validFrom, newest)
		windows := 0
		for i := 0; i < 40; i++ {
			// ends at or after the newest event, or before it (answered
			// from the tables unless a key has two timestamps after the
			// end or the start is before valid_from)
			end := newest - int64(rng.Intn(3))*hour + int64(rng.Intn(2))*int64(rng.Intn(100000))
			if i%4 == 0 {
				end = newest
			}
			start := end - int64(rng.Intn(60))*hour/2 - int64(rng.Intn(3))*int64(rng.Intn(3600000))
			if i%4 == 1 && second > validFrom {
				// ends before the newest events and no key has two
				// timestamps after its end: the tables answer it, with
				// the previous side of the newest rows
				end = second
				start = max(start, validFrom)
			}
			filter := []string{
				fmt.Sprintf(`[">","timestamp",%q]`, iso(start-int64(rng.Intn(2)))),
				fmt.Sprintf(`["<=","timestamp",%q]`, iso(end)),
			}
			if rng.Intn(3) == 0 {
				filter = append(filter, fmt.Sprintf(`[">=","timestamp",%q]`, iso(start+int64(rng.Intn(5))*hour/3)))
			}
			if rng.Intn(3) == 0 {
				filter = append(filter, fmt.Sprintf(`["<","timestamp",%q]`, iso(end-int64(rng.Intn(4))*hour/4)))
			}
			q := `["and",` + strings.Join(filter, ",") + `]`
			uncovered := `["and",` + strings.Join(filter, ",") + `,["not",["=","certname","no.such.node"]]]`
			params := url.Values{"summarize_by": {"resource"}, "distinct_resources": {"true"},
				"distinct_start_time": {iso(start)}, "distinct_end_time": {iso(end)}}
			if rng.Intn(4) == 0 {
				params.Set("counts_filter", `[">","failures",0]`)
			}
			if rng.Intn(4) == 0 {
				params.Set("order_by", `[{"field":"successes","order":"desc"},{"field":"resource_title"},{"field":"resource_type"}]`)
				params.Set("limit", "3")
				params.Set("offset", "1")
			}
			for _, path := range []string{"/pdb/query/v4/event-counts", "/pdb/query/v4/aggregate-event-counts"} {
				p1, p2 := url.Values{}, url.Values{}
				for k, v := range params {
					if path == "/pdb/query/v4/aggregate-event-counts" && (k == "order_by" || k == "limit" || k == "offset") {
						continue
					}
					p1[k], p2[k] = v, v
				}
				p1.Set("query", q)
				p2.Set("query", uncovered)
				got, want := fetchBody(t, h, path, p1), fetchBody(t, h, path, p2)
				if got != want {
					t.Fatalf("round %d, %s %s:\ntables %s\nscan   %s", round, path, p1.Encode(), got, want)
				}
			}
			if !twiceAfter(end) && start >= validFrom {
				windows++
				if end < newest {
					beforeNewest++
				}
			}
		}
		if windows == 0 {
			t.Fatalf("round %d: no window was answered from the tables", round)
		}
		checkLatestReports(t, h, round)
	}

	// 1: a day and a half of reports, in random batches
	ingest(150, base, 36*hour)
	check(-1 << 62)
	// 2: more, older and newer, out of order
	ingest(100, base-12*hour, 60*hour)
	check(-1 << 62)
	// 3: retention at the start of the second day, then reports from
	// before the cutoff (late) and after it
	cutoff := base + 24*hour
	if _, err := backend.DeleteReportsBefore(ctx(t), cutoff); err != nil {
		t.Fatal(err)
	}
	var keep []*reportdb.Report
	expired := int64(-1 << 62)
	for _, r := range kept {
		if r.ProducerTimestamp >= cutoff {
			keep = append(keep, r)
			continue
		}
		for _, e := range r.Events {
			expired = max(expired, e.Timestamp)
		}
	}
	kept = keep
	validFrom := expired + 1
	check(validFrom)
	ingest(60, cutoff-6*hour, 30*hour)
	check(validFrom)
	// 4: after compaction of the rollups, the same answers
	if c := backend.Housekeeping().Compactor; c != nil {
		if _, err := c.CompactRollups(ctx(t)); err != nil {
			t.Fatal(err)
		}
		check(validFrom)
	}
	if beforeNewest == 0 {
		t.Errorf("no window answered from the tables ended before the newest event")
	}
}

// checkLatestReports compares the queries of the nodes' latest reports as
// a backend may answer them from a copy of each node's latest report
// (PostgreSQL's latest_reports) with the same queries made in a shape
// that tests the certnames pointers (an OR with a term that matches no
// report), byte for byte.
func checkLatestReports(t *testing.T, h http.Handler, round int) {
	t.Helper()
	const latest, none = `["=","latest_report?",true]`, `["=","certname","no.such.node"]`
	for _, c := range []struct {
		path  string
		query string
		extra url.Values
	}{
		{"/pdb/query/v4/reports", `["extract",["certname","hash","producer_timestamp","status"],%s]`,
			url.Values{"order_by": {`[{"field":"certname"}]`}}},
		{"/pdb/query/v4/reports", `["extract",["certname","hash"],["and",%s,["=","certname","node1.example.com"]]]`, nil},
		{"/pdb/query/v4/reports", `["extract",["certname","hash","end_time"],%s]`,
			url.Values{"order_by": {`[{"field":"end_time","order":"desc"},{"field":"certname"}]`}, "limit": {"2"}, "offset": {"1"}, "include_total": {"true"}}},
		{"/pdb/query/v4/event-counts", `%s`, url.Values{"summarize_by": {"certname"}}},
		{"/pdb/query/v4/aggregate-event-counts", `%s`, url.Values{"summarize_by": {"certname"}}},
		{"/pdb/query/v4/nodes", `["extract",["certname","latest_report_hash","latest_report_status"]]`,
			url.Values{"order_by": {`[{"field":"certname"}]`}}},
		{"/pdb/query/v4/events", `["extract",[["function","count"],"status"],%s,["group_by","status"]]`,
			url.Values{"order_by": {`[{"field":"status"}]`}}},
		{"/pdb/query/v4/events", `["and",%s,["=","certname","node2.example.com"]]`,
			url.Values{"order_by": {`[{"field":"timestamp"},{"field":"resource_title"},{"field":"status"},{"field":"property"},{"field":"name"}]`}}},
		{"/pdb/query/v4/events", `["extract",["certname","report","status","resource_title","timestamp"],%s]`,
			url.Values{"order_by": {`[{"field":"certname"},{"field":"timestamp","order":"desc"},{"field":"resource_title"},{"field":"status"}]`}, "limit": {"7"}, "offset": {"2"}}},
		{"/pdb/query/v4/event-counts", `%s`, url.Values{"summarize_by": {"resource"}}},
	} {
		p1, p2 := url.Values{}, url.Values{}
		for k, v := range c.extra {
			p1[k], p2[k] = v, v
		}
		if strings.Contains(c.query, "%s") {
			p1.Set("query", fmt.Sprintf(c.query, latest))
			p2.Set("query", fmt.Sprintf(c.query, `["or",`+latest+`,`+none+`]`))
		} else {
			p1.Set("query", c.query)
			p2.Set("query", c.query)
		}
		got, want := fetchBody(t, h, c.path, p1), fetchBody(t, h, c.path, p2)
		if got != want {
			t.Fatalf("round %d, %s %s:\nlatest %s\nscan   %s", round, c.path, p1.Encode(), got, want)
		}
		if c.path == "/pdb/query/v4/reports" && (got == "[]" || got == "") {
			t.Fatalf("round %d, %s %s: no rows", round, c.path, p1.Encode())
		}
	}
}

func ptr(s string) *string { return &s }

func iso(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z") }

// fetchBody runs a GET on h and returns the body of its 200 answer.
func fetchBody(t *testing.T, h http.Handler, path string, params url.Values) string {
	t.Helper()
	rows := fetch(t, h, path, params)
	b := canonical(rows)
	if params.Get("order_by") != "" {
		// ordered and paged: the order is part of the answer
		b = nil
		for _, r := range rows {
			b = append(b, fmt.Sprint(r))
		}
	}
	return strings.Join(b, "\n")
}

// checkLatest compares resource_latest with the newest events of each key
// among the kept reports, for the keys whose newest event is at or after
// validFrom (older rows may have been dropped by retention), and checks
// that its newest row is the newest kept event.
func checkLatest(t *testing.T, b engine.Backend, kept []*reportdb.Report, validFrom, newest int64) (twiceAfter func(end int64) bool) {
	t.Helper()
	type row struct {
		ts, prev           int64
		counts, prevCounts [4]int64
	}
	statusIdx := map[string]int{"failure": 0, "skipped": 1, "success": 2, "noop": 3}
	key := func(r *reportdb.Report, e reportdb.Event) string {
		opt := func(s *string) string {
			if s == nil {
				return ""
			}
			return "=" + *s
		}
		return strings.Join([]string{r.Certname, e.ResourceType, e.ResourceTitle, opt(e.Property), opt(e.Name)}, "\x00")
	}
	// per key, every timestamp's counts; then the newest two
	all := map[string]map[int64]*[4]int64{}
	for _, r := range kept {
		for _, e := range r.Events {
			k := key(r, e)
			if all[k] == nil {
				all[k] = map[int64]*[4]int64{}
			}
			if all[k][e.Timestamp] == nil {
				all[k][e.Timestamp] = &[4]int64{}
			}
			all[k][e.Timestamp][statusIdx[e.Status]]++
		}
	}
	model := map[string]*row{}
	for k, byTS := range all {
		var tss []int64
		for ts := range byTS {
			tss = append(tss, ts)
		}
		slices.Sort(tss)
		m := &row{ts: tss[len(tss)-1], counts: *byTS[tss[len(tss)-1]], prev: schema.NoTime}
		if len(tss) > 1 {
			m.prev, m.prevCounts = tss[len(tss)-2], *byTS[tss[len(tss)-2]]
		}
		model[k] = m
	}
	rows, err := b.Query(ctx(t), store.Statement{SQL: `SELECT certname, resource_type, resource_title, property_key,
		name_key, ts, n_failure, n_skipped, n_success, n_noop, prev_ts, prev_n_failure, prev_n_skipped,
		prev_n_success, prev_n_noop FROM resource_latest`})
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string]*row{}
	dbNewest := int64(-1 << 62)
	for rows.Next() {
		var c, ty, ti, pk, nk string
		var r row
		if err := rows.Scan(&c, &ty, &ti, &pk, &nk, &r.ts, &r.counts[0], &r.counts[1], &r.counts[2], &r.counts[3],
			&r.prev, &r.prevCounts[0], &r.prevCounts[1], &r.prevCounts[2], &r.prevCounts[3]); err != nil {
			t.Fatal(err)
		}
		got[strings.Join([]string{c, ty, ti, pk, nk}, "\x00")] = &r
		dbNewest = max(dbNewest, r.ts)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if dbNewest != newest {
		t.Errorf("newest resource_latest row at %d, newest kept event at %d", dbNewest, newest)
	}
	var keys []string
	for k := range model {
		keys = append(keys, k)
	}
	for k := range got {
		if model[k] == nil {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		m, g := model[k], got[k]
		if (m == nil || m.ts < validFrom) && (g == nil || g.ts < validFrom) {
			continue
		}
		if m != nil && g != nil && max(m.prev, g.prev) < validFrom {
			// both previous timestamps are older than what retention
			// removed: the stored one may be a removed event, and no
			// window reads it
			m2, g2 := *m, *g
			m2.prev, m2.prevCounts, g2.prev, g2.prevCounts = 0, [4]int64{}, 0, [4]int64{}
			m, g = &m2, &g2
		}
		if m == nil || g == nil || *m != *g {
			t.Errorf("resource_latest %q: stored %+v, model %+v", strings.ReplaceAll(k, "\x00", " | "), g, m)
		}
	}
	// twiceAfter: whether a key has two timestamps after end
	return func(end int64) bool {
		for _, m := range model {
			if m.prev > end {
				return true
			}
		}
		return false
	}
}
