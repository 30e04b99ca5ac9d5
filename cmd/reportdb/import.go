package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/term"

	"reportdb/ingest"
	"reportdb/internal/config"
	"reportdb/internal/importer"
	"reportdb/store"
)

const importUsage = `usage: reportdb import [flags] PATH...

Imports reports that already exist: files, directories (walked recursively,
hidden entries skipped) and PuppetDB export archives. The format of each file
is recognised by its content (gzip is undone first, whatever the name):

  Puppet's own reports   JSON, report_format 10, 11 or 12 (files of the "store"
                         report processor, last_run_report.json, ...), and the
                         YAML of Puppet's reportdir (<certname>/<YYYYMMDDHHMM>.yaml)
  PuppetDB wire format   a "store report" payload of version 5 to 8 (the version
                         is recognised by its keys), or the envelope
                         {"command": "store report", "version": N, "payload": {...}};
                         also as JSON lines, one report per line
  PuppetDB export        a .tar.gz written by "puppet db export" or
  archives               /pdb/admin/v1/archive: its reports are imported (in the
                         store report version its metadata names); catalogs,
                         facts, catalog inputs and fact expirations are skipped
                         and counted

Reports are validated exactly as the server validates submitted reports, and
stored in batches into the embedded database (--data-dir) or PostgreSQL
(--database), or sent to a running reportdb or PuppetDB (--server URL) as
"store report" commands. Already stored reports are counted as duplicates.

Files are read as streams, whatever their size: JSON lines (gzipped or not)
line by line, archives entry by entry; memory depends on --max-batch and
--writers (the reports in flight), not on the files. Progress counts reports
and the bytes of the input read (the compressed position of a .gz), with the
rate and the time left from the bytes.

Bulk loading (--database, e.g. migrating from PuppetDB or a test fleet):
--writers batches of up to --max-batch reports are written concurrently, in
one statement each, through the same store code as the server's group commit
(the same validation, the same rows). Into PostgreSQL, the tables imported
into get a VACUUM (ANALYZE) at the end, so that queries are planned on fresh
statistics. An interrupted import can be run again with the same files:
reports already stored are counted as duplicates and skipped.

With --server, each report is validated here first (PuppetDB answers 200 to an
invalid report and drops it later), then POSTed gzipped to /pdb/cmd/v1 in the
version it was found in (Puppet's reports as version 8), over --connections
connections. A 4xx answer rejects the report with the server's message;
network errors and 5xx answers are retried --retries times, then count as
failed. The server does not say which reports were duplicates.

Puppet's reports carry no producer_timestamp: the PuppetDB terminus uses the
time it processes a report. An import uses the report's end time instead
(its time plus the run's total time, the report's end_time), so that
importing the same file again gives the same report hash and is a duplicate.
Their producer is --producer (null by default).

Retention: "reportdb serve" deletes reports whose producer_timestamp is older
than its --report-ttl (14d by default) at its next retention run, one
--gc-interval (1h) after it starts; serve with --report-ttl 0 (or longer) to
keep imported history. The summary counts the imported reports already older
than --report-ttl here (the server's setting: give the same value).

A rejected or unreadable file never stops the import; the summary lists them.
Exit status: 0 when every report was stored (or already was), 1 when anything
was rejected or failed, 2 for usage errors.

flags:
`

// importConfig is the effective configuration of `reportdb import`.
type importConfig struct {
	DataDir          string
	Database         string
	MaxConnections   int
	MaxBatch         int
	Writers          int
	Workers          int
	Server           string
	Connections      int
	Retries          int
	RetryDelay       time.Duration
	Timeout          time.Duration
	CACert           string
	Cert             string
	Key              string
	Producer         string
	DryRun           bool
	Progress         string
	ProgressInterval time.Duration
	List             int
	ReportTTL        time.Duration
	Paths            []string
}

