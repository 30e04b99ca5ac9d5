package postgres

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"reportdb"
)

var eventColumns = []string{"report_id", "status", "timestamp", "resource_type",
	"resource_title", "property", "new_value", "old_value", "message", "file", "line",
	"containment_path", "containing_class", "name", "corrective_change"}

var insertReports = `INSERT INTO reports (id, hash, certname, puppet_version, report_format,
 configuration_version, start_time, end_time, producer_timestamp, receive_time, producer,
 environment, status, noop, noop_pending, corrective_change, transaction_uuid, catalog_uuid,
 code_id, job_id, cached_catalog_status, type, metrics, logs, resource_events)
SELECT ` + idSQL("t.producer_timestamp") + `, t.* FROM unnest($1::text[], $2::text[], $3::text[],
 $4::smallint[], $5::text[], $6::bigint[], $7::bigint[], $8::bigint[], $9::bigint[], $10::text[],
 $11::text[], $12::text[], $13::boolean[], $14::boolean[], $15::boolean[], $16::text[], $17::text[],
 $18::text[], $19::text[], $20::text[], $21::text[], $22::text[], $23::text[], $24::text[])
 AS t(hash, certname, puppet_version, report_format, configuration_version, start_time, end_time,
 producer_timestamp, receive_time, producer, environment, status, noop, noop_pending,
 corrective_change, transaction_uuid, catalog_uuid, code_id, job_id, cached_catalog_status, type,
 metrics, logs, resource_events)
ON CONFLICT (hash) DO NOTHING
RETURNING id, hash`

// StoreReports implements store.Backend: the whole batch in one
// transaction (reports with one multi-row INSERT, events with COPY). If the
// batch fails, each report is retried alone so that one bad report cannot
// take the others down.
func (db *DB) StoreReports(ctx context.Context, reports []*reportdb.Report) ([]reportdb.Outcome, []error, error) {
	if err := db.ensurePartitions(ctx, reports); err != nil {
		return nil, nil, err
	}
	outcomes, err := db.storeBatch(ctx, reports)
	if isNoPartition(err) {
		// another instance's retention dropped a partition this instance
		// believed in: forget what we know and create what is missing
		db.mu.Lock()
		db.partitions = map[int64]bool{}
		db.mu.Unlock()
		if err := db.ensurePartitions(ctx, reports); err != nil {
			return nil, nil, err
		}
		outcomes, err = db.storeBatch(ctx, reports)
	}
	if err == nil {
		return outcomes, make([]error, len(reports)), nil
	}
	if len(reports) == 1 {
		return nil, []error{err}, nil
	}
	outcomes = make([]reportdb.Outcome, len(reports))
	errs := make([]error, len(reports))
	for i, r := range reports {
		o, err := db.storeBatch(ctx, []*reportdb.Report{r})
		if err != nil {
			errs[i] = err
			continue
		}
		outcomes[i] = o[0]
	}
	return outcomes, errs, nil
}

