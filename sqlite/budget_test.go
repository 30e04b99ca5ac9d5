package sqlite

import (
	"context"
	"testing"

	"reportdb/store"
)

// TestQueryMemoryBudget: every reader connection runs with the configured
// page cache (which also bounds the in-memory part of sorts and GROUP BY)
// and spills temporary results to files, and a query whose sort and
// grouping need far more than the budget still completes (it spills rather
// than fails or grows the process).
func TestQueryMemoryBudget(t *testing.T) {
	db, err := OpenOptions(t.TempDir(), Options{QueryMemory: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	// several connections of the pool, each must carry the pragmas
	err = db.Snapshot(ctx, func(q store.Querier) error {
		for _, c := range []struct {
			pragma string
			want   int64
		}{{"PRAGMA cache_size", -1024}, {"PRAGMA temp_store", 1}} {
			rows, err := q.Query(ctx, store.Statement{SQL: c.pragma})
			if err != nil {
				return err
			}
			var v any
			rows.Next()
			if err := rows.Scan(&v); err != nil {
				return err
			}
			rows.Close()
			if v != c.want {
				t.Errorf("%s = %v, want %d", c.pragma, v, c.want)
			}
		}
		// ~40 MB of rows sorted and grouped with a 1 MiB budget
		rows, err := q.Query(ctx, store.Statement{SQL: `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200000)
			SELECT count(*), sum(l) FROM (SELECT k, sum(length(v)) AS l FROM
			(SELECT i % 50000 AS k, printf('%0200d', i) AS v FROM n ORDER BY v DESC) GROUP BY k)`})
		if err != nil {
			return err
		}
		defer rows.Close()
		var groups, total any
		rows.Next()
		if err := rows.Scan(&groups, &total); err != nil {
			return err
		}
		if groups != int64(50000) || total != int64(200000*200) {
			t.Errorf("groups %v, total %v", groups, total)
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	def, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer def.Close()
	rows, err := def.Query(ctx, store.Statement{SQL: "PRAGMA cache_size"})
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var v any
	rows.Next()
	rows.Scan(&v)
	if v != int64(-DefaultQueryMemory>>10) {
		t.Errorf("default cache_size %v, want %d", v, -DefaultQueryMemory>>10)
	}
}