func importEnv(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

func importEnvInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

func parseImportFlags(args []string, stderr io.Writer) (*importConfig, error) {
	c := &importConfig{
		DataDir:          importEnv("REPORTDB_DATA_DIR", "./data"),
		Database:         importEnv("REPORTDB_DATABASE", ""),
		MaxConnections:   importEnvInt("REPORTDB_MAX_CONNECTIONS", 0),
		MaxBatch:         importEnvInt("REPORTDB_MAX_BATCH", 256),
		Writers:          importEnvInt("REPORTDB_WRITERS", 0),
		Connections:      4,
		Retries:          3,
		RetryDelay:       time.Second,
		Timeout:          2 * time.Minute,
		Progress:         "auto",
		ProgressInterval: 5 * time.Second,
		List:             20,
		// as serve would read it (configuration file, environment)
		ReportTTL: defaultConfig().ReportTTL,
	}
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), importUsage)
		fs.PrintDefaults()
	}
	fs.StringVar(&c.DataDir, "data-dir", c.DataDir, "directory of the embedded database (env REPORTDB_DATA_DIR)")
	fs.StringVar(&c.Database, "database", c.Database, "PostgreSQL URL, e.g. postgres://user@host/db; empty: embedded database (env REPORTDB_DATABASE)")
	fs.IntVar(&c.MaxConnections, "max-connections", c.MaxConnections, "PostgreSQL connection pool size; 0: automatic (env REPORTDB_MAX_CONNECTIONS)")
	fs.IntVar(&c.MaxBatch, "max-batch", c.MaxBatch, "most reports committed in one transaction (env REPORTDB_MAX_BATCH)")
	fs.IntVar(&c.Writers, "writers", c.Writers, "batches written concurrently; 0: automatic (4 on PostgreSQL, 1 on the embedded database) (env REPORTDB_WRITERS)")
	fs.IntVar(&c.Workers, "workers", c.Workers, "reports decoded and stored concurrently (each waits for the commit of its batch); 0: automatic (enough to fill every writer's batch)")
	fs.StringVar(&c.Server, "server", c.Server, "send the reports to this reportdb or PuppetDB (http[s]://host:port) instead of a database")
	fs.IntVar(&c.Connections, "connections", c.Connections, "concurrent requests with --server")
	fs.IntVar(&c.Retries, "retries", c.Retries, "with --server: retries of a report after a network error or a 5xx answer")
	fs.DurationVar(&c.RetryDelay, "retry-delay", c.RetryDelay, "with --server: delay before the first retry (doubled each time)")
	fs.DurationVar(&c.Timeout, "timeout", c.Timeout, "with --server: longest one request may take")
	fs.StringVar(&c.CACert, "cacert", c.CACert, "with an https --server: CA certificate (PEM) to verify it, e.g. Puppet's ssl/certs/ca.pem")
	fs.StringVar(&c.Cert, "cert", c.Cert, "with an https --server: client certificate (PEM)")
	fs.StringVar(&c.Key, "key", c.Key, "with an https --server: client private key (PEM)")
	fs.StringVar(&c.Producer, "producer", c.Producer, "producer (server certname) of imported Puppet reports, which carry none; empty: null")
	fs.BoolVar(&c.DryRun, "dry-run", c.DryRun, "validate only; store nothing")
	fs.StringVar(&c.Progress, "progress", c.Progress, "progress display: auto (a bar on a terminal, lines otherwise), bar, lines or none")
	fs.DurationVar(&c.ProgressInterval, "progress-interval", c.ProgressInterval, "how often progress lines are written (--progress lines)")
	fs.IntVar(&c.List, "list", c.List, "rejected and failed files listed with their reason in the summary; 0: all")
	fs.Func("report-ttl", "the --report-ttl of the server that will hold the reports (`DURATION`, e.g. 14d), to count those its retention deletes; 0: none (env REPORTDB_REPORT_TTL; default "+
		config.FormatDuration(c.ReportTTL)+")", func(s string) (err error) {
		c.ReportTTL, err = config.ParseDuration(s)
		return err
	})
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	c.Paths = fs.Args()
	switch {
	case len(c.Paths) == 0:
		return nil, errors.New("no PATH to import given")
	case c.Progress != "auto" && c.Progress != "bar" && c.Progress != "lines" && c.Progress != "none":
		return nil, fmt.Errorf("--progress must be auto, bar, lines or none, got %q", c.Progress)
	case c.ProgressInterval <= 0:
		return nil, errors.New("--progress-interval must be positive")
	case c.MaxBatch < 1:
		return nil, errors.New("--max-batch must be at least 1")
	case c.Writers < 0:
		return nil, errors.New("--writers must not be negative")
	case c.ReportTTL < 0:
		return nil, errors.New("--report-ttl must not be negative")
	case c.Workers < 0 || c.Connections < 1 || c.Retries < 0 || c.List < 0:
		return nil, errors.New("--workers, --retries and --list must not be negative, --connections must be at least 1")
	case c.Server != "" && c.DryRun:
		return nil, errors.New("--dry-run and --server exclude each other")
	case (c.Cert == "") != (c.Key == ""):
		return nil, errors.New("--cert and --key go together")
	}
	if c.Server != "" {
		u, err := url.Parse(c.Server)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("--server must be an http:// or https:// URL, got %q", c.Server)
		}
	}
	return c, nil
}

