package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"reportdb"
	"reportdb/jsonv"
	"reportdb/schema"
	"reportdb/store"
)

// storeStatement writes a batch in one statement (one round trip, one
// implicit transaction): data-modifying CTEs insert the reports (skipping
// hashes already stored), their events, the environments, and upsert the
// certnames while moving each node's latest-report pointer. Certname rows
// are locked in certname order, so concurrent batches never deadlock, and
// ON CONFLICT re-checks the pointer against the newest committed row, so
// it only ever moves to a strictly newer producer_timestamp.
var storeStatement = `WITH input AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::smallint[], $5::text[], $6::bigint[],
   $7::bigint[], $8::bigint[], $9::bigint[], $10::text[], $11::text[], $12::text[], $13::boolean[],
   $14::boolean[], $15::boolean[], $16::text[], $17::text[], $18::text[], $19::text[], $20::text[],
   $21::text[], $22::text[], $23::text[], $24::int[], $40::int[], $41::int[], $42::int[], $43::int[],
   $44::int[])
  AS t(hash, certname, puppet_version, report_format, configuration_version, start_time, end_time,
   producer_timestamp, receive_time, producer, environment, status, noop, noop_pending,
   corrective_change, transaction_uuid, catalog_uuid, code_id, job_id, cached_catalog_status, type,
   metrics, logs, ord, ev_success, ev_failure, ev_noop, ev_skipped, ev_total)
), ins AS (
  INSERT INTO reports (` + reportColumnList + `)
  SELECT ` + idSQL("i.producer_timestamp") + `, ` + inputColumns + `
  FROM input i ORDER BY i.ord
  ON CONFLICT DO NOTHING -- the hash, unique in its day's partition (migration 0004)
  RETURNING id, hash, certname, producer_timestamp, type, environment, status, noop, noop_pending,
   cached_catalog_status
), data AS (
  INSERT INTO report_data (id, metrics, logs)
  SELECT ins.id, i.metrics, i.logs FROM ins JOIN input i ON i.hash = ins.hash
), evin AS (
  SELECT ins.id, ins.environment, ins.certname, e.*
  FROM unnest($25::text[], $26::text[], $27::bigint[], $28::text[], $29::text[], $30::text[],
   $31::text[], $32::text[], $33::text[], $34::text[], $35::int[], $36::text[], $37::text[],
   $38::text[], $39::boolean[])
   AS e(hash, status, timestamp, resource_type, resource_title, property, new_value, old_value,
   message, file, line, path, containing_class, name, corrective_change)
  JOIN ins ON ins.hash = e.hash
), ev AS (
  INSERT INTO resource_events (report_id, status, timestamp, resource_type, resource_title, property,
   new_value, old_value, message, file, line, containment_path, containing_class, name,
   corrective_change)
  SELECT e.id, e.status, e.timestamp, e.resource_type, e.resource_title, e.property, e.new_value,
   e.old_value, e.message, e.file, e.line,
   CASE WHEN e.path IS NULL THEN NULL ELSE ARRAY(SELECT json_array_elements_text(e.path::json)) END,
   e.containing_class, e.name, e.corrective_change
  FROM evin e
), ` + schema.CTEs("rr", schema.ReportRollupDeltas("ins", 1)) + `, er AS (
  ` + schema.EventRollupDelta("evin", 1) + `
), fr AS (
  ` + schema.FailureRollupDelta("evin", 1) + `
), dk AS (
  ` + schema.LatestOfEvents("evin") + `
), dj AS (
  ` + schema.LatestJoin("dk", Dialect{}.TitleKey()) + `
), dd AS (
  ` + schema.LatestDelta("dj") + `
), dl AS (
  ` + schema.LatestUpsert("dj", "GREATEST", Dialect{}.TitleKey()) + `
), env AS (
  INSERT INTO environments (name)
  SELECT DISTINCT environment FROM input ORDER BY 1
  ON CONFLICT (name) DO NOTHING
), newest AS (
  SELECT DISTINCT ON (certname) certname, id, producer_timestamp
  FROM ins WHERE type <> 'plan' ORDER BY certname, producer_timestamp DESC, id
), cn AS (
  INSERT INTO certnames (certname, latest_report_id, latest_report_timestamp)
  SELECT c.certname, n.id, n.producer_timestamp
  FROM (SELECT DISTINCT certname FROM input) c LEFT JOIN newest n ON n.certname = c.certname
  ORDER BY c.certname
  ON CONFLICT (certname) DO UPDATE
   SET latest_report_id = EXCLUDED.latest_report_id, latest_report_timestamp = EXCLUDED.latest_report_timestamp
   WHERE EXCLUDED.latest_report_id IS NOT NULL AND (certnames.latest_report_timestamp IS NULL
    OR certnames.latest_report_timestamp < EXCLUDED.latest_report_timestamp)
  RETURNING latest_report_id
), lrep AS (
  -- the copy of the report each moved pointer now points at (migration
  -- 0005); batches of one node are serialised by lockNodes
  INSERT INTO latest_reports (` + reportColumnList + `)
  SELECT ins.id, ` + inputColumns + `
  FROM cn JOIN ins ON ins.id = cn.latest_report_id JOIN input i ON i.hash = ins.hash
  ORDER BY i.certname
  ON CONFLICT (certname) DO UPDATE SET ` + latestReportsSet + `
)
SELECT hash FROM ins`

