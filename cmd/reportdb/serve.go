package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"reportdb/httpapi"
	"reportdb/ingest"
	"reportdb/store"
)

// serveConfig is the effective configuration of `reportdb serve`.
type serveConfig struct {
	Listen           string
	DataDir          string
	Database         string
	MaxConnections   int
	MaxBodyBytes     int64
	QueryTimeout     time.Duration
	MaxBatch         int
	Writers          int
	ReportTTL        time.Duration
	GCInterval       time.Duration
	CorrectiveCounts bool
	LogFormat        string
	DebugListen      string
}

func envOr(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

func defaultConfig() *serveConfig {
	c := &serveConfig{
		Listen:       envOr("REPORTDB_LISTEN", "127.0.0.1:8080"),
		DataDir:      envOr("REPORTDB_DATA_DIR", "./data"),
		Database:     envOr("REPORTDB_DATABASE", ""),
		MaxBodyBytes: 64 << 20,
		QueryTimeout: 2 * time.Minute,
		MaxBatch:     256,
		ReportTTL:    14 * 24 * time.Hour,
		GCInterval:   time.Hour,
		LogFormat:    envOr("REPORTDB_LOG_FORMAT", "text"),
		DebugListen:  envOr("REPORTDB_DEBUG_LISTEN", ""),
	}
	if v, err := strconv.ParseInt(envOr("REPORTDB_MAX_BODY_BYTES", ""), 10, 64); err == nil {
		c.MaxBodyBytes = v
	}
	if v, err := parseDuration(envOr("REPORTDB_QUERY_TIMEOUT", "")); err == nil && v > 0 {
		c.QueryTimeout = v
	}
	if v, err := strconv.Atoi(envOr("REPORTDB_MAX_BATCH", "")); err == nil {
		c.MaxBatch = v
	}
	if v, err := strconv.Atoi(envOr("REPORTDB_WRITERS", "")); err == nil {
		c.Writers = v
	}
	if v, err := strconv.Atoi(envOr("REPORTDB_MAX_CONNECTIONS", "")); err == nil {
		c.MaxConnections = v
	}
	if s, ok := os.LookupEnv("REPORTDB_REPORT_TTL"); ok {
		if v, err := parseDuration(s); err == nil {
			c.ReportTTL = v
		}
	}
	if v, err := parseDuration(envOr("REPORTDB_GC_INTERVAL", "")); err == nil && v > 0 {
		c.GCInterval = v
	}
	if v, err := strconv.ParseBool(envOr("REPORTDB_CORRECTIVE_COUNTS", "")); err == nil {
		c.CorrectiveCounts = v
	}
	return c
}

func parseServeFlags(args []string, stderr io.Writer) (*serveConfig, error) {
	c := defaultConfig()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.Listen, "listen", c.Listen, "HOST:PORT to serve plain HTTP on (env REPORTDB_LISTEN)")
	fs.StringVar(&c.DataDir, "data-dir", c.DataDir, "directory of the embedded database (env REPORTDB_DATA_DIR)")
	fs.StringVar(&c.Database, "database", c.Database, "PostgreSQL URL, e.g. postgres://user@host/db; empty: embedded database (env REPORTDB_DATABASE)")
	fs.IntVar(&c.MaxConnections, "max-connections", c.MaxConnections, "PostgreSQL connection pool size; 0: automatic (env REPORTDB_MAX_CONNECTIONS)")
	fs.Int64Var(&c.MaxBodyBytes, "max-body-bytes", c.MaxBodyBytes, "largest accepted report body in bytes, after gzip decoding (env REPORTDB_MAX_BODY_BYTES)")
	fs.Var(durationFlag{&c.QueryTimeout}, "query-timeout", "longest a query may run (env REPORTDB_QUERY_TIMEOUT)")
	fs.IntVar(&c.MaxBatch, "max-batch", c.MaxBatch, "most reports committed in one transaction (env REPORTDB_MAX_BATCH)")
	fs.IntVar(&c.Writers, "writers", c.Writers, "batches written concurrently; 0: automatic (1 on SQLite) (env REPORTDB_WRITERS)")
	fs.Var(durationFlag{&c.ReportTTL}, "report-ttl", "delete reports whose producer_timestamp is older than this; 0 disables (env REPORTDB_REPORT_TTL)")
	fs.Var(durationFlag{&c.GCInterval}, "gc-interval", "how often retention runs (env REPORTDB_GC_INTERVAL)")
	fs.BoolVar(&c.CorrectiveCounts, "corrective-counts", c.CorrectiveCounts, "event counts split successes and noops into intentional and corrective (env REPORTDB_CORRECTIVE_COUNTS)")
	fs.StringVar(&c.LogFormat, "log-format", c.LogFormat, "log format: text or json (env REPORTDB_LOG_FORMAT)")
	fs.StringVar(&c.DebugListen, "debug-listen", c.DebugListen, "HOST:PORT for Go's /debug/pprof profiling endpoints; empty: off (env REPORTDB_DEBUG_LISTEN)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		return nil, fmt.Errorf("--log-format must be text or json")
	}
	return c, nil
}

func newLogger(format string, w io.Writer) *slog.Logger {
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, nil))
	}
	return slog.New(slog.NewTextHandler(w, nil))
}

func runServe(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseServeFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, "reportdb serve:", err)
		return 2
	}
	log := newLogger(cfg.LogFormat, stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := serve(ctx, cfg, log, nil); err != nil {
		log.Error("reportdb stopped", "err", err)
		return 1
	}
	return 0
}

// serve runs the service until ctx is cancelled, then shuts down
// gracefully: stop accepting, finish in-flight requests and commits.
// ready, when non-nil, receives the listening address.
func serve(ctx context.Context, cfg *serveConfig, log *slog.Logger, ready chan<- string) error {
	backend, kind, err := openBackend(ctx, cfg.Database, cfg.DataDir, cfg.MaxConnections)
	if err != nil {
		return err
	}
	defer backend.Close()
	committer := ingest.NewCommitterWriters(backend, cfg.MaxBatch, cfg.Writers)
	defer committer.Close()
	api := httpapi.New(httpapi.Config{MaxBodyBytes: cfg.MaxBodyBytes, QueryTimeout: cfg.QueryTimeout,
		CorrectiveCounts: cfg.CorrectiveCounts}, backend, committer, log)

	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: api, ReadHeaderTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()

	if cfg.DebugListen != "" {
		go func() {
			log.Info("debug endpoints listening", "addr", "http://"+cfg.DebugListen+"/debug/pprof/")
			if err := http.ListenAndServe(cfg.DebugListen, pprofMux()); err != nil {
				log.Error("debug listener", "err", err)
			}
		}()
	}
	bg, cancelBG := context.WithCancel(context.Background())
	defer cancelBG()
	retention := &store.Retention{Backend: backend, TTL: cfg.ReportTTL, Interval: cfg.GCInterval, Log: log}
	go retention.Run(bg)

	attrs := []any{"addr", "http://" + ln.Addr().String(), "database", kind}
	if kind == "sqlite" {
		attrs = append(attrs, "data_dir", cfg.DataDir)
	}
	log.Info("reportdb listening", attrs...)
	if ready != nil {
		ready <- ln.Addr().String()
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing in-flight requests")
	cancelBG()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return srv.Shutdown(shutdownCtx)
}
