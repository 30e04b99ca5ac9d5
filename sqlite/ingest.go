package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"reportdb"
	"reportdb/jsonv"
	"reportdb/schema"
	"reportdb/store"
	"reportdb/wire"
)

const insertReport = `INSERT INTO reports (hash, certname, puppet_version, report_format,
 configuration_version, start_time, end_time, producer_timestamp, receive_time, producer,
 environment, status, noop, noop_pending, corrective_change, transaction_uuid, catalog_uuid,
 code_id, job_id, cached_catalog_status, type, metrics, logs, resource_events,
 ev_success, ev_failure, ev_noop, ev_skipped, ev_total)
 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
 ON CONFLICT (hash) DO NOTHING`

const insertEvent = `INSERT INTO resource_events (report_id, status, timestamp, resource_type,
 resource_title, property, new_value, old_value, message, file, line, containment_path,
 containing_class, name, corrective_change) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// StoreReports implements store.Backend.
func (db *DB) StoreReports(ctx context.Context, reports []*reportdb.Report) (_ []reportdb.Outcome, _ []error, err error) {
	defer func() { err = busyTransient(err) }()
	// the stored resource_events documents, rendered before the writer lock
	docs := make([][]byte, len(reports))
	for i, r := range reports {
		docs[i] = wire.RenderResourceEvents(r.Events)
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return nil, nil, err
	}
	defer tx.Rollback()
	st, err := prepare(ctx, tx)
	if err != nil {
		return nil, nil, err
	}
	defer st.close()
	outcomes := make([]reportdb.Outcome, len(reports))
	errs := make([]error, len(reports))
	var ids []int64
	for i, r := range reports {
		if _, err := tx.ExecContext(ctx, "SAVEPOINT report"); err != nil {
			return nil, nil, err
		}
		var id int64
		outcomes[i], id, errs[i] = st.store(ctx, r, docs[i])
		if errs[i] == nil && outcomes[i] == reportdb.Stored {
			ids = append(ids, id)
		}
		if errs[i] != nil {
			if _, err := tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT report"); err != nil {
				return nil, nil, err
			}
		}
		if _, err := tx.ExecContext(ctx, "RELEASE SAVEPOINT report"); err != nil {
			return nil, nil, err
		}
	}
	if err := addRollups(ctx, tx, ids, 1); err != nil {
		return nil, nil, err
	}
	if err := addLatest(ctx, tx, ids); err != nil {
		return nil, nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, nil, err
	}
	return outcomes, errs, nil
}

// busyTransient makes SQLITE_BUSY a transient failure (503 to retry, or
// the spool): another process (a second server or an import on the same
// files, a backup) held the database's write lock past the busy timeout.
// Nothing is wrong with the reports; they can be stored once it is free.
func busyTransient(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY {
		return store.Transient(err, "the database is locked by another writer")
	}
	return err
}

type statements struct {
	certname, report, event, env, latest *sql.Stmt
}

func prepare(ctx context.Context, tx *sql.Tx) (*statements, error) {
	s := &statements{}
	var err error
	p := func(q string) *sql.Stmt {
		if err != nil {
			return nil
		}
		var st *sql.Stmt
		st, err = tx.PrepareContext(ctx, q)
		return st
	}
	// a report newer than the node's deactivation or expiry makes it
	// active again (also when the report is a duplicate, as in PuppetDB)
	s.certname = p(`INSERT INTO certnames (certname) VALUES (?1) ON CONFLICT (certname) DO UPDATE
		SET deactivated = NULL, expired = NULL WHERE deactivated < ?2 OR expired < ?2`)
	s.report = p(insertReport)
	s.event = p(insertEvent)
	s.env = p(`INSERT INTO environments (name) VALUES (?) ON CONFLICT (name) DO NOTHING`)
	s.latest = p(`UPDATE certnames SET latest_report_id = ?, latest_report_timestamp = ?
		WHERE certname = ? AND (latest_report_timestamp IS NULL OR latest_report_timestamp < ?)`)
	if err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

func (s *statements) close() {
	for _, st := range []*sql.Stmt{s.certname, s.report, s.event, s.env, s.latest} {
		if st != nil {
			st.Close()
		}
	}
}

// store writes one report; resourceEvents is its rendered resource_events
// document (nil without events).
func (s *statements) store(ctx context.Context, r *reportdb.Report, resourceEvents []byte) (reportdb.Outcome, int64, error) {
	if _, err := s.certname.ExecContext(ctx, r.Certname, r.ProducerTimestamp); err != nil {
		return 0, 0, fmt.Errorf("certname: %w", err)
	}
	c := store.CountEvents(r)
	res, err := s.report.ExecContext(ctx, r.Hash, r.Certname, r.PuppetVersion, r.ReportFormat,
		r.ConfigurationVersion, r.StartTime, r.EndTime, r.ProducerTimestamp, r.ReceiveTime,
		str(r.Producer), r.Environment, str(r.Status), boolean(r.Noop), boolean(r.NoopPending),
		boolean(r.CorrectiveChange), str(r.TransactionUUID), str(r.CatalogUUID), str(r.CodeID),
		str(r.JobID), str(r.CachedCatalogStatus), r.Type, blob(r.Metrics), blob(r.Logs),
		blob(resourceEvents), c.Success, c.Failure, c.Noop, c.Skipped, c.Total)
	if err != nil {
		return 0, 0, fmt.Errorf("report: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return reportdb.Duplicate, 0, nil
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, 0, err
	}
	if _, err := s.env.ExecContext(ctx, r.Environment); err != nil {
		return 0, 0, fmt.Errorf("environment: %w", err)
	}
	for i := range r.Events {
		e := &r.Events[i]
		var path any
		if e.ContainmentPath != nil {
			path = string(jsonv.AppendCompact(nil, e.ContainmentPath))
		}
		var line any
		if e.Line != nil {
			line = *e.Line
		}
		if _, err := s.event.ExecContext(ctx, id, e.Status, e.Timestamp, e.ResourceType,
			e.ResourceTitle, str(e.Property), e.NewValue, e.OldValue, str(e.Message), str(e.File),
			line, path, str(e.ContainingClass), str(e.Name), boolean(e.CorrectiveChange)); err != nil {
			return 0, 0, fmt.Errorf("event: %w", err)
		}
	}
	if r.Type != "plan" {
		if _, err := s.latest.ExecContext(ctx, id, r.ProducerTimestamp, r.Certname, r.ProducerTimestamp); err != nil {
			return 0, 0, fmt.Errorf("latest report: %w", err)
		}
	}
	return reportdb.Stored, id, nil
}

func str(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

func boolean(b *bool) any {
	if b == nil {
		return nil
	}
	if *b {
		return int64(1)
	}
	return int64(0)
}

func blob(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}

// addRollups counts the reports ids and their events sign times in the
// rollups (see schema/rollup.go), in the transaction that stores
// them.
func addRollups(ctx context.Context, tx *sql.Tx, ids []int64, sign int) error {
	if len(ids) == 0 {
		return nil
	}
	list, _ := json.Marshal(ids)
	return countInRollups(ctx, tx, "r.id IN (SELECT value FROM json_each(?1))", string(list), sign)
}

// countInRollups counts the reports that where selects (a condition on
// reports r, with ?1 bound to arg) and their events sign times in the
// rollups: 1 when they are stored, -1 before they are deleted.
func countInRollups(ctx context.Context, tx *sql.Tx, where string, arg any, sign int) error {
	for _, delta := range schema.ReportRollupDeltas("(SELECT * FROM reports r WHERE "+where+")", sign) {
		if _, err := tx.ExecContext(ctx, delta, arg); err != nil {
			return fmt.Errorf("report rollup: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, schema.EventRollupDelta(`(SELECT e.timestamp, e.status, e.resource_type,
		r.environment FROM resource_events e JOIN reports r ON r.id = e.report_id WHERE `+where+`)`, sign), arg); err != nil {
		return fmt.Errorf("event rollup: %w", err)
	}
	if _, err := tx.ExecContext(ctx, schema.FailureRollupDelta(`(SELECT e.timestamp, e.status, e.resource_type,
		e.resource_title FROM resource_events e JOIN reports r ON r.id = e.report_id WHERE `+where+`)`, sign), arg); err != nil {
		return fmt.Errorf("failure rollup: %w", err)
	}
	return nil
}

// addLatest merges the events of the reports ids into resource_latest and
// distinct_rollup (see schema/distinct.go), in the transaction that
// stores them: the deltas are read against resource_latest before the
// merge (the single writer holds the lock).
func addLatest(ctx context.Context, tx *sql.Tx, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	list, _ := json.Marshal(ids)
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{"DROP TABLE IF EXISTS temp.latest_batch", nil},
		{"CREATE TEMP TABLE latest_batch AS " + schema.LatestJoin("("+schema.LatestOfEvents(`(SELECT r.certname AS certname,
			e.resource_type AS resource_type, e.resource_title AS resource_title, e.property AS property,
			e.name AS name, e.timestamp AS timestamp, e.status AS status
			FROM resource_events e JOIN reports r ON r.id = e.report_id
			WHERE e.report_id IN (SELECT value FROM json_each(?1)))`)+")", Dialect{}.TitleKey()), []any{string(list)}},
		{schema.LatestDelta("temp.latest_batch"), nil},
		{schema.LatestUpsert("temp.latest_batch", "MAX", Dialect{}.TitleKey()), nil},
		{"DROP TABLE temp.latest_batch", nil},
	} {
		if _, err := tx.ExecContext(ctx, q.sql, q.args...); err != nil {
			return fmt.Errorf("distinct latest: %w", err)
		}
	}
	return nil
}