func runImport(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseImportFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "reportdb import: %v\n\nRun \"reportdb import -h\" for help.\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return importMain(ctx, cfg, stdout, stderr)
}

// importMain runs an import and writes the summary to stdout and progress
// to stderr; it returns the exit status.
func importMain(ctx context.Context, cfg *importConfig, stdout, stderr io.Writer) int {
	icfg := importer.Config{Workers: cfg.Workers, MaxListed: cfg.List, ReportTTL: cfg.ReportTTL}
	if cfg.Producer != "" {
		p := cfg.Producer
		icfg.Producer = &p
	}
	dest := importer.ToDatabase
	switch {
	case cfg.DryRun:
		dest = importer.DryRun
		icfg.Sink = importer.DryRunSink{}
		if icfg.Workers == 0 {
			icfg.Workers = runtime.GOMAXPROCS(0)
		}
	case cfg.Server != "":
		dest = importer.ToServer
		client, err := importHTTPClient(cfg)
		if err != nil {
			fmt.Fprintln(stderr, "reportdb import:", err)
			return 2
		}
		icfg.Sink = &importer.HTTPSink{URL: cfg.Server, Client: client, Retries: cfg.Retries, RetryDelay: cfg.RetryDelay}
		if icfg.Workers == 0 {
			icfg.Workers = cfg.Connections
		}
	default:
		backend, kind, err := openBackend(ctx, cfg.Database, cfg.DataDir, cfg.MaxConnections, 0)
		if err != nil {
			fmt.Fprintln(stderr, "reportdb import:", err)
			return 1
		}
		defer backend.Close()
		writers := cfg.Writers
		if writers == 0 {
			writers = 1
			if kind == "postgres" {
				writers = 4
			}
		}
		committer := ingest.NewCommitterWriters(backend, cfg.MaxBatch, writers)
		defer committer.Close()
		icfg.Sink = importer.CommitterSink{Committer: committer}
		if icfg.Workers == 0 {
			// Each worker waits for the commit of its report; enough of
			// them keep every writer's batch full while the CPUs decode
			// (a waiting worker holds one decoded report).
			icfg.Workers = min(max(32, 8*runtime.GOMAXPROCS(0), cfg.MaxBatch*(writers+1)), 8192)
		}
		defer afterImport(backend, committer, stderr)
		// The rollups are compacted during the import as the server does:
		// each batch writes one delta row per bucket and dimensions, and
		// left to the end a 14-day import of 10,000 nodes piled up 11
		// million unmerged rows that every batch's index inserts and
		// the final merge paid for.
		cctx, stopCompaction := context.WithCancel(ctx)
		compacted := make(chan struct{})
		go func() {
			defer close(compacted)
			store.RunCompaction(cctx, backend, importCompactInterval,
				slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelError})))
		}()
		defer func() { stopCompaction(); <-compacted }()
		where := "PostgreSQL"
		if kind == "sqlite" {
			where = "the embedded database in " + cfg.DataDir
		}
		fmt.Fprintf(stderr, "importing into %s\n", where)
	}
	switch mode := cfg.Progress; {
	case mode == "bar" || (mode == "auto" && isTerminal(stderr)):
		icfg.Progress = importer.NewBarProgress(stderr)
	case mode == "lines" || mode == "auto":
		icfg.Progress = importer.NewLineProgress(stderr, cfg.ProgressInterval)
	}
	sum := importer.Run(ctx, icfg, cfg.Paths)
	sum.Write(stdout, dest)
	if !sum.OK() {
		return 1
	}
	return 0
}

