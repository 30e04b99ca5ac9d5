package sqlite_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"reportdb"
	"reportdb/ingest"
	"reportdb/internal/benchfleet"
	"reportdb/jsonv"
	"reportdb/sqlite"
	"reportdb/storetest"
	"reportdb/wire"
)

// BenchmarkIngest measures end-to-end ingest on the embedded store: JSON
// parse, validation, normalisation and durable group commit, with 8
// concurrent submitters (as the terminus' connections would be).
func BenchmarkIngest(b *testing.B) {
	fleet := benchfleet.Wire8(b, 1+b.N/149)
	db, err := sqlite.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	c := ingest.NewCommitter(db, 256)
	defer c.Close()
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= b.N {
					return
				}
				v, err := jsonv.Parse(fleet[i].Body)
				if err != nil {
					b.Error(err)
					return
				}
				r, err := wire.Decode(8, v, time.Now().UnixMilli())
				if err != nil {
					b.Error(err)
					return
				}
				if o, err := c.Submit(context.Background(), r); err != nil || o != reportdb.Stored {
					b.Errorf("submit: %v %v", o, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "reports/s")
}

// BenchmarkEventQueries runs the events part of the shared benchmark's
// query mix against 20 copies of the corpus (2,980 reports, ~50k events),
// through the HTTP handler.
func BenchmarkEventQueries(b *testing.B) {
	db, err := sqlite.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	h, stop := storetest.NewHandler(db, 0)
	defer stop()
	for _, r := range benchfleet.Wire8(b, 20) {
		req := httptest.NewRequest("POST", "/pdb/cmd/v1?command=store_report&version=8&certname="+r.Certname, bytes.NewReader(r.Body))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatal(rec.Body.String())
		}
	}
	node := "n007-web01.prod.example.com"
	hash := firstHash(b, h, node)
	mix := []struct{ name, path string }{
		{"node_latest_events", "/pdb/query/v4/events?" + q(`["and",["=","certname","`+node+`"],["=","latest_report?",true]]`)},
		{"report_events_by_hash", "/pdb/query/v4/events?" + q(`["=","report","`+hash+`"]`)},
		{"failures_window", "/pdb/query/v4/events?" + q(`["and",["=","status","failure"],[">","timestamp","2025-01-07T00:00:00Z"]]`) + "&order_by=" + url.QueryEscape(`[{"field":"timestamp","order":"desc"}]`) + "&limit=100"},
		{"regex_resource_title", "/pdb/query/v4/events?" + q(`["~","resource_title","^/etc/nginx/"]`) + "&order_by=" + url.QueryEscape(`[{"field":"timestamp","order":"desc"}]`) + "&limit=1000"},
		{"latest_events_by_status", "/pdb/query/v4/events?" + q(`["extract",[["function","count"],"status"],["=","latest_report?",true],["group_by","status"]]`)},
		{"distinct_resources_day", "/pdb/query/v4/events?" + q(`["=","status","failure"]`) + "&distinct_resources=true&distinct_start_time=2025-01-07T00:00:00Z&distinct_end_time=2025-01-08T00:00:00Z"},
		{"events_page_total", "/pdb/query/v4/events?" + q(`["=","environment","production"]`) + "&order_by=" + url.QueryEscape(`[{"field":"timestamp"}]`) + "&limit=100&offset=5000&include_total=true"},
	}
	for _, m := range mix {
		b.Run(m.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest("GET", m.path, nil))
				if rec.Code != 200 {
					b.Fatalf("%d %s", rec.Code, rec.Body.String())
				}
			}
		})
	}
}

func q(s string) string { return "query=" + url.QueryEscape(s) }

func firstHash(b *testing.B, h http.Handler, node string) string {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/pdb/query/v4/reports?"+q(`["extract",["hash"],["=","certname","`+node+`"]]`), nil))
	v, err := jsonv.Parse(rec.Body.Bytes())
	if err != nil {
		b.Fatal(err)
	}
	rows := v.([]any)
	if len(rows) == 0 {
		b.Fatal("no reports for " + node)
	}
	hv, _ := rows[0].(*jsonv.Object).Get("hash")
	return hv.(string)
}
