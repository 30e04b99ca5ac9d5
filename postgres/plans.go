package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"reportdb/store"
)

// Read statements run as prepared statements cached per connection, and
// the session plans them generically (plan_cache_mode =
// force_generic_plan, set in Open): each is planned once, without its
// parameter values. For lookups by certname, hash or report id, planning
// over the day partitions costs more than running the query, and grows
// with the days kept; PostgreSQL's own choice (auto) re-plans such a
// statement at every execution once the partitions are many, because the
// generic plan's estimate counts every partition that run-time pruning
// skips.
//
// But for a range or a regular expression a value-blind estimate is far
// off: a time window covering every event of the day is planned as if it
// held a few thousand rows (an index scan instead of a sequential one),
// twice as slow. A statement that compares a parameter with a range or
// regular-expression operator (store.Statement.ValueSensitive, set by the
// SQL generator) is therefore sent in one pipeline between
// "SET plan_cache_mode = force_custom_plan" and "RESET plan_cache_mode":
// one round trip, its parameters bound as usual, and PostgreSQL plans it
// with the actual values every time.

const (
	customPlans = "SET plan_cache_mode = force_custom_plan"
	// RESET returns to the session's own default: the one Open sets, or
	// the database URL's.
	resetPlans = "RESET plan_cache_mode"
)

// plannedBatch is a value-sensitive statement between customPlans and
// resetPlans.
func plannedBatch(st store.Statement) *pgx.Batch {
	b := &pgx.Batch{}
	b.Queue(customPlans)
	b.Queue(st.SQL, st.Args...)
	b.Queue(resetPlans)
	return b
}

// sendPlanned sends a value-sensitive statement's batch on c (a
// connection or a transaction) and returns its rows; done runs once they
// are closed, with whether the session was reset (when it was not, the
// statement failed and the session may still plan every statement with
// its values).
func sendPlanned(ctx context.Context, c interface {
	SendBatch(context.Context, *pgx.Batch) pgx.BatchResults
}, st store.Statement, done func(reset bool)) (*pgRows, error) {
	br := c.SendBatch(ctx, plannedBatch(st))
	if _, err := br.Exec(); err != nil {
		br.Close()
		done(false)
		return nil, mapError(err)
	}
	rows, err := br.Query()
	if err != nil {
		br.Close()
		done(false)
		return nil, mapError(err)
	}
	return &pgRows{Rows: rows, finish: func() {
		_, err := br.Exec()
		if cerr := br.Close(); err == nil {
			err = cerr
		}
		done(err == nil)
	}}, nil
}

// queryPlanned runs a read statement on a connection of pool.
func queryPlanned(ctx context.Context, pool *pgxpool.Pool, st store.Statement) (*pgRows, error) {
	if !st.ValueSensitive {
		return queryGeneric(ctx, pool, st)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, mapError(err)
	}
	return sendPlanned(ctx, conn, st, func(reset bool) {
		if !reset {
			// The pipeline stopped before its RESET. When the statement
			// failed, the pipeline's implicit transaction took back the
			// SET too; whatever else happened, reset the session or
			// drop the connection rather than leave it planning every
			// statement with its values.
			rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if _, err := conn.Exec(rctx, resetPlans); err != nil {
				conn.Conn().Close(rctx) // the pool drops a closed connection
			}
			cancel()
		}
		conn.Release()
	})
}

// query runs a read statement in a transaction (a failed statement
// aborts it, which takes back the SET).
func (q querier) query(ctx context.Context, st store.Statement) (*pgRows, error) {
	if !st.ValueSensitive {
		return queryGeneric(ctx, q.tx, st)
	}
	return sendPlanned(ctx, q.tx, st, func(bool) {})
}

// queryGeneric runs a statement that is not value-sensitive as it is: on
// a session of the pool, its generic plan (plan_cache_mode).
func queryGeneric(ctx context.Context, on interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, st store.Statement) (*pgRows, error) {
	rows, err := on.Query(ctx, st.SQL, st.Args...)
	if err != nil {
		return nil, mapError(err)
	}
	return &pgRows{Rows: rows}, nil
}