// importCompactInterval is how often an import into a database compacts
// the rollups (the server's interval).
var importCompactInterval = store.DefaultCompactInterval

// afterImport commits what is queued, then (where the store has them)
// merges the rollup deltas the import wrote, one per batch and bucket, so
// that the first counts read one row per bucket and dimensions, and runs
// VACUUM (ANALYZE) on what the import changed, so that the first queries
// after a bulk load are planned on statistics that know the new rows and
// index-only scans work; then rewrites the tables it left bloated.
//
// Those steps take minutes after a large import (10 min 32 s for a 14-day
// import of 10,000 nodes, most of it merging), after the summary has been
// printed: it says so first, and when it is done, so that the import is
// not taken for finished (and a server started beside it) while it is
// still merging and rewriting the tables queries read.
func afterImport(backend store.Backend, committer *ingest.Committer, stderr io.Writer) {
	committer.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	began := time.Now()
	fmt.Fprintln(stderr, "finishing the import: merging the rollups, then VACUUM (ANALYZE) (the reports are stored; this takes minutes after a large import)")
	defer func() {
		fmt.Fprintf(stderr, "import finished (the last steps took %s)\n", time.Since(began).Round(time.Millisecond))
	}()
	if c := backend.Housekeeping().Compactor; c != nil {
		start := time.Now()
		n, err := c.CompactRollups(ctx)
		if err != nil {
			fmt.Fprintf(stderr, "reportdb import: compacting the rollups after the import failed: %v\n", err)
		} else if n > 0 {
			fmt.Fprintf(stderr, "compacted the rollups of %d buckets in %s\n", n, time.Since(start).Round(time.Millisecond))
		}
	}
	for _, step := range backend.Housekeeping().AfterLoad {
		start := time.Now()
		did, err := step.Run(ctx)
		if err != nil {
			fmt.Fprintf(stderr, "reportdb import: %s after the import failed: %v\n", step.What, err)
		} else if did != "" {
			fmt.Fprintf(stderr, "%s in %s\n", did, time.Since(start).Round(time.Millisecond))
		}
	}
}

// importHTTPClient builds the client for --server: the connection pool
// sized for --connections, TLS from --cacert/--cert/--key.
func importHTTPClient(cfg *importConfig) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = cfg.Connections
	tr.MaxConnsPerHost = cfg.Connections
	if cfg.CACert != "" || cfg.Cert != "" {
		tc := &tls.Config{MinVersion: tls.VersionTLS12}
		if cfg.CACert != "" {
			pem, err := os.ReadFile(cfg.CACert)
			if err != nil {
				return nil, err
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("%s: no PEM certificate found", cfg.CACert)
			}
			tc.RootCAs = pool
		}
		if cfg.Cert != "" {
			cert, err := tls.LoadX509KeyPair(cfg.Cert, cfg.Key)
			if err != nil {
				return nil, err
			}
			tc.Certificates = []tls.Certificate{cert}
		}
		tr.TLSClientConfig = tc
	}
	return &http.Client{Transport: tr, Timeout: cfg.Timeout}, nil
}

// isTerminal reports whether w is a terminal (a progress bar can redraw).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
