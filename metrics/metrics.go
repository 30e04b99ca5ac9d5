// Package metrics holds reportdb's Prometheus metrics, registered on a
// private registry (never the global one) and served as /metrics.
//
// Everything here is built for the ingest path (>1,000 reports/s): the label
// values are a small closed set, and the per-request observations use
// pre-resolved series (no label hashing or map look-ups under locks).
package metrics

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"reportdb/store"
)

// Ingest channels: how a report reached reportdb.
const (
	ChannelCommand       = "command"        // POST /pdb/cmd/v1 (the puppetdb terminus)
	ChannelPuppetReport  = "puppet_report"  // PUT /puppet/v3/report/<certname>
	ChannelHTTPProcessor = "http_processor" // Puppet's http report processor
	ChannelImport        = "import"         // reportdb import
)

// Ingest outcomes.
const (
	OutcomeStored    = "stored"    // the report was written
	OutcomeDuplicate = "duplicate" // a report with the same hash existed
	OutcomeRejected  = "rejected"  // invalid, too large, forbidden, ... (4xx)
	OutcomeError     = "error"     // reportdb failed (5xx)
	OutcomeQueued    = "queued"    // the database could not take it; spooled
)

// Channels and Outcomes list every label value, in a fixed order.
var (
	Channels = []string{ChannelCommand, ChannelPuppetReport, ChannelHTTPProcessor, ChannelImport}
	Outcomes = []string{OutcomeStored, OutcomeDuplicate, OutcomeRejected, OutcomeError, OutcomeQueued}
)

// OtherEndpoint is the query label of requests that match no route.
const OtherEndpoint = "other"

// EndpointIndex returns the index of an endpoint label among the labels
// New was given (that of OtherEndpoint for a label that is not one).
func (m *Metrics) EndpointIndex(endpoint string) int {
	for i, e := range m.endpoints {
		if e == endpoint {
			return i
		}
	}
	for i, e := range m.endpoints {
		if e == OtherEndpoint {
			return i
		}
	}
	return -1
}

const (
	minCode = 100
	maxCode = 599
)

// Metrics is the set of reportdb's metrics. The zero value is not usable;
// use New. A nil *Metrics is valid and records nothing.
type Metrics struct {
	reg *prometheus.Registry

	ingestTotal    *prometheus.CounterVec
	ingestDuration *prometheus.HistogramVec
	ingest         [4][5]ingestSeries // [channel][outcome]

	queryTotal    *prometheus.CounterVec
	queryDuration *prometheus.HistogramVec
	// endpoints are the query endpoint labels; query series are created on
	// first use for each (endpoint, code)
	endpoints []string
	query     [][maxCode - minCode + 1]atomic.Pointer[querySeries]

	batchSize    prometheus.Histogram
	batchTotal   *prometheus.CounterVec
	batchOK      prometheus.Counter
	batchFailed  prometheus.Counter
	retentionRun *prometheus.CounterVec
	retentionDel prometheus.Counter
	retentionDur prometheus.Histogram
	retentionAt  prometheus.Gauge

	pool atomic.Pointer[func() []PoolStats]
	// servers reports the database servers (SetDatabaseServers)
	servers atomic.Pointer[func() []store.DatabaseServer]
}

type ingestSeries struct {
	count prometheus.Counter
	dur   prometheus.Observer
}

type querySeries struct {
	count prometheus.Counter
	dur   prometheus.Observer
}

// latencyBuckets spans sub-millisecond queries and submissions to
// multi-second ones.
var latencyBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120}

