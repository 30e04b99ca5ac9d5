//go:build ignore

// The report_by_hash experiment of report-lookup-experiment.txt:
//   go run lookup-experiment.go DATABASE CERTNAME HASH   (from this directory; cur.sql beside it)

package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

func med(f func()) time.Duration {
	var ds []time.Duration
	for i := 0; i < 20; i++ {
		f()
	}
	for i := 0; i < 300; i++ {
		t := time.Now()
		f()
		ds = append(ds, time.Since(t))
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2]
}

func main() {
	ctx := context.Background()
	db, cert, hash := os.Args[1], os.Args[2], os.Args[3]
	cfg, _ := pgx.ParseConfig("postgres://postgres@127.0.0.1:5432/" + db)
	cfg.RuntimeParams["plan_cache_mode"] = "force_generic_plan"
	cfg.RuntimeParams["max_parallel_workers_per_gather"] = "0"
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		panic(err)
	}
	cur, _ := os.ReadFile("cur.sql")
	q := string(cur)
	run := func(sql string, args ...any) int {
		rows, err := c.Query(ctx, sql, args...)
		if err != nil {
			panic(err)
		}
		n := 0
		for rows.Next() {
			n++
		}
		if rows.Err() != nil {
			panic(rows.Err())
		}
		return n
	}
	fmt.Println("rows", run(q, cert, hash, hash))
	tCur := med(func() { run(q, cert, hash, hash) })
	lookup := "SELECT id FROM rbh_lookup WHERE key = ANY(ARRAY[hashtextextended('h'||$1::text,0), hashtextextended('c'||$2::text||chr(1)||$1::text,0)])"
	var ids []int64
	rows, _ := c.Query(ctx, lookup, hash, cert)
	for rows.Next() {
		var id int64
		rows.Scan(&id)
		ids = append(ids, id)
	}
	lo := ids[0] &^ (1<<32 - 1)
	hi := lo + 1<<32
	qb := strings.Replace(q, "AND r.type = 'agent')", "AND r.type = 'agent') AND r.id = ANY($4) AND r.id >= $5 AND r.id < $6", 1)
	qb = strings.ReplaceAll(qb, "WHERE d.id = r.id", "WHERE d.id = r.id AND d.id >= $5 AND d.id < $6")
	qb = strings.ReplaceAll(qb, "WHERE e.report_id = r.id", "WHERE e.report_id = r.id AND e.report_id >= $5 AND e.report_id < $6")
	fmt.Println("ids", ids, "rowsB", run(qb, cert, hash, hash, ids, lo, hi))
	tA := med(func() { run(lookup, hash, cert) })
	tBg := med(func() { run(qb, cert, hash, hash, ids, lo, hi) })
	c.Exec(ctx, "SET plan_cache_mode = force_custom_plan")
	tBc := med(func() { run(qb, cert, hash, hash, ids, lo, hi) })
	c.Exec(ctx, "SET plan_cache_mode = force_generic_plan")
	tCur2 := med(func() { run(q, cert, hash, hash) })
	fmt.Printf("%s cur %v/%v lookup %v B-generic %v B-custom %v\n", db, tCur, tCur2, tA, tBg, tBc)
}