// reportColumnList are the columns the batch statement inserts into
// reports (and latest_reports), id first; inputColumns the values of all
// but id, from input i.
var (
	reportColumnList = `id, hash, certname, puppet_version, report_format, configuration_version,
   start_time, end_time, producer_timestamp, receive_time, producer, environment, status, noop,
   noop_pending, corrective_change, transaction_uuid, catalog_uuid, code_id, job_id,
   cached_catalog_status, type, ev_success, ev_failure, ev_noop, ev_skipped, ev_total`
	inputColumns = `i.hash, i.certname, i.puppet_version, i.report_format,
   i.configuration_version, i.start_time, i.end_time, i.producer_timestamp, i.receive_time, i.producer,
   i.environment, i.status, i.noop, i.noop_pending, i.corrective_change, i.transaction_uuid,
   i.catalog_uuid, i.code_id, i.job_id, i.cached_catalog_status, i.type, i.ev_success, i.ev_failure,
   i.ev_noop, i.ev_skipped, i.ev_total`
	latestReportsSet = func() string {
		var set []string
		for _, c := range strings.Split(reportColumnList, ",") {
			if c = strings.TrimSpace(c); c != "certname" {
				set = append(set, c+" = EXCLUDED."+c)
			}
		}
		return strings.Join(set, ", ")
	}()
)

// lockNodes takes, in a fixed order, a transaction-level advisory lock per
// certname of the batch (hashed into the two-key space, apart from the
// one-key locks of postgres.go). It runs before storeStatement in the
// same implicit transaction, so that storeStatement's snapshot, taken
// after the locks, sees every committed change to those nodes'
// resource_latest rows, and no other batch changes them until it commits:
// the deltas it computes from that snapshot are then exact.
const lockNodes = `SELECT count(pg_advisory_xact_lock(7497059, h)) FROM
  (SELECT DISTINCT hashtext(c) AS h FROM unnest($1::text[]) c ORDER BY 1) s`