// New creates the metrics on a fresh private registry, with Go runtime and
// process collectors. endpoints are the query endpoint labels (the API's
// route labels, httpapi.Endpoints: route patterns, never raw paths); a
// query is observed by the index of its label (see EndpointIndex), and
// OtherEndpoint is added when missing.
func New(endpoints ...string) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), endpoints: append([]string(nil), endpoints...)}
	if !slices.Contains(m.endpoints, OtherEndpoint) {
		m.endpoints = append(m.endpoints, OtherEndpoint)
	}
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	m.ingestTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "reportdb_ingest_reports_total",
		Help: "Reports received, by channel (command, puppet_report, http_processor, import) and outcome (stored, duplicate, rejected, error).",
	}, []string{"channel", "outcome"})
	m.ingestDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "reportdb_ingest_duration_seconds",
		Help:    "Time from receiving a report to answering it (the report is durable when stored), by channel and outcome.",
		Buckets: latencyBuckets,
	}, []string{"channel", "outcome"})
	for ci, ch := range Channels {
		for oi, out := range Outcomes {
			m.ingest[ci][oi] = ingestSeries{
				count: m.ingestTotal.WithLabelValues(ch, out),
				dur:   m.ingestDuration.WithLabelValues(ch, out),
			}
		}
	}

	m.queryTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "reportdb_query_requests_total",
		Help: "Query requests answered, by endpoint (route pattern) and HTTP status code.",
	}, []string{"endpoint", "code"})
	m.queryDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "reportdb_query_duration_seconds",
		Help:    "Time to answer a query request (including streaming the rows), by endpoint and HTTP status code.",
		Buckets: latencyBuckets,
	}, []string{"endpoint", "code"})
	m.query = make([][maxCode - minCode + 1]atomic.Pointer[querySeries], len(m.endpoints))

	m.batchSize = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "reportdb_commit_batch_size",
		Help:    "Reports per group-commit transaction.",
		Buckets: prometheus.ExponentialBuckets(1, 2, 11), // 1 .. 1024
	})
	m.batchTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "reportdb_commit_batches_total",
		Help: "Group-commit transactions, by result (ok, error).",
	}, []string{"result"})
	m.batchOK = m.batchTotal.WithLabelValues("ok")
	m.batchFailed = m.batchTotal.WithLabelValues("error")

	m.retentionRun = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "reportdb_retention_runs_total",
		Help: "Retention (report-ttl) runs, by result (ok, busy: running in another instance, error).",
	}, []string{"result"})
	for _, r := range []string{"ok", "busy", "error"} {
		m.retentionRun.WithLabelValues(r)
	}
	m.retentionDel = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "reportdb_retention_deleted_reports_total",
		Help: "Reports deleted by retention.",
	})
	m.retentionDur = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "reportdb_retention_duration_seconds",
		Help:    "Duration of retention runs.",
		Buckets: []float64{.01, .1, 1, 10, 60, 300, 1800},
	})
	m.retentionAt = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "reportdb_retention_last_success_timestamp_seconds",
		Help: "Unix time of the last successful retention run (0: none yet).",
	})

	m.reg.MustRegister(m.ingestTotal, m.ingestDuration, m.queryTotal, m.queryDuration,
		m.batchSize, m.batchTotal, m.retentionRun, m.retentionDel, m.retentionDur, m.retentionAt,
		poolCollector{m}, serverCollector{m})
	return m
}

// Registry returns the private registry (to register more collectors).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in the Prometheus text format (or OpenMetrics
// when the scraper asks for it).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{EnableOpenMetrics: true})
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// ObserveIngest records one report received on channel with outcome, d
// after it arrived. Unknown channels or outcomes are ignored.
func (m *Metrics) ObserveIngest(channel, outcome string, d time.Duration) {
	if m == nil {
		return
	}
	ci, oi := indexOf(Channels, channel), indexOf(Outcomes, outcome)
	if ci < 0 || oi < 0 {
		return
	}
	s := &m.ingest[ci][oi]
	s.count.Inc()
	s.dur.Observe(d.Seconds())
}

// ObserveQuery records one query request answered with HTTP status code
// after d; endpoint is the index of its label (see EndpointIndex).
func (m *Metrics) ObserveQuery(endpoint, code int, d time.Duration) {
	if m == nil || endpoint < 0 || endpoint >= len(m.query) {
		return
	}
	if code < minCode || code > maxCode {
		code = 0
	}
	var slot *atomic.Pointer[querySeries]
	if code == 0 {
		// out-of-range codes are not cached
		m.queryTotal.WithLabelValues(m.endpoints[endpoint], "0").Inc()
		m.queryDuration.WithLabelValues(m.endpoints[endpoint], "0").Observe(d.Seconds())
		return
	}
	slot = &m.query[endpoint][code-minCode]
	s := slot.Load()
	if s == nil {
		c := strconv.Itoa(code)
		s = &querySeries{
			count: m.queryTotal.WithLabelValues(m.endpoints[endpoint], c),
			dur:   m.queryDuration.WithLabelValues(m.endpoints[endpoint], c),
		}
		slot.Store(s) // racing stores resolve to the same series
	}
	s.count.Inc()
	s.dur.Observe(d.Seconds())
}

// ObserveBatch is ingest.Committer's OnBatch hook.
func (m *Metrics) ObserveBatch(n int, err error) {
	if m == nil {
		return
	}
	m.batchSize.Observe(float64(n))
	if err != nil {
		m.batchFailed.Inc()
	} else {
		m.batchOK.Inc()
	}
}

// ObserveRetention is store.Retention's OnRun hook.
func (m *Metrics) ObserveRetention(deleted int64, d time.Duration, err error) {
	if m == nil {
		return
	}
	switch {
	case errors.Is(err, store.ErrBusy):
		m.retentionRun.WithLabelValues("busy").Inc()
		return
	case err != nil:
		m.retentionRun.WithLabelValues("error").Inc()
	default:
		m.retentionRun.WithLabelValues("ok").Inc()
		m.retentionAt.SetToCurrentTime()
	}
	if deleted > 0 {
		m.retentionDel.Add(float64(deleted))
	}
	m.retentionDur.Observe(d.Seconds())
}
