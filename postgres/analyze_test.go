package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
)

// lastAnalyze returns pg_stat_user_tables.last_analyze of each table (nil:
// never analyzed) and n_mod_since_analyze.
func lastAnalyze(t *testing.T, u string, table string) (*time.Time, int64) {
	t.Helper()
	conn := getConn(t, u)
	defer conn.Close(context.Background())
	var last *time.Time
	var mod int64
	err := conn.QueryRow(context.Background(), `SELECT last_analyze, n_mod_since_analyze FROM pg_stat_user_tables WHERE relname = $1`, table).Scan(&last, &mod)
	if err != nil {
		t.Fatalf("%s: %v", table, err)
	}
	return last, mod
}

// TestAnalyzeAfterIngest: the tables an ingest inserted into (certnames,
// latest_reports, resource_latest, report_keys, today's partitions) are ANALYZEd in the background once the
// rows inserted pass the threshold, not before; AnalyzeChanged (the end of
// an import) analyzes whatever changed, threshold or not.
func TestAnalyzeAfterIngest(t *testing.T) {
	u, db, h := newServer(t)
	now := time.Now().UTC()
	today := now.Format("20060102")
	tables := []string{"reports_" + today, "certnames", "latest_reports", "resource_latest", "resource_events_" + today,
		"report_data_" + today}
	// the migrations analyze the tables they fill: start from none
	reset := getConn(t, u)
	if _, err := reset.Exec(context.Background(), `SELECT pg_stat_reset_single_table_counters(oid) FROM pg_class
		WHERE relname IN ('resource_latest', 'distinct_rollup', 'certnames', 'latest_reports', 'report_keys')`); err != nil {
		t.Fatal(err)
	}
	reset.Close(context.Background())

	// below the default threshold (500 rows): nothing is analyzed
	for i := 0; i < 3; i++ {
		cn := fmt.Sprintf("a%d", i)
		submit(t, h, cn, reportBody(cn, now.UnixMilli()-int64(i)*1000))
	}
	time.Sleep(1500 * time.Millisecond)
	for _, table := range tables {
		if last, _ := lastAnalyze(t, u, table); last != nil {
			t.Errorf("%s analyzed at %v after 3 reports, below the threshold", table, last)
		}
	}

	// a threshold of 5 rows: the next reports take every table past it
	// (report_keys, two rows a report, at the first of them: analyzed
	// alone then)
	db.SetAnalyze(5, 0, time.Millisecond)
	for i := 0; i < 3; i++ {
		cn := fmt.Sprintf("b%d", i)
		submit(t, h, cn, reportBody(cn, now.UnixMilli()-int64(i)*1000-500))
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if last, _ := lastAnalyze(t, u, "report_keys"); last != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("report_keys not analyzed after passing the threshold")
		}
		time.Sleep(100 * time.Millisecond)
	}
	pending := slices.Clone(tables)
	for i := 0; len(pending) > 0 && time.Now().Before(deadline); i++ {
		pending = slices.DeleteFunc(pending, func(table string) bool {
			last, mod := lastAnalyze(t, u, table)
			return last != nil && mod < 6
		})
		if i%20 == 19 && len(pending) > 0 {
			// tables that passed the threshold while report_keys' run was
			// going (a loaded machine) wait for the next stored report
			cn := fmt.Sprintf("c%d", i)
			submit(t, h, cn, reportBody(cn, now.UnixMilli()-int64(i)*1000-700))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(pending) > 0 {
		t.Fatalf("not analyzed after passing the threshold: %v", pending)
	}
	first, _ := lastAnalyze(t, u, "reports_"+today)

	// a report of three days ago, analyzed in the background (threshold 1)
	db.SetAnalyze(1, 0, time.Millisecond)
	past := now.Add(-72 * time.Hour)
	pastTables := []string{"resource_events_" + past.Format("20060102"), "report_data_" + past.Format("20060102"),
		"reports_" + past.Format("20060102")}
	submit(t, h, "p0", reportBody("p0", past.UnixMilli()))
	deadline = time.Now().Add(30 * time.Second)
	for _, table := range pastTables {
		for {
			if last, _ := lastAnalyze(t, u, table); last != nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s not analyzed in the background", table)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	// AnalyzeChanged with vacuum: VACUUM (ANALYZE) of every table written
	// since the start (the past partitions too, analyzed in the background
	// already), below any threshold
	db.SetAnalyze(1000000, 0, time.Hour)
	submit(t, h, "c0", reportBody("c0", now.UnixMilli()-9000))
	got, err := db.AnalyzeChanged(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	want := append(slices.Clone(tables), append(pastTables, "report_keys")...)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("AnalyzeChanged analyzed %v, want %v", got, want)
	}
	deadline = time.Now().Add(30 * time.Second)
	for {
		last, _ := lastAnalyze(t, u, "reports_"+today)
		if last != nil && last.After(*first) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("reports_%s.last_analyze still %v after AnalyzeChanged", today, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
	conn := getConn(t, u)
	defer conn.Close(context.Background())
	for _, table := range want {
		for {
			var vacuumed *time.Time
			if err := conn.QueryRow(context.Background(), `SELECT last_vacuum FROM pg_stat_user_tables WHERE relname = $1`, table).Scan(&vacuumed); err != nil {
				t.Fatal(err)
			}
			if vacuumed != nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s not vacuumed by AnalyzeChanged(vacuum)", table)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// nothing changed since: nothing to do
	if got, err := db.AnalyzeChanged(context.Background(), false); err != nil || len(got) != 0 {
		t.Errorf("second AnalyzeChanged: %v %v", got, err)
	}
}
