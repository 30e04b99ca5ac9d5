package postgres

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"reportdb"
)

// Statistics after ingest, without autovacuum.
//
// The planner's estimates come from ANALYZE. Autovacuum analyzes a table
// after changes of 10% of it (autovacuum_analyze_scale_factor) — when it
// runs at all — and Maintain only touches closed days, an hour later. After
// a large ingest into today's partitions (or an import into an empty
// database) the statistics would say the tables are empty, and point
// lookups and the first reports page get plans 10-200 times slower.
//
// So each instance counts the rows it inserts per table (certnames,
// latest_reports, resource_latest, and each day partition of reports,
// resource_events and report_data), and once a table has received more
// than
//
//	min(rows, 500 + fraction × its row estimate)
//
// rows since this instance last analyzed it (by default 50,000 rows or
// 500 + 10%, whichever comes first; SetAnalyze changes them), it ANALYZEs that table in the background:
// at most one run at a time per instance, runs at least 30 s apart, and one instance at a time across instances (an advisory lock;
// an instance that finds it held tries again later, keeping its counts).
// ANALYZE reads a sample (300 × default_statistics_target rows), so its
// cost does not grow with the table. The partitioned parents are not
// analyzed (as autovacuum does not); queries are planned on partitions.
const (
	DefaultAnalyzeRows           = 50000
	DefaultAnalyzeFraction       = 0.1
	DefaultAnalyzeInterval       = 30 * time.Second
	analyzeBaseRows              = 500
	lockAnalyze            int64 = 0x726462_0a
)

// analyzer is the per-instance state of the statistics upkeep.
type analyzer struct {
	mu      sync.Mutex
	pending map[string]int64 // table -> rows inserted since this instance analyzed it
	touched map[string]bool  // tables inserted into since the last AnalyzeChanged with vacuum
	running bool
	last    time.Time
	wg      sync.WaitGroup
	// settings (the Default* constants when zero)
	rows     int64
	fraction float64
	interval time.Duration
	off      bool
	// done is called after each background run (tests).
	done func(analyzed []string, err error)
}

// SetAnalyze sets the thresholds of the background ANALYZE: rows (0: the
// default), fraction of the table (0: the default) and the least interval
// between runs (0: the default). rows < 0 turns it off.
func (db *DB) SetAnalyze(rows int64, fraction float64, interval time.Duration) {
	a := &db.analyze
	a.mu.Lock()
	defer a.mu.Unlock()
	a.off = rows < 0
	a.rows, a.fraction, a.interval = rows, fraction, interval
}

func (a *analyzer) settings() (rows int64, fraction float64, interval time.Duration) {
	rows, fraction, interval = a.rows, a.fraction, a.interval
	if rows <= 0 {
		rows = DefaultAnalyzeRows
	}
	if fraction <= 0 {
		fraction = DefaultAnalyzeFraction
	}
	if interval <= 0 {
		interval = DefaultAnalyzeInterval
	}
	return
}

// noteStored counts the rows a committed batch inserted (reports without
// an error in errs, which may be nil) and starts a background ANALYZE when
// a table passed its threshold.
func (db *DB) noteStored(reports []*reportdb.Report, outcomes []reportdb.Outcome, errs []error) {
	a := &db.analyze
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.pending == nil {
		a.pending = map[string]int64{}
		a.touched = map[string]bool{}
	}
	var n int64
	for i, r := range reports {
		if outcomes[i] != reportdb.Stored || (errs != nil && errs[i] != nil) {
			continue
		}
		n++
		d := dayIndex(r.ProducerTimestamp)
		for _, t := range []string{"reports", "report_data"} {
			a.pending[partitionName(t, d)]++
			a.touched[partitionName(t, d)] = true
		}
		if len(r.Events) > 0 {
			a.pending[partitionName("resource_events", d)] += int64(len(r.Events))
			a.touched[partitionName("resource_events", d)] = true
			// each event inserts or moves its resource's row, at most
			a.pending["resource_latest"] += int64(len(r.Events))
			a.touched["resource_latest"] = true
		}
	}
	if n == 0 {
		return
	}
	for _, t := range []string{"certnames", "latest_reports"} {
		a.pending[t] += n // inserted, or their latest report moved
		a.touched[t] = true
	}
	a.pending["report_keys"] += 2 * n // a report's hash and configuration version (migration 0016)
	a.touched["report_keys"] = true
	if a.off || a.running || time.Since(a.last) < a.intervalLocked() {
		return
	}
	rows, _, _ := a.settings()
	due := false
	for _, v := range a.pending {
		if v >= min(rows, analyzeBaseRows) {
			due = true
			break
		}
	}
	if !due {
		return
	}
	a.running = true
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		analyzed, err := db.analyzeDue(ctx, false, false)
		if err != nil {
			slog.Warn("background ANALYZE failed", "err", err)
		}
		a.mu.Lock()
		a.running = false
		a.last = time.Now()
		done := a.done
		a.mu.Unlock()
		if done != nil {
			done(analyzed, err)
		}
	}()
}

