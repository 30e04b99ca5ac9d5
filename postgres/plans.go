package postgres

import (
	"github.com/jackc/pgx/v5"

	"reportdb/store"
)

// Read statements run as prepared statements cached per connection, so
// that PostgreSQL can reuse a plan: for lookups by certname, hash or
// report id, planning over a dozen partitions costs more than running the
// query. But after five executions PostgreSQL may switch such a statement
// to a generic plan, estimated without the parameter values, and for a
// range or a regular expression that estimate is blind: a time window
// covering every event of the day is planned as if it held a few
// thousand rows (an index scan instead of a sequential one), twice as slow.
// Statements that compare a parameter with a range or regular-expression
// operator (store.Statement.ValueSensitive, set by the SQL generator) are
// therefore executed as unnamed statements (pgx's
// QueryExecModeCacheDescribe: one round trip, the description cached),
// which PostgreSQL plans with the actual values every time.

// queryArgs are the arguments to pass to pgx for a read statement: its
// args, preceded by the execution mode when the plan depends on them.
func queryArgs(st store.Statement) []any {
	if !st.ValueSensitive {
		return st.Args
	}
	return append([]any{pgx.QueryExecModeCacheDescribe}, st.Args...)
}