// StoreReports implements store.Backend: the whole batch in one statement.
// A batch that fails for a transient reason (transientReason: a deadlock,
// a lock not granted in time, a lost connection, ...) is run again, whole,
// a few times (retryStore); if it still fails, nothing of it is stored and
// the error is store.Transient, which its submitters answer with a 503 to
// retry (or spool). A batch that fails otherwise is retried report by
// report so that one bad report cannot take the others down.
func (db *DB) StoreReports(ctx context.Context, reports []*reportdb.Report) ([]reportdb.Outcome, []error, error) {
	if err := db.ensurePartitions(ctx, reports); err != nil {
		return nil, nil, storeFailure(err)
	}
	var outcomes []reportdb.Outcome
	err := retryStore(ctx, func() (err error) {
		outcomes, err = db.storeBatch(ctx, reports)
		return err
	})
	if isNoPartition(err) {
		// another instance's retention dropped a partition this instance
		// believed in: forget what we know and create what is missing
		db.mu.Lock()
		db.partitions = map[int64]bool{}
		db.mu.Unlock()
		if err := db.ensurePartitions(ctx, reports); err != nil {
			return nil, nil, storeFailure(err)
		}
		err = retryStore(ctx, func() (err error) {
			outcomes, err = db.storeBatch(ctx, reports)
			return err
		})
	}
	if err == nil {
		db.noteStored(reports, outcomes, nil)
		return outcomes, make([]error, len(reports)), nil
	}
	if _, ok := transientReason(err); ok {
		// nothing is wrong with the reports: one by one they would meet
		// the same trouble
		return nil, nil, storeFailure(err)
	}
	if len(reports) == 1 {
		return nil, []error{reportFailure(err)}, nil
	}
	outcomes = make([]reportdb.Outcome, len(reports))
	errs := make([]error, len(reports))
	for i, r := range reports {
		var o []reportdb.Outcome
		err := retryStore(ctx, func() (err error) {
			o, err = db.storeBatch(ctx, []*reportdb.Report{r})
			return err
		})
		if err != nil {
			errs[i] = reportFailure(err)
			continue
		}
		outcomes[i] = o[0]
	}
	db.noteStored(reports, outcomes, errs)
	return outcomes, errs, nil
}

// Bounds of retryStore: storeAttempts runs at most, waiting storeBackoff
// (with jitter) before the first retry and twice as long before each next
// one. With PostgreSQL's deadlock_timeout of 1 s, a batch that deadlocks
// every time is answered within about 6 s; a report rarely waits through
// more than one retry.
const (
	storeAttempts = 5
	storeBackoff  = 25 * time.Millisecond
)

// onStoreRetry, when set (tests), is called with the error of each attempt
// that retryStore retries.
var onStoreRetry func(err error)

// retryStore runs fn, a statement or transaction of its own, until it
// succeeds, fails for a reason that is not transient (transientReason),
// or has run storeAttempts times, and returns its last error. A
// transient failure changed nothing (PostgreSQL rolled the transaction
// back), or, for a connection lost during a commit, maybe everything:
// storeStatement stores a report once whatever the number of runs (a
// second run finds its hash stored), so running it again is safe.
func retryStore(ctx context.Context, fn func() error) error {
	err := fn()
	wait := storeBackoff
	for attempt := 1; attempt < storeAttempts; attempt++ {
		if _, ok := transientReason(err); !ok {
			return err
		}
		if onStoreRetry != nil {
			onStoreRetry(err)
		}
		// jitter: writers that failed together do not retry together
		d := wait/2 + rand.N(wait/2+1)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(d):
		}
		wait *= 2
		err = fn()
	}
	return err
}

// storeFailure is the error a submitter of a report gets for err: a
// transient failure becomes store.Transient (503, retry later); others
// are returned as they are.
func storeFailure(err error) error {
	if reason, ok := transientReason(err); ok && !store.IsTransient(err) {
		return store.Transient(err, reason)
	}
	return err
}

// reportFailure is storeFailure for one report of a batch: a report
// whose day retention dropped again while it was being stored (it is
// older than the TTL) is not at fault either, and may be sent again.
func reportFailure(err error) error {
	if isNoPartition(err) {
		return store.Transient(err, "retention is dropping the report's day")
	}
	return storeFailure(err)
}

