package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"reportdb/dashboard"
	"reportdb/engine"
	"reportdb/fleet"
	"reportdb/httpapi"
	"reportdb/ingest"
	"reportdb/internal/config"
	"reportdb/internal/tlsauth"
	"reportdb/metrics"
	"reportdb/postgres"
	"reportdb/query"
	"reportdb/service"
	"reportdb/spool"
	"reportdb/sqlite"
	"reportdb/store"
	"reportdb/upstream"
)

// serveConfig is the effective configuration of `reportdb serve` (see
// internal/config for every setting, its flag, key and variable).
type serveConfig = config.Config

// defaultConfig is the configuration without flags: defaults, the
// configuration file named by REPORTDB_CONFIG and the environment (for
// subcommands that only need a few settings, such as migrate). Invalid
// values fall back to the defaults; serve reports them.
func defaultConfig() *serveConfig {
	if l, err := config.Load("reportdb", nil, os.LookupEnv, io.Discard); err == nil {
		return l.Config
	}
	c := config.Defaults()
	for _, key := range []string{"data-dir", "database"} {
		s := config.Lookup(key)
		if v, ok := os.LookupEnv(s.Env()); ok {
			s.Set(c, v)
		}
	}
	return c
}

func newLogger(format, level string, w io.Writer) *slog.Logger {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		lv = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: lv}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

