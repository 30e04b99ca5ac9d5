package postgres

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"reportdb/schema"
)

// planNodes returns the node types of an EXPLAIN (FORMAT JSON) plan.
func planNodes(t *testing.T, raw []byte) []string {
	t.Helper()
	var plans []struct{ Plan map[string]any }
	if err := json.Unmarshal(raw, &plans); err != nil || len(plans) != 1 {
		t.Fatalf("EXPLAIN output %s: %v", raw, err)
	}
	var nodes []string
	var walk func(n map[string]any)
	walk = func(n map[string]any) {
		nodes = append(nodes, n["Node Type"].(string))
		subs, _ := n["Plans"].([]any)
		for _, s := range subs {
			walk(s.(map[string]any))
		}
	}
	walk(plans[0].Plan)
	return nodes
}

// TestMergePlanWithoutNestedLoops: a bucket's merge is planned from
// statistics taken when every row was merged, so the planner expects one
// delta and joined the combinations to the bucket's rows with nested
// loops (a scan of the bucket per combination: minutes for a bucket of
// 10^5 deltas). Under mergeSettings, as mergeBucket runs it, the generic
// plan (the pool's plan_cache_mode) of every rollup table's merge has no
// nested loop; without them, the same setup plans one (so the test sees
// the case it guards against).
func TestMergePlanWithoutNestedLoops(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	for _, rt := range schema.RollupTables {
		tab := pgx.Identifier{rt.Table}.Sanitize()
		// each dimension takes 500 values (2 if boolean), whatever its type
		var vals []string
		for _, c := range rt.Cols {
			var typ string
			if err := conn.QueryRow(ctx, `SELECT data_type FROM information_schema.columns
				WHERE table_schema = current_schema() AND table_name = $1 AND column_name = $2`, rt.Table, c).Scan(&typ); err != nil {
				t.Fatalf("%s.%s: %v", rt.Table, c, err)
			}
			switch typ {
			case "boolean":
				vals = append(vals, "(g / 500) % 2 = 0")
			case "text", "character varying":
				vals = append(vals, "'"+c+"-' || (g % 500)::text")
			default:
				vals = append(vals, "(g % 500)::"+typ)
			}
		}
		// 20,000 merged rows over 40 buckets, analyzed; then 2,000 deltas
		// in one bucket
		fill := func(rows, bucket string, merged bool) {
			m := "false"
			if merged {
				m = "true"
			}
			if _, err := conn.Exec(ctx, `INSERT INTO `+tab+` (width, bucket, `+rt.Dims()+`, `+rt.List(", ", nil)+`, merged)
				SELECT 3600000, `+bucket+`, `+strings.Join(vals, ", ")+`, `+rt.List(", ", func(string) string { return "1" })+`, `+m+`
				FROM generate_series(1, `+rows+`) g`); err != nil {
				t.Fatalf("%s: %v", rt.Table, err)
			}
		}
		fill("20000", "(g % 40) * 3600000", true)
		if _, err := conn.Exec(ctx, "ANALYZE "+tab); err != nil {
			t.Fatal(err)
		}
		fill("2000", "7 * 3600000", false)
		merge, _ := mergeStatements(rt)
		for _, settings := range []bool{true, false} {
			tx, err := conn.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if settings {
				if _, err := tx.Exec(ctx, mergeSettings); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := tx.Exec(ctx, "PREPARE merge_plan AS "+merge); err != nil {
				t.Fatalf("%s: %v", rt.Table, err)
			}
			var raw []byte
			if err := tx.QueryRow(ctx, "EXPLAIN (FORMAT JSON) EXECUTE merge_plan(3600000, 7 * 3600000)").Scan(&raw); err != nil {
				t.Fatalf("%s: %v", rt.Table, err)
			}
			tx.Rollback(ctx)
			if _, err := conn.Exec(ctx, "DEALLOCATE merge_plan"); err != nil {
				t.Fatal(err)
			}
			nodes := planNodes(t, raw)
			nested := strings.Contains(strings.Join(nodes, ","), "Nested Loop")
			if settings && nested {
				t.Errorf("%s: merge planned with nested loops under %q: %v", rt.Table, mergeSettings, nodes)
			}
			if !settings && !nested {
				t.Errorf("%s: without %q the merge has no nested loop (%v): the test no longer shows the case it guards against", rt.Table, mergeSettings, nodes)
			}
		}
	}
}
