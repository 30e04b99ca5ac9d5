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
	"reportdb/sqlite"
	"reportdb/store"
)

// serveConfig is the effective configuration of `reportdb serve`.
type serveConfig struct {
	Listen       string
	DataDir      string
	MaxBodyBytes int64
	QueryTimeout time.Duration
	MaxBatch     int
	LogFormat    string
}

func envOr(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

func parseServeFlags(args []string, stderr io.Writer) (*serveConfig, error) {
	c := &serveConfig{}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.Listen, "listen", envOr("REPORTDB_LISTEN", "127.0.0.1:8080"), "HOST:PORT to serve plain HTTP on (env REPORTDB_LISTEN)")
	fs.StringVar(&c.DataDir, "data-dir", envOr("REPORTDB_DATA_DIR", "./data"), "directory of the embedded database (env REPORTDB_DATA_DIR)")
	maxBody, _ := strconv.ParseInt(envOr("REPORTDB_MAX_BODY_BYTES", "67108864"), 10, 64)
	fs.Int64Var(&c.MaxBodyBytes, "max-body-bytes", maxBody, "largest accepted report body in bytes, after gzip decoding (env REPORTDB_MAX_BODY_BYTES)")
	qt, _ := time.ParseDuration(envOr("REPORTDB_QUERY_TIMEOUT", "2m"))
	fs.DurationVar(&c.QueryTimeout, "query-timeout", qt, "longest a query may run (env REPORTDB_QUERY_TIMEOUT)")
	mb, _ := strconv.Atoi(envOr("REPORTDB_MAX_BATCH", "256"))
	fs.IntVar(&c.MaxBatch, "max-batch", mb, "most reports committed in one transaction (env REPORTDB_MAX_BATCH)")
	fs.StringVar(&c.LogFormat, "log-format", envOr("REPORTDB_LOG_FORMAT", "text"), "log format: text or json (env REPORTDB_LOG_FORMAT)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %v", fs.Args())
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
	var backend store.Backend
	db, err := sqlite.Open(cfg.DataDir)
	if err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	backend = db
	defer backend.Close()
	committer := ingest.NewCommitter(backend, cfg.MaxBatch)
	defer committer.Close()
	api := httpapi.New(httpapi.Config{MaxBodyBytes: cfg.MaxBodyBytes, QueryTimeout: cfg.QueryTimeout}, backend, committer, log)

	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: api, ReadHeaderTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("reportdb listening", "addr", "http://"+ln.Addr().String(), "data_dir", cfg.DataDir, "database", "sqlite")
	if ready != nil {
		ready <- ln.Addr().String()
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing in-flight requests")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return srv.Shutdown(shutdownCtx)
}
