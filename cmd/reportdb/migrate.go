package main

import (
	"context"
	"flag"
	"fmt"
	"io"
)

// runMigrate applies the schema migrations and exits (they also run at
// start-up; this lets operators migrate before rolling out instances).
func runMigrate(args []string, stdout, stderr io.Writer) int {
	c := defaultConfig()
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.Database, "database", c.Database, "PostgreSQL URL (env REPORTDB_DATABASE); empty: the embedded database")
	fs.StringVar(&c.DataDir, "data-dir", c.DataDir, "directory of the embedded database (env REPORTDB_DATA_DIR)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	backend, kind, err := openBackend(context.Background(), c.Database, c.DataDir, 2, 0)
	if err != nil {
		fmt.Fprintln(stderr, "reportdb migrate:", err)
		return 1
	}
	backend.Close()
	fmt.Fprintf(stdout, "%s schema is up to date\n", kind)
	return 0
}