func runServe(args []string, stdout, stderr io.Writer) int {
	l, err := config.Load("serve", args, os.LookupEnv, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, "reportdb serve:", err)
		return 2
	}
	if l.PrintConfig {
		if err := l.Print(stdout); err != nil {
			fmt.Fprintln(stderr, "reportdb serve:", err)
			return 1
		}
		return 0
	}
	cfg := l.Config
	log := newLogger(cfg.LogFormat, cfg.LogLevel, stderr)
	// what the packages log on their own (migrations, the read replicas'
	// rotation, partition upkeep) goes out in the same format and level
	slog.SetDefault(log)
	if l.File != "" {
		log.Info("configuration file read", "file", l.File)
	}
	if cfg.Validate() == nil { // serve reports invalid settings
		p := setProcs(cfg.Procs, cfg.Database, cfg.Acknowledge == "spool")
		log.Info("Go CPUs (GOMAXPROCS)", "procs", p.N, "from", p.Reason)
		if limit, from := setMemoryLimit(cfg.MemoryLimit); limit > 0 {
			log.Info("Go memory limit (GOMEMLIMIT)", "bytes", limit, "from", from)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := serve(ctx, cfg, log, nil); err != nil {
		log.Error("reportdb stopped", "err", err)
		return 1
	}
	log.Info("reportdb stopped")
	return 0
}

// listening tells where serve listens ("" when a listener is off).
type listening struct {
	HTTP  string // HOST:PORT of the plain HTTP listener
	HTTPS string // HOST:PORT of the TLS listener
}

// serve runs the service until ctx is cancelled, then shuts down
// gracefully: stop accepting on every listener, finish in-flight requests,
// commit what was submitted. ready, when non-nil, is told where it
// listens.
func serve(ctx context.Context, cfg *serveConfig, log *slog.Logger, ready func(listening)) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	// TLS files first: a bad certificate should not wait for a database
	var auth *tlsauth.Auth
	if cfg.TLSListen != "" {
		var err error
		auth, err = tlsauth.New(tlsauth.Options{CertFile: cfg.TLSCert, KeyFile: cfg.TLSKey, CAFile: cfg.TLSCA,
			CRLFile: cfg.TLSCRL, AllowlistFile: cfg.CertAllowlist, Log: log})
		if err != nil {
			return err
		}
	}
	if cfg.Database == "" {
		unlock, err := lockDataDir(cfg.DataDir)
		if err != nil {
			return err
		}
		defer unlock()
	}
	backend, kind, err := openServeBackend(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer backend.Close()
	if analyze := backend.Housekeeping().Analyze; analyze != nil {
		rows := cfg.AnalyzeRows
		if rows == 0 {
			rows = -1 // off
		}
		analyze(rows, 0, 0) // statistics after ingest (PostgreSQL)
	}
	sp, err := openSpool(cfg)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		// instances sharing one PostgreSQL database, or given one
		// --spool-dir: name the flags that separate them
		return fmt.Errorf("%w; give each instance its own --spool-dir (by default DATA-DIR/spool, so another --data-dir does too)", err)
	}
	if err != nil {
		return err
	}
	if sp != nil {
		defer sp.Close() // after the committer (deferred below) stops using it
	}

	m := metrics.New(httpapi.Endpoints()...)
	m.SetPoolStats(poolStats(backend))
	if ds, ok := backend.(store.DatabaseServers); ok {
		m.SetDatabaseServers(ds.DatabaseServers)
	}
	committer := ingest.NewCommitterWriters(backend, cfg.MaxBatch, cfg.Writers)
	// rollups are compacted every interval, and once ingest goes idle
	compaction := &store.Compaction{Interval: store.DefaultCompactInterval, Idle: store.DefaultCompactIdle, Log: log}
	committer.OnBatch = func(n int, err error) { // read only by commits, after a Submit
		m.ObserveBatch(n, err)
		if err == nil {
			compaction.Wrote()
		}
	}
	fleetState := fleet.New(cfg.Unresponsive, nil)
	m.Registry().MustRegister(fleetState)
	committer.OnStored = fleetState.Observe
	if sp != nil {
		committer.UseSpool(sp, log)
		if cfg.Acknowledge == "spool" {
			committer.AcknowledgeFromSpool()
		}
		registerSpoolMetrics(m, committer)
	}
	defer committer.Close()
	query.SetCatalogEnvironmentFromReports(cfg.CatalogEnvironmentFromReports)
	var up *upstream.Client
	if cfg.Upstream != "" {
		if up, err = upstream.New(upstream.Options{URL: cfg.Upstream, CertFile: cfg.UpstreamTLSCert,
			KeyFile: cfg.UpstreamTLSKey, CAFile: cfg.UpstreamTLSCA}); err != nil {
			return err
		}
		log.Info("upstream PuppetDB", "url", up.URL())
	}
	api := httpapi.New(httpapi.Config{MaxBodyBytes: cfg.MaxBodyBytes, QueryTimeout: cfg.QueryTimeout,
		CorrectiveCounts: cfg.CorrectiveCounts, Upstream: up, PuppetDBVersion: cfg.PuppetDBVersion, OnDeactivated: fleetState.Forget}, backend, committer, log)

	// the API behind its URL and query concurrency limits; the dashboard's
	// queries take the same query slots
	slots := service.NewSlots(querySlots(cfg), cfg.QueryQueueWait)
	limited := limitHandler(api, cfg, m, slots)
	// /metrics beside the API (PuppetDB clients never use that path)
	metricsHandler := m.Handler()
	var inner http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			metricsHandler.ServeHTTP(w, r)
			return
		}
		limited.ServeHTTP(w, r)
	})
	if cfg.Dashboard { // /ui/ and / beside the API (PuppetDB's API uses neither)
		inner = dashboard.New(dashboard.Options{Queries: service.Limit(api.Queries(), slots), Unresponsive: cfg.Unresponsive,
			ReportTTL: cfg.ReportTTL, Fleet: fleetState, Log: log}).Wrap(inner)
	}
	instrument := httpapi.InstrumentOptions{Log: log, Metrics: m, SlowQuery: cfg.SlowQuery}
	errorLog := slog.NewLogLogger(log.Handler(), slog.LevelWarn)

	var servers []*http.Server
	var at listening
	errc := make(chan error, 2)
	closeAll := func() {
		for _, s := range servers {
			s.Close()
		}
	}
	if cfg.Listen != "" {
		ln, err := net.Listen("tcp", cfg.Listen)
		if err != nil {
			return err
		}
		srv := &http.Server{Handler: httpapi.Instrument(inner, instrument), ErrorLog: errorLog}
		applyHTTPLimits(srv, cfg)
		servers = append(servers, srv)
		at.HTTP = ln.Addr().String()
		go func() { errc <- srv.Serve(ln) }()
	}
	if auth != nil {
		ln, err := net.Listen("tcp", cfg.TLSListen)
		if err != nil {
			closeAll()
			return err
		}
		srv := &http.Server{Handler: httpapi.Instrument(auth.Middleware(inner, api.WriteError), instrument),
			TLSConfig: auth.TLSConfig(), ErrorLog: errorLog}
		applyHTTPLimits(srv, cfg)
		servers = append(servers, srv)
		at.HTTPS = ln.Addr().String()
		go func() { errc <- srv.ServeTLS(ln, "", "") }()
	}

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
	nodeTTL := cfg.NodeTTL
	if cfg.Upstream != "" {
		// the upstream expires nodes by their facts and catalogs too
		nodeTTL = 0
	}
	retention := &store.Retention{Backend: backend, TTL: cfg.ReportTTL, Interval: cfg.GCInterval, Log: log, OnRun: m.ObserveRetention,
		NodeTTL: nodeTTL, PurgeTTL: cfg.NodePurgeTTL, PurgeBatch: cfg.NodePurgeBatch}
	go retention.Run(bg)
	// in the background: counting a long history must not delay the start
	counted := make(chan struct{})
	go func() {
		defer close(counted)
		warnExpired(bg, backend, cfg, time.Now(), log)
		warnExpiringNodes(bg, backend, cfg, time.Now(), log)
	}()
	defer func() { cancelBG(); <-counted }()
	go compaction.Run(bg, backend)
	go fleetState.Run(bg, api.Queries(), fleetRefresh, func(err error) { log.Error("loading the fleet state", "err", err) })

	common := []any{"database", kind}
	if n := len(cfg.ReadDatabases); n > 0 {
		common = append(common, "read_databases", n, "max_replica_lag", cfg.MaxReplicaLag)
	}
	if kind == "sqlite" {
		common = append(common, "data_dir", cfg.DataDir)
	}
	if at.HTTP != "" {
		log.Info("reportdb listening", append([]any{"addr", "http://" + at.HTTP}, common...)...)
	}
	if at.HTTPS != "" {
		attrs := append([]any{"addr", "https://" + at.HTTPS, "client_ca", cfg.TLSCA}, common...)
		if cfg.TLSCRL != "" {
			attrs = append(attrs, "crl", cfg.TLSCRL)
		}
		if cfg.CertAllowlist != "" {
			attrs = append(attrs, "cert_allowlist", cfg.CertAllowlist)
		}
		log.Info("reportdb listening (TLS, client certificates required)", attrs...)
	}
	if ready != nil {
		ready(at)
	}
	select {
	case err := <-errc:
		closeAll()
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing in-flight requests")
	cancelBG()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, len(servers))
	for i, s := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.Shutdown(shutdownCtx)
		}()
	}
	wg.Wait()
	if sp != nil {
		deliverSpoolAtShutdown(committer, sp, log)
	}
	// then (deferred) committer.Close commits what is queued and the
	// backend closes
	return errors.Join(errs...)
}

