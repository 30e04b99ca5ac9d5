package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// PoolStats is a snapshot of one database connection pool.
type PoolStats struct {
	// Pool names the pool: "postgres", or "sqlite_writer" / "sqlite_reader".
	Pool string
	// MaxOpen is the pool's size limit (0: unlimited).
	MaxOpen int64
	// Open is the number of established connections (in use + idle).
	Open int64
	// InUse is the number of connections in use.
	InUse int64
	// Idle is the number of idle connections.
	Idle int64
	// Acquires counts connection acquisitions, where known (-1: unknown).
	Acquires int64
	// Waits counts acquisitions that had to wait for a connection.
	Waits int64
	// WaitTime is the total time spent waiting for a connection.
	WaitTime time.Duration
}

// SetPoolStats installs the function that reports the database pools at
// each scrape (see reportdb/postgres.DB.PoolStat and
// reportdb/sqlite.DB.PoolStats).
func (m *Metrics) SetPoolStats(f func() []PoolStats) {
	if m == nil {
		return
	}
	m.pool.Store(&f)
}

var (
	descPoolMax      = prometheus.NewDesc("reportdb_db_pool_max_connections", "Largest number of connections the pool may open (0: unlimited).", []string{"pool"}, nil)
	descPoolOpen     = prometheus.NewDesc("reportdb_db_pool_open_connections", "Established connections (in use and idle).", []string{"pool"}, nil)
	descPoolInUse    = prometheus.NewDesc("reportdb_db_pool_in_use_connections", "Connections in use.", []string{"pool"}, nil)
	descPoolIdle     = prometheus.NewDesc("reportdb_db_pool_idle_connections", "Idle connections.", []string{"pool"}, nil)
	descPoolAcquires = prometheus.NewDesc("reportdb_db_pool_acquires_total", "Connections acquired from the pool.", []string{"pool"}, nil)
	descPoolWaits    = prometheus.NewDesc("reportdb_db_pool_waits_total", "Acquisitions that had to wait for a connection.", []string{"pool"}, nil)
	descPoolWaitTime = prometheus.NewDesc("reportdb_db_pool_wait_seconds_total", "Total time spent waiting for a connection.", []string{"pool"}, nil)
)

// poolCollector reads the pool statistics at scrape time.
type poolCollector struct{ m *Metrics }

func (c poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descPoolMax, descPoolOpen, descPoolInUse, descPoolIdle, descPoolAcquires, descPoolWaits, descPoolWaitTime} {
		ch <- d
	}
}

func (c poolCollector) Collect(ch chan<- prometheus.Metric) {
	f := c.m.pool.Load()
	if f == nil {
		return
	}
	for _, s := range (*f)() {
		gauge := func(d *prometheus.Desc, v int64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), s.Pool)
		}
		gauge(descPoolMax, s.MaxOpen)
		gauge(descPoolOpen, s.Open)
		gauge(descPoolInUse, s.InUse)
		gauge(descPoolIdle, s.Idle)
		if s.Acquires >= 0 {
			ch <- prometheus.MustNewConstMetric(descPoolAcquires, prometheus.CounterValue, float64(s.Acquires), s.Pool)
		}
		ch <- prometheus.MustNewConstMetric(descPoolWaits, prometheus.CounterValue, float64(s.Waits), s.Pool)
		ch <- prometheus.MustNewConstMetric(descPoolWaitTime, prometheus.CounterValue, s.WaitTime.Seconds(), s.Pool)
	}
}