func (a *analyzer) intervalLocked() time.Duration {
	_, _, iv := a.settings()
	return iv
}

// AnalyzeChanged ANALYZEs every table this instance has inserted into since
// it last analyzed it, whatever the thresholds (the end of `reportdb
// import`); with vacuum, it runs VACUUM (ANALYZE) on every table inserted
// into since the last such call (analyzed in the background meanwhile or
// not), which also marks the new pages all-visible, so that index-only scans need not visit the table (on
// the large fleet, the first reports page with include_total went from
// 245-365 ms to 126 ms after a VACUUM of reports). It waits for a background
// run in progress and for the advisory lock.
func (db *DB) AnalyzeChanged(ctx context.Context, vacuum bool) ([]string, error) {
	db.analyze.wg.Wait()
	return db.analyzeDue(ctx, true, vacuum)
}

// analyzeDue analyzes (with vacuum: VACUUM (ANALYZE)) the tables past their
// threshold (all changed tables when all is set) under the advisory lock;
// without all, it returns nothing when another instance holds the lock.
func (db *DB) analyzeDue(ctx context.Context, all, vacuum bool) ([]string, error) {
	a := &db.analyze
	a.mu.Lock()
	snapshot := make(map[string]int64, len(a.pending))
	names := make([]string, 0, len(a.pending))
	for k, v := range a.pending {
		if v > 0 {
			snapshot[k] = v
			names = append(names, k)
		}
	}
	if vacuum { // every table written, analyzed in the background or not
		for k := range a.touched {
			if _, ok := snapshot[k]; !ok {
				names = append(names, k)
			}
		}
	}
	rowsLimit, fraction, _ := a.settings()
	a.mu.Unlock()
	if len(names) == 0 {
		return nil, nil
	}
	conn, release, got, err := db.lockedConn(ctx, lockAnalyze, all)
	if err != nil || !got {
		return nil, err
	}
	defer release()

	// the planner's row estimate of each table; a table gone (dropped by
	// retention) has none
	rows, err := conn.Query(ctx, `SELECT n, (SELECT c.reltuples FROM pg_class c WHERE c.oid = to_regclass(quote_ident(n)))
		FROM unnest($1::text[]) n ORDER BY n`, names)
	if err != nil {
		return nil, err
	}
	var due []string
	var gone []string
	for rows.Next() {
		var name string
		var est *float64
		if err := rows.Scan(&name, &est); err != nil {
			rows.Close()
			return nil, err
		}
		switch {
		case est == nil:
			gone = append(gone, name)
		case all:
			due = append(due, name)
		default:
			tuples := max(*est, 0) // -1: never analyzed
			limit := min(float64(rowsLimit), float64(min(rowsLimit, analyzeBaseRows))+fraction*tuples)
			if float64(snapshot[name]) >= limit {
				due = append(due, name)
			}
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var analyzed []string
	forget := func(name string) {
		a.mu.Lock()
		a.pending[name] -= snapshot[name]
		if a.pending[name] <= 0 {
			delete(a.pending, name)
		}
		if vacuum {
			delete(a.touched, name)
		}
		a.mu.Unlock()
	}
	for _, name := range gone {
		forget(name)
	}
	for _, name := range due {
		stmt := "ANALYZE "
		if vacuum {
			stmt = "VACUUM (ANALYZE) "
		}
		if _, err := conn.Exec(ctx, stmt+pgx.Identifier{name}.Sanitize()); err != nil {
			if isUndefinedTable(err) {
				forget(name)
				continue
			}
			return analyzed, err
		}
		forget(name)
		analyzed = append(analyzed, name)
	}
	return analyzed, nil
}