// shutdownDeliveryWait bounds how long a stopping server delivers its
// spool (acknowledged reports not yet in the database) while the
// database takes them, so that a restart or a scale-down leaves nothing
// on the instance's disk; with acknowledge spool under a steady load it
// holds about one batch. What is left is delivered at the next start
// with the same spool directory.
const shutdownDeliveryWait = 20 * time.Second

func deliverSpoolAtShutdown(c *ingest.Committer, sp *spool.Spool, log *slog.Logger) {
	n := sp.Len()
	if n == 0 {
		return
	}
	log.Info("shutting down: delivering the spool", "reports", n)
	ctx, cancel := context.WithTimeout(context.Background(), shutdownDeliveryWait)
	defer cancel()
	if left := c.DeliverSpool(ctx); left > 0 {
		log.Warn("stopping with reports in the spool: they are delivered at the next start with this spool directory", "reports", left, "dir", sp.Dir())
		return
	}
	log.Info("spool delivered")
}

// fleetRefresh is how often the fleet metrics reload the nodes' latest
// reports from the database (reports stored by other instances, retention).
const fleetRefresh = 5 * time.Minute

// poolStats reports the backend's connection pools for /metrics.
func poolStats(backend engine.Backend) func() []metrics.PoolStats {
	switch b := backend.(type) {
	case *postgres.Lazy:
		return func() []metrics.PoolStats {
			if db := b.DB(); db != nil {
				return poolStats(db)()
			}
			return nil
		}
	case *postgres.DB:
		return func() []metrics.PoolStats {
			s := b.PoolStat()
			return []metrics.PoolStats{{Pool: "postgres", MaxOpen: int64(s.MaxConns()), Open: int64(s.TotalConns()),
				InUse: int64(s.AcquiredConns()), Idle: int64(s.IdleConns()), Acquires: s.AcquireCount(),
				Waits: s.EmptyAcquireCount(), WaitTime: s.EmptyAcquireWaitTime()}}
		}
	case *sqlite.DB:
		return func() []metrics.PoolStats {
			w, r := b.DBStats()
			out := make([]metrics.PoolStats, 0, 2)
			for _, p := range []struct {
				name string
				s    sql.DBStats
			}{{"sqlite_writer", w}, {"sqlite_reader", r}} {
				out = append(out, metrics.PoolStats{Pool: p.name, MaxOpen: int64(p.s.MaxOpenConnections), Open: int64(p.s.OpenConnections),
					InUse: int64(p.s.InUse), Idle: int64(p.s.Idle), Acquires: -1, Waits: p.s.WaitCount, WaitTime: p.s.WaitDuration})
			}
			return out
		}
	}
	return func() []metrics.PoolStats { return nil }
}
