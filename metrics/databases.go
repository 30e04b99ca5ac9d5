package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"reportdb/store"
)

// SetDatabaseServers installs the function that reports the database
// servers (the primary and the read replicas) at each scrape.
func (m *Metrics) SetDatabaseServers(f func() []store.DatabaseServer) {
	if m == nil {
		return
	}
	m.servers.Store(&f)
}

var (
	descPrimary      = prometheus.NewDesc("reportdb_database_primary", "1 for the server writes go to (the primary; after a failover, the standby promoted in its place).", []string{"server"}, nil)
	descServerUp     = prometheus.NewDesc("reportdb_database_up", "Whether the server answered its last check (1) or not (0).", []string{"server", "role"}, nil)
	descReplicaLag   = prometheus.NewDesc("reportdb_database_replica_lag_seconds", "How far a read replica's replay is behind the primary: how long ago the primary first wrote what it has not replayed.", []string{"server"}, nil)
	descInRotation   = prometheus.NewDesc("reportdb_database_replica_in_rotation", "Whether a read replica answers queries (1) or is out of rotation (0: down, or more than max-replica-lag behind).", []string{"server"}, nil)
	descServerReads  = prometheus.NewDesc("reportdb_database_queries_total", "Read transactions (queries, dashboard and fleet reads) answered by the server.", []string{"server", "role"}, nil)
	descServerReadTm = prometheus.NewDesc("reportdb_database_query_seconds_total", "Time from the start to the end of the read transactions the server answered, the time their rows spend in reportdb included.", []string{"server", "role"}, nil)
)

// serverCollector reads the database servers' state at scrape time.
type serverCollector struct{ m *Metrics }

func (c serverCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descPrimary, descServerUp, descReplicaLag, descInRotation, descServerReads, descServerReadTm} {
		ch <- d
	}
}

func (c serverCollector) Collect(ch chan<- prometheus.Metric) {
	f := c.m.servers.Load()
	if f == nil {
		return
	}
	b := func(v bool) float64 {
		if v {
			return 1
		}
		return 0
	}
	for _, s := range (*f)() {
		ch <- prometheus.MustNewConstMetric(descServerUp, prometheus.GaugeValue, b(s.Up), s.Server, s.Role)
		if s.Role == "replica" {
			ch <- prometheus.MustNewConstMetric(descReplicaLag, prometheus.GaugeValue, s.Lag.Seconds(), s.Server)
			ch <- prometheus.MustNewConstMetric(descInRotation, prometheus.GaugeValue, b(s.InRotation), s.Server)
		} else {
			ch <- prometheus.MustNewConstMetric(descPrimary, prometheus.GaugeValue, 1, s.Server)
		}
		ch <- prometheus.MustNewConstMetric(descServerReads, prometheus.CounterValue, float64(s.Queries), s.Server, s.Role)
		ch <- prometheus.MustNewConstMetric(descServerReadTm, prometheus.CounterValue, s.QueryTime.Seconds(), s.Server, s.Role)
	}
}
