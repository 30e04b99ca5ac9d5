// Command stmttime times SQL statements as the server's driver runs them
// (pgx, extended protocol, binary results, every row read), without the
// server: the median of N runs of each file's statement, the files
// interleaved run by run so that a noisy machine weighs on all alike.
//
//	go run ./docs/scaling/stop30/stmttime [-n 60] [-url postgres://...] FILE.sql...
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"
)

func main() {
	url := flag.String("url", "postgres://postgres@127.0.0.1:5432/med30?sslmode=disable", "database")
	n := flag.Int("n", 60, "runs of each statement")
	flag.Parse()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, *url)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer c.Close(ctx)
	sqls := map[string]string{}
	for _, f := range flag.Args() {
		b, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		sqls[f] = string(b)
	}
	times := map[string][]time.Duration{}
	size := map[string]int{}
	for i := 0; i < *n+3; i++ { // the first 3 runs warm up
		for _, f := range flag.Args() {
			t := time.Now()
			rows, err := c.Query(ctx, sqls[f], pgx.QueryResultFormats{pgx.BinaryFormatCode})
			if err != nil {
				fmt.Fprintln(os.Stderr, f, err)
				os.Exit(1)
			}
			bytes := 0
			for rows.Next() {
				for _, v := range rows.RawValues() {
					bytes += len(v)
				}
			}
			if err := rows.Err(); err != nil {
				fmt.Fprintln(os.Stderr, f, err)
				os.Exit(1)
			}
			if i >= 3 {
				times[f] = append(times[f], time.Since(t))
			}
			size[f] = bytes
		}
	}
	for _, f := range flag.Args() {
		ds := times[f]
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		fmt.Printf("%-50s median %8.3f ms  (%d runs, %d bytes of values)\n", f, float64(ds[len(ds)/2].Microseconds())/1000, len(ds), size[f])
	}
}
