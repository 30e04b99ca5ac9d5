package metrics

import (
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"reportdb/store"
)

func TestObserve(t *testing.T) {
	var nilM *Metrics // a nil *Metrics records nothing
	nilM.ObserveIngest(ChannelCommand, OutcomeStored, time.Millisecond)
	nilM.ObserveQuery(0, 200, time.Millisecond)
	nilM.ObserveBatch(1, nil)
	nilM.ObserveRetention(1, time.Second, nil)

	m := New("events", "root")
	m.ObserveIngest(ChannelPuppetReport, OutcomeDuplicate, 2*time.Millisecond)
	m.ObserveIngest("carrier pigeon", OutcomeStored, time.Millisecond) // ignored
	m.ObserveQuery(m.EndpointIndex("events"), 200, 3*time.Millisecond)
	m.ObserveQuery(m.EndpointIndex("events"), 200, 3*time.Millisecond)
	m.ObserveQuery(m.EndpointIndex("no such endpoint"), 404, time.Millisecond)
	m.ObserveQuery(m.EndpointIndex("root"), 999, time.Millisecond)
	m.ObserveBatch(7, nil)
	m.ObserveBatch(3, errors.New("disk full"))
	m.ObserveRetention(12, time.Second, nil)
	m.ObserveRetention(0, time.Millisecond, store.ErrBusy)
	m.SetPoolStats(func() []PoolStats {
		return []PoolStats{{Pool: "postgres", MaxOpen: 8, Open: 3, InUse: 1, Idle: 2, Acquires: 40, Waits: 2, WaitTime: time.Second}}
	})

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	out := string(body)
	for _, want := range []string{
		`reportdb_ingest_reports_total{channel="puppet_report",outcome="duplicate"} 1`,
		`reportdb_ingest_reports_total{channel="import",outcome="stored"} 0`,
		`reportdb_query_requests_total{code="200",endpoint="events"} 2`,
		`reportdb_query_requests_total{code="404",endpoint="other"} 1`,
		`reportdb_query_requests_total{code="0",endpoint="root"} 1`,
		`reportdb_commit_batch_size_sum 10`,
		`reportdb_commit_batches_total{result="error"} 1`,
		`reportdb_retention_runs_total{result="busy"} 1`,
		`reportdb_retention_deleted_reports_total 12`,
		`reportdb_retention_duration_seconds_count 1`,
		`reportdb_db_pool_in_use_connections{pool="postgres"} 1`,
		`reportdb_db_pool_acquires_total{pool="postgres"} 40`,
		`reportdb_db_pool_wait_seconds_total{pool="postgres"} 1`,
		`go_goroutines `,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q", want)
		}
	}
	if strings.Contains(out, "carrier pigeon") {
		t.Error("unknown channel recorded")
	}
}

func BenchmarkObserveQuery(b *testing.B) {
	m := New("events")
	ep := m.EndpointIndex("events")
	b.ReportAllocs()
	for b.Loop() {
		m.ObserveQuery(ep, 200, time.Millisecond)
	}
}
