// Command reportdb is a PuppetDB-compatible store for Puppet run reports.
//
//	reportdb serve     run the HTTP service (embedded SQLite by default)
//	reportdb version   print version information
package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
)

func main() {
	// reportdb's live heap is small (tens of MB) while it allocates fast
	// parsing reports; collecting at 3x the live heap instead of Go's 2x
	// takes GC CPU off ingest and queries for a few MB. At 5x (GOGC=400)
	// the medium fleet's concurrent query mix peaked at 74-80 MB of RSS,
	// at 3x at 53-56 MB, with the same requests/s (522 vs 523, three
	// interleaved rounds) and ingest rate.
	// GOGC in the environment still wins.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(200)
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage: reportdb <command> [flags]

commands:
  serve     run the HTTP service
  import    import report files, directories and PuppetDB export archives
  migrate   apply the database schema migrations
  version   print version, commit and Go version

Run "reportdb <command> -h" for the flags of a command.
`

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "serve":
		return runServe(args[1:], stdout, stderr)
	case "import":
		return runImport(args[1:], stdout, stderr)
	case "migrate":
		return runMigrate(args[1:], stdout, stderr)
	case "version", "--version", "-version":
		return runVersion(stdout)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "reportdb: unknown command %q\n\n%s", args[0], usage)
	return 2
}
