package main

import (
	"net/http"
	"path/filepath"
	"runtime"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"reportdb/httpapi"
	"reportdb/ingest"
	"reportdb/jsonv"
	"reportdb/metrics"
	"reportdb/service"
	"reportdb/spool"
)

// openSpool opens the spool of reports waiting for the database (nil when
// spool-max-bytes is 0).
func openSpool(cfg *serveConfig) (*spool.Spool, error) {
	if cfg.SpoolMaxBytes <= 0 {
		return nil, nil
	}
	dir := cfg.SpoolDir
	if dir == "" {
		dir = filepath.Join(cfg.DataDir, "spool")
	}
	return spool.Open(dir, cfg.SpoolMaxBytes)
}

// registerSpoolMetrics exposes the spool's backlog.
func registerSpoolMetrics(m *metrics.Metrics, c *ingest.Committer) {
	stat := func() spool.Stats { st, _, _ := c.SpoolStats(); return st }
	_, max, _ := c.SpoolStats()
	m.Registry().MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "reportdb_spool_reports", Help: "Reports in the spool waiting for the database."},
			func() float64 { return float64(stat().Records) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "reportdb_spool_bytes", Help: "Bytes of the spool's backlog."},
			func() float64 { return float64(stat().Bytes) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "reportdb_spool_max_bytes", Help: "The spool's backlog limit (spool-max-bytes)."},
			func() float64 { return float64(max) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "reportdb_spool_oldest_age_seconds", Help: "Age of the oldest spooled report; 0 when the spool is empty."},
			func() float64 {
				if st := stat(); st.Records > 0 {
					return time.Since(st.Oldest).Seconds()
				}
				return 0
			}),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "reportdb_spool_discarded_total", Help: "Spooled reports the database kept refusing, moved to the spool's discard directory."},
			func() float64 { return float64(c.SpoolDiscarded()) }),
	)
}

// applyHTTPLimits sets the server's timeouts and header limit.
func applyHTTPLimits(srv *http.Server, cfg *serveConfig) {
	jsonv.MaxDepth = cfg.MaxJSONDepth
	srv.ReadHeaderTimeout = cfg.ReadHeaderTimeout
	srv.ReadTimeout = cfg.ReadTimeout
	srv.IdleTimeout = cfg.IdleTimeout
	srv.MaxHeaderBytes = cfg.MaxHeaderBytes
}

// limitHandler applies the URL length, body budget and query concurrency
// (slots) limits, and exposes what the body budget holds.
func limitHandler(h http.Handler, cfg *serveConfig, m *metrics.Metrics, slots *service.Slots) http.Handler {
	bodies := httpapi.NewBodyBudget(cfg.MaxInflightBodyBytes, cfg.QueryQueueWait)
	if bodies != nil {
		m.Registry().MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "reportdb_http_inflight_body_bytes",
			Help: "Bytes of request bodies, their parse and stored documents read back, held against max-inflight-body-bytes."},
			func() float64 { return float64(bodies.Used()) }))
	}
	return httpapi.Limit(h, httpapi.Limits{MaxURLBytes: cfg.MaxURLBytes, Slots: slots,
		Bodies: bodies, WriteTimeout: cfg.QueryTimeout + queryWriteSlack})
}

// queryWriteSlack is how much longer than the query timeout a query's
// answer may take to write (the last rows, the gzip trailer) before a
// client that stopped reading is cut off.
const queryWriteSlack = 10 * time.Second

// querySlots is max-concurrent-queries, or automatically: on SQLite, whose
// queries run on the reportdb process's CPUs beside the writer, half the
// CPUs (at least 1), so that acknowledgements keep a core under a burst of
// heavy queries; on PostgreSQL 8.
func querySlots(cfg *serveConfig) int {
	if cfg.MaxConcurrentQueries > 0 {
		return cfg.MaxConcurrentQueries
	}
	if cfg.Database == "" {
		return max(1, runtime.GOMAXPROCS(0)/2)
	}
	return 8
}