func (db *DB) storeBatch(ctx context.Context, reports []*reportdb.Report) ([]reportdb.Outcome, error) {
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(context.Background())

	// certnames, in sorted order so concurrent batches lock them in the
	// same order (no deadlocks between instances)
	names := map[string]bool{}
	envs := map[string]bool{}
	for _, r := range reports {
		names[r.Certname] = true
		envs[r.Environment] = true
	}
	if _, err := tx.Exec(ctx, `INSERT INTO certnames (certname) SELECT unnest($1::text[]) ORDER BY 1 ON CONFLICT (certname) DO NOTHING`, sorted(names)); err != nil {
		return nil, fmt.Errorf("certnames: %w", err)
	}

	// reports: one statement. Duplicates of a hash stored earlier (or by
	// another instance) are skipped by ON CONFLICT and not returned; within
	// the batch only the first of a hash is sent.
	n := len(reports)
	var c reportColumns
	sent := map[string]bool{}
	for _, r := range reports {
		if !sent[r.Hash] {
			sent[r.Hash] = true
			c.add(r)
		}
	}
	rows, err := tx.Query(ctx, insertReports, c.args()...)
	if err != nil {
		return nil, fmt.Errorf("reports: %w", err)
	}
	ids := map[string]int64{}
	for rows.Next() {
		var id int64
		var hash string
		if err := rows.Scan(&id, &hash); err != nil {
			rows.Close()
			return nil, err
		}
		ids[hash] = id
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reports: %w", err)
	}

	outcomes := make([]reportdb.Outcome, n)
	var eventRows [][]any
	type latest struct {
		id, ts int64
	}
	newest := map[string]latest{}
	first := map[string]bool{}
	for i, r := range reports {
		id, ok := ids[r.Hash]
		if !ok || first[r.Hash] {
			outcomes[i] = reportdb.Duplicate
			continue
		}
		first[r.Hash] = true
		for j := range r.Events {
			e := &r.Events[j]
			var line any
			if e.Line != nil {
				line = int32(*e.Line)
			}
			var path any
			if e.ContainmentPath != nil {
				path = e.ContainmentPath
			}
			eventRows = append(eventRows, []any{id, e.Status, e.Timestamp,
				e.ResourceType, e.ResourceTitle, e.Property, e.NewValue, e.OldValue, e.Message, e.File,
				line, path, e.ContainingClass, e.Name, e.CorrectiveChange})
		}
		if r.Type != "plan" {
			if cur, ok := newest[r.Certname]; !ok || r.ProducerTimestamp > cur.ts {
				newest[r.Certname] = latest{id, r.ProducerTimestamp}
			}
		}
	}
	if len(eventRows) > 0 {
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"resource_events"}, eventColumns, pgx.CopyFromRows(eventRows)); err != nil {
			return nil, fmt.Errorf("events: %w", err)
		}
	}
	if len(ids) > 0 {
		if _, err := tx.Exec(ctx, `INSERT INTO environments (name) SELECT unnest($1::text[]) ORDER BY 1 ON CONFLICT (name) DO NOTHING`, sorted(envs)); err != nil {
			return nil, fmt.Errorf("environments: %w", err)
		}
	}
	if len(newest) > 0 {
		certs := make([]string, 0, len(newest))
		for c := range newest {
			certs = append(certs, c)
		}
		sort.Strings(certs)
		rids := make([]int64, len(certs))
		tss := make([]int64, len(certs))
		for i, c := range certs {
			rids[i], tss[i] = newest[c].id, newest[c].ts
		}
		// Row locks are taken in certname order; the WHERE clause is
		// re-checked after a concurrent update commits, so the pointer only
		// ever moves to a strictly newer producer_timestamp.
		if _, err := tx.Exec(ctx, `UPDATE certnames c SET latest_report_id = v.id, latest_report_timestamp = v.ts
			FROM (SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS u(certname, id, ts) ORDER BY certname) v
			WHERE c.certname = v.certname AND (c.latest_report_timestamp IS NULL OR c.latest_report_timestamp < v.ts)`,
			certs, rids, tss); err != nil {
			return nil, fmt.Errorf("latest reports: %w", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, err
	}
	return outcomes, nil
}

func sorted(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func text(b []byte) *string {
	if b == nil {
		return nil
	}
	s := string(b)
	return &s
}

// ensurePartitions creates the daily event partitions the reports need.
// Creation is serialised across instances by an advisory lock.
func (db *DB) ensurePartitions(ctx context.Context, reports []*reportdb.Report) error {
	var missing []int64
	db.mu.Lock()
	for _, r := range reports {
		d := dayIndex(r.ProducerTimestamp)
		if !db.partitions[d] && !contains(missing, d) {
			missing = append(missing, d)
		}
	}
	db.mu.Unlock()
	if len(missing) == 0 {
		return nil
	}
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", lockPartitions); err != nil {
		return err
	}
	for _, d := range missing {
		name := partitionName(d)
		lo, hi := idRange(d)
		if _, err := tx.Exec(ctx, fmt.Sprintf(
			`CREATE TABLE IF NOT EXISTS %s PARTITION OF resource_events FOR VALUES FROM (%d) TO (%d)`,
			pgx.Identifier{name}.Sanitize(), lo, hi)); err != nil {
			return fmt.Errorf("create partition %s: %w", name, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return err
	}
	db.mu.Lock()
	for _, d := range missing {
		db.partitions[d] = true
	}
	db.mu.Unlock()
	return nil
}

// partitionName names the events partition of day d (day index).
func partitionName(d int64) string {
	return "resource_events_" + time.UnixMilli(d*dayMs).UTC().Format("20060102")
}

func contains(xs []int64, x int64) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// reportColumns holds a batch of reports column by column, as typed
// arrays for unnest().
type reportColumns struct {
	hash, certname, puppetVersion, configVersion, environment, typ []string
	format                                                         []int16
	start, end, producerTS, receive                                []int64
	producer, status, txn, catalog, code, job, cached              []*string
	metrics, logs, events                                          []*string
	noop, noopPending, corrective                                  []*bool
}

func (c *reportColumns) add(r *reportdb.Report) {
	c.hash = append(c.hash, r.Hash)
	c.certname = append(c.certname, r.Certname)
	c.puppetVersion = append(c.puppetVersion, r.PuppetVersion)
	c.format = append(c.format, int16(r.ReportFormat))
	c.configVersion = append(c.configVersion, r.ConfigurationVersion)
	c.start = append(c.start, r.StartTime)
	c.end = append(c.end, r.EndTime)
	c.producerTS = append(c.producerTS, r.ProducerTimestamp)
	c.receive = append(c.receive, r.ReceiveTime)
	c.producer = append(c.producer, r.Producer)
	c.environment = append(c.environment, r.Environment)
	c.status = append(c.status, r.Status)
	c.noop = append(c.noop, r.Noop)
	c.noopPending = append(c.noopPending, r.NoopPending)
	c.corrective = append(c.corrective, r.CorrectiveChange)
	c.txn = append(c.txn, r.TransactionUUID)
	c.catalog = append(c.catalog, r.CatalogUUID)
	c.code = append(c.code, r.CodeID)
	c.job = append(c.job, r.JobID)
	c.cached = append(c.cached, r.CachedCatalogStatus)
	c.typ = append(c.typ, r.Type)
	c.metrics = append(c.metrics, text(r.Metrics))
	c.logs = append(c.logs, text(r.Logs))
	c.events = append(c.events, text(r.ResourceEvents))
}

func (c *reportColumns) args() []any {
	return []any{c.hash, c.certname, c.puppetVersion, c.format, c.configVersion, c.start, c.end,
		c.producerTS, c.receive, c.producer, c.environment, c.status, c.noop, c.noopPending,
		c.corrective, c.txn, c.catalog, c.code, c.job, c.cached, c.typ, c.metrics, c.logs, c.events}
}

// isNoPartition reports PostgreSQL's "no partition of relation found for
// row" (check_violation on a partitioned table).
func isNoPartition(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23514"
}