func (db *DB) storeBatch(ctx context.Context, reports []*reportdb.Report) ([]reportdb.Outcome, error) {
	var c reportColumns
	var e eventColumns
	sent := map[string]bool{}
	for _, r := range reports {
		// only the first of a hash within the batch is sent
		if sent[r.Hash] {
			continue
		}
		sent[r.Hash] = true
		c.add(r)
		for i := range r.Events {
			e.add(r.Hash, &r.Events[i])
		}
	}
	batch := &pgx.Batch{}
	batch.Queue(lockNodes, c.certname)
	batch.Queue(storeStatement, append(append(c.args(), e.args()...), c.countArgs()...)...)
	batch.Queue(activateNodes, c.certname, c.producerTS)
	// one round trip, one implicit transaction (pgx runs a batch as one)
	br := db.pool.SendBatch(ctx, batch)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	stored := map[string]bool{}
	for rows.Next() {
		var hash string
		if err := rows.Scan(&hash); err != nil {
			rows.Close()
			return nil, err
		}
		stored[hash] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if _, err := br.Exec(); err != nil {
		return nil, err
	}
	// the implicit transaction commits at the end of the batch: only then
	// is the batch stored
	if err := br.Close(); err != nil {
		return nil, err
	}
	outcomes := make([]reportdb.Outcome, len(reports))
	for i, r := range reports {
		if stored[r.Hash] {
			outcomes[i] = reportdb.Stored
			delete(stored, r.Hash) // later copies in the batch are duplicates
		} else {
			outcomes[i] = reportdb.Duplicate
		}
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

// ensurePartitions creates the daily partitions the reports need. The
// days around today have theirs already (CreatePartitionsAhead); those of
// other days (an import, an agent whose clock is off) are created here,
// before and apart from the batch's transaction.
func (db *DB) ensurePartitions(ctx context.Context, reports []*reportdb.Report) error {
	days := make([]int64, 0, 2)
	for _, r := range reports {
		if d := dayIndex(r.ProducerTimestamp); !slices.Contains(days, d) {
			days = append(days, d)
		}
	}
	return db.ensurePartitionDays(ctx, days)
}

// ensurePartitionDays creates the partitions of the given days that this
// instance does not know to exist, in a transaction of their own
// (createPartitions), run again while it fails for a transient reason
// (retryStore).
func (db *DB) ensurePartitionDays(ctx context.Context, days []int64) error {
	var missing []int64
	db.mu.Lock()
	for _, d := range days {
		if !db.partitions[d] && !slices.Contains(missing, d) {
			missing = append(missing, d)
		}
	}
	db.mu.Unlock()
	if len(missing) == 0 {
		return nil
	}
	slices.Sort(missing)
	if err := retryStore(ctx, func() error { return db.createPartitions(ctx, missing) }); err != nil {
		return err
	}
	db.mu.Lock()
	for _, d := range missing {
		db.partitions[d] = true
	}
	db.mu.Unlock()
	return nil
}

// partitionLockTimeout bounds each wait of createPartitions for a lock:
// the creators' advisory lock, a parent's SHARE UPDATE EXCLUSIVE lock
// (which a retention run's DETACH ... CONCURRENTLY, or an ANALYZE of the
// parent, holds while it works). The wait is retried (retryStore) rather
// than left to last: a creator waiting in the lock queue of a parent
// holds its place ahead of every later request of a conflicting lock.
const partitionLockTimeout = "2s"

// createPartitions creates the day partitions of days that do not exist,
// in one transaction, serialised across instances by an advisory lock.
//
// A partition is created apart and then attached (CREATE TABLE, then
// ALTER TABLE ... ATTACH PARTITION), not with CREATE TABLE ... PARTITION
// OF: the latter takes an ACCESS EXCLUSIVE lock on the parent, which
// waits for every query reading it and makes every later query wait
// behind it; taken on the three parents one after the other while a
// query reads one and then another of them, the two deadlocked, and one
// of them failed (PostgreSQL's deadlock detection). ATTACH PARTITION
// takes only SHARE UPDATE EXCLUSIVE on the parent (PostgreSQL 12 and
// later), which conflicts with no read and no write (only with VACUUM,
// ANALYZE, other DDL), and ACCESS EXCLUSIVE on the new table, which
// nobody else uses yet. The parents' locks are all taken first, in one
// statement in the order of partitioned, so no lock is upgraded or taken
// out of order later in the transaction; the partitions appear together
// at the commit, never a table of a day without the others.
func (db *DB) createPartitions(ctx context.Context, days []int64) error {
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, "SET LOCAL lock_timeout = '"+partitionLockTimeout+"'"); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", lockPartitions); err != nil {
		return err
	}
	// Another instance (or this one, for a batch that computed missing
	// before the last creator committed) may have made them: skip those,
	// by name, without locking them.
	var names []string
	for _, d := range days {
		for _, parent := range partitioned {
			names = append(names, partitionName(parent, d))
		}
	}
	var absent []string
	rows, err := tx.Query(ctx, `SELECT n FROM unnest($1::text[]) n WHERE to_regclass(quote_ident(n)) IS NULL`, names)
	if err != nil {
		return err
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return err
		}
		absent = append(absent, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if len(absent) == 0 {
		return tx.Commit(ctx)
	}
	if _, err := tx.Exec(ctx, "LOCK TABLE ONLY "+strings.Join(partitioned, ", ")+" IN SHARE UPDATE EXCLUSIVE MODE"); err != nil {
		return fmt.Errorf("lock partitioned tables: %w", err)
	}
	for _, d := range days {
		lo, hi := idRange(d)
		for _, parent := range partitioned {
			name := partitionName(parent, d)
			if !slices.Contains(absent, name) {
				continue
			}
			id := pgx.Identifier{name}.Sanitize()
			if _, err := tx.Exec(ctx, fmt.Sprintf(`CREATE TABLE %s (LIKE %s INCLUDING DEFAULTS
				INCLUDING CONSTRAINTS INCLUDING STORAGE INCLUDING COMPRESSION)`, id, parent)); err != nil {
				return fmt.Errorf("create partition %s: %w", name, err)
			}
			if parent == "reports" {
				// a report's hash is unique in its day (migration 0004)
				if _, err := tx.Exec(ctx, fmt.Sprintf(`CREATE UNIQUE INDEX %s ON %s (hash)`,
					pgx.Identifier{name + "_hash"}.Sanitize(), id)); err != nil {
					return fmt.Errorf("create index of partition %s: %w", name, err)
				}
			}
			// the table is empty: checking it against the bounds reads
			// nothing; the parent's indexes are built on it here
			if _, err := tx.Exec(ctx, fmt.Sprintf(`ALTER TABLE %s ATTACH PARTITION %s FOR VALUES FROM (%d) TO (%d)`,
				parent, id, lo, hi)); err != nil {
				return fmt.Errorf("attach partition %s: %w", name, err)
			}
		}
	}
	return tx.Commit(ctx)
}

// partitioned are the tables partitioned by day of report id, in the order
// the batch statement locks them (DDL must follow it to avoid deadlocks).
var partitioned = []string{"reports", "report_data", "resource_events"}

// partitionName names the partition of table parent for day d (day index).
func partitionName(parent string, d int64) string {
	return parent + "_" + time.UnixMilli(d*dayMs).UTC().Format("20060102")
}

// partitionDay is the inverse of partitionName: the day index of partition
// name of table parent (false for a name partitionName does not make).
func partitionDay(parent, name string) (int64, bool) {
	t, err := time.Parse("20060102", strings.TrimPrefix(name, parent+"_"))
	if err != nil {
		return 0, false
	}
	return dayIndex(t.UnixMilli()), true
}

// reportColumns holds a batch of reports column by column, as typed
// arrays for unnest().
type reportColumns struct {
	hash, certname, puppetVersion, configVersion, environment, typ []string
	format                                                         []int16
	start, end, producerTS, receive                                []int64
	producer, status, txn, catalog, code, job, cached              []*string
	metrics, logs                                                  []*string
	noop, noopPending, corrective                                  []*bool
	ord                                                            []int32
	evSuccess, evFailure, evNoop, evSkipped, evTotal               []int32
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
	c.ord = append(c.ord, int32(len(c.ord)))
	n := store.CountEvents(r)
	c.evSuccess = append(c.evSuccess, n.Success)
	c.evFailure = append(c.evFailure, n.Failure)
	c.evNoop = append(c.evNoop, n.Noop)
	c.evSkipped = append(c.evSkipped, n.Skipped)
	c.evTotal = append(c.evTotal, n.Total)
}

// countArgs are the event counts ($40-$44 of storeStatement).
func (c *reportColumns) countArgs() []any {
	return []any{c.evSuccess, c.evFailure, c.evNoop, c.evSkipped, c.evTotal}
}

func (c *reportColumns) args() []any {
	return []any{c.hash, c.certname, c.puppetVersion, c.format, c.configVersion, c.start, c.end,
		c.producerTS, c.receive, c.producer, c.environment, c.status, c.noop, c.noopPending,
		c.corrective, c.txn, c.catalog, c.code, c.job, c.cached, c.typ, c.metrics, c.logs, c.ord}
}

// eventColumns holds the events of a batch column by column, each tagged
// with its report's hash; containment paths travel as JSON arrays.
type eventColumns struct {
	hash, status, typ, title, newValue, oldValue []string
	timestamp                                    []int64
	property, message, file, path, class, name   []*string
	line                                         []*int32
	corrective                                   []*bool
}

func (c *eventColumns) add(hash string, e *reportdb.Event) {
	c.hash = append(c.hash, hash)
	c.status = append(c.status, e.Status)
	c.timestamp = append(c.timestamp, e.Timestamp)
	c.typ = append(c.typ, e.ResourceType)
	c.title = append(c.title, e.ResourceTitle)
	c.property = append(c.property, e.Property)
	c.newValue = append(c.newValue, e.NewValue)
	c.oldValue = append(c.oldValue, e.OldValue)
	c.message = append(c.message, e.Message)
	c.file = append(c.file, e.File)
	var line *int32
	if e.Line != nil {
		l := int32(*e.Line)
		line = &l
	}
	c.line = append(c.line, line)
	var path *string
	if e.ContainmentPath != nil {
		p := string(jsonv.AppendCompact(nil, e.ContainmentPath))
		path = &p
	}
	c.path = append(c.path, path)
	c.class = append(c.class, e.ContainingClass)
	c.name = append(c.name, e.Name)
	c.corrective = append(c.corrective, e.CorrectiveChange)
}

func (c *eventColumns) args() []any {
	return []any{c.hash, c.status, c.timestamp, c.typ, c.title, c.property, c.newValue, c.oldValue,
		c.message, c.file, c.line, c.path, c.class, c.name, c.corrective}
}

// sqlState is the SQLSTATE code of a PostgreSQL error ("" for others).
func sqlState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// isTransient reports a deadlock or serialization failure.
func isTransient(err error) bool {
	c := sqlState(err)
	return c == "40P01" || c == "40001"
}

// transientReason tells whether err is a failure that passes by itself
// and says nothing about what the statement stored or read, and what it
// was, in a few words: a deadlock or serialization failure (PostgreSQL
// rolled the transaction back), a lock not granted within lock_timeout,
// the server out of connections or shutting down, a lost or refused
// connection. The caller's context ending is not one: the caller gave up.
func transientReason(err error) (string, bool) {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return "", false
	}
	if store.IsTransient(err) {
		return "retried", true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch c := pe.Code; {
		case c == "40P01":
			return "deadlock detected", true
		case c == "40001":
			return "serialization failure", true
		case c == "55P03":
			return "a lock was not granted in time", true
		case c == "53300":
			return "too many connections", true
		case c == "25006":
			// a standby: the URL names one, or a failover is under way
			return "the database is read-only", true
		case c == "57P01" || c == "57P02" || c == "57P03":
			return "the database is shutting down or starting", true
		case strings.HasPrefix(c, "08"):
			return "connection lost", true
		}
		return "", false
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	switch {
	case errors.As(err, &ce):
		return "cannot connect to the database", true
	case errors.As(err, &ne), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, net.ErrClosed), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "connection lost", true
	case pgconn.SafeToRetry(err):
		// pgx sent nothing (a connection that could not be used)
		return "connection lost", true
	}
	return "", false
}

// isNoPartition reports PostgreSQL's "no partition of relation found for
// row" (check_violation on a partitioned table).
func isNoPartition(err error) bool { return sqlState(err) == "23514" }

// isUndefinedTable reports a table that does not exist (any more).
func isUndefinedTable(err error) bool { return sqlState(err) == "42P01" }

// isLockTimeout: lock_timeout expired (55P03 lock_not_available).
func isLockTimeout(err error) bool { return sqlState(err) == "55P03" }
