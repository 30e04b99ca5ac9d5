package service_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"reportdb"
	"reportdb/engine"
	"reportdb/httpapi"
	"reportdb/internal/apitest"
	"reportdb/internal/testcorpus"
	"reportdb/jsonv"
	"reportdb/query"
	"reportdb/service"
)

// corpus is the service and the API over one SQLite store holding the
// shared corpus.
func corpus(t *testing.T) (*service.Service, http.Handler) {
	t.Helper()
	f := apitest.Corpus(t, httpapi.Config{})
	return service.New(engine.New(f.DB), time.Minute), f.API
}

// answer is a query's answer as bytes: the API's body, or the service's
// rows joined into the array the API writes.
type answer struct {
	status int
	total  string // X-Records
	body   string
}

// viaService runs req through q and renders what it answers as the API
// would.
func viaService(t *testing.T, q service.Querier, req service.Request) answer {
	t.Helper()
	var rows []string
	total, err := q.Query(context.Background(), req, func(row json.RawMessage) error {
		rows = append(rows, string(row))
		return nil
	})
	var e *service.Error
	switch {
	case errors.As(err, &e):
		return answer{status: e.Status, body: e.Message}
	case err != nil:
		t.Fatalf("%+v: %v", req, err)
	}
	a := answer{status: 200, body: "[" + strings.Join(rows, ",") + "]"}
	if req.ASTOnly {
		a.body = rows[0]
	}
	if total >= 0 {
		a.total = strconv.Itoa(total)
	}
	return a
}

// viaHTTP POSTs req to the root endpoint as a JSON body.
func viaHTTP(t *testing.T, h http.Handler, req service.Request) answer {
	t.Helper()
	body := map[string]any{"query": req.Query}
	if len(req.OrderBy) > 0 {
		body["order_by"] = req.OrderBy
	}
	if req.Limit > 0 {
		body["limit"] = req.Limit
	}
	if req.Offset > 0 {
		body["offset"] = req.Offset
	}
	if req.Total {
		body["include_total"] = true
	}
	if req.ASTOnly {
		body["ast_only"] = true
	}
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return post(h, b)
}

func post(h http.Handler, body []byte) answer {
	r := httptest.NewRequest("POST", "/pdb/query/v4", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return answer{status: w.Code, total: w.Header().Get("X-Records"), body: w.Body.String()}
}

// TestSameAsTheAPI: the service answers exactly what the root endpoint
// answers for the same request: rows, totals, ASTs, statuses and
// messages, byte for byte.
func TestSameAsTheAPI(t *testing.T) {
	q, api := corpus(t)
	reports := func(filter any) []any {
		return []any{"from", "reports", []any{"extract", []any{"hash", "certname", "status", "metrics"}, filter}}
	}
	for _, req := range []service.Request{
		{Query: []any{"from", "nodes"}},
		{Query: []any{"from", "nodes"}, OrderBy: []service.Order{{Field: "certname", Order: "desc"}}, Limit: 5, Offset: 3, Total: true},
		{Query: reports([]any{"=", "status", "changed"}), OrderBy: []service.Order{{Field: "producer_timestamp"}, {Field: "hash", Order: "ASC"}}, Limit: 7, Total: true},
		{Query: []any{"from", "events", []any{"extract", []any{[]any{"function", "count"}, "status"}, []any{"group_by", "status"}}}},
		{Query: `reports[certname, hash] { status = "failed" order by certname limit 3 }`, Total: true},
		{Query: `nodes[certname] {}`, ASTOnly: true},
		{Query: `["from","environments"]`},
		{Query: []any{"from", "reports", []any{"extract", []any{"hash"}, []any{">", "receive_time", map[string]any{"b": 1, "a": []string{"x"}}}}}},
		{Query: []any{"from", "reports", []any{"extract", []any{"hash"}, []any{"and", []any{"=", "certname", "caf\xe9"}, []any{">=", "report_format", 4.0}}}}},
		{Query: []any{"from", "events", []any{"extract", []any{"certname"}, []any{"in", "status", []any{"array", []string{"failure", "noop"}}}}}, Limit: 2},
		// errors: the planner's, PQL's, the parameters' and the JSON text's
		{Query: []any{"from", "nodes", []any{"~", "certname", "("}}},
		{Query: []any{"from", "nodes", []any{"=", "nosuch", 1}}},
		{Query: []any{"from", "nosuch"}},
		{Query: []any{"nodes"}},
		{},
		{Query: `nodes[certname] { certname ~ }`},
		{Query: `["from", "nodes"] ["x"]`},
		{Query: `["from", "nodes"`},
		{Query: []any{"from", "nodes"}, OrderBy: []service.Order{{Field: "certname", Order: "up"}}},
		{Query: []any{"from", "nodes"}, OrderBy: []service.Order{{Field: "nosuch"}}},
		{Query: []any{"from", "nodes"}, Limit: 1 << 31},
		{Query: []any{"from", "nodes"}, Offset: 1 << 31},
		{Query: []any{"from", "reports", []any{"=", "certname", "a\x00b"}}},
	} {
		if got, want := viaService(t, q, req), viaHTTP(t, api, req); got != want {
			t.Errorf("%#v:\n service %+v\n     API %+v", req, got, want)
		}
	}
}

// TestConformanceRootCases replays the conformance cases of the root
// endpoint whose parameters a Request can state, through the service and
// through the API.
func TestConformanceRootCases(t *testing.T) {
	q, api := corpus(t)
	compared := 0
	for _, c := range testcorpus.LoadCases(t) {
		if c.Endpoint != "root" {
			continue
		}
		req, ok := rootRequest(t, c)
		if !ok {
			continue
		}
		compared++
		if got, want := viaService(t, q, req), viaHTTP(t, api, req); got != want {
			t.Errorf("%s %+v:\n service %+v\n     API %+v", c.ID, req, got, want)
		}
	}
	if compared < 15 {
		t.Fatalf("only %d root cases compared", compared)
	}
}

// rootRequest states a root case's parameters as a Request; not ok when
// one of them cannot be (pretty, explain, a limit that is no positive
// number...).
func rootRequest(t *testing.T, c testcorpus.Case) (service.Request, bool) {
	params := map[string]any{}
	if c.Request.BodyRaw != nil {
		if err := json.Unmarshal([]byte(*c.Request.BodyRaw), &params); err != nil {
			return service.Request{}, false
		}
	}
	u, err := url.Parse(c.Request.Target)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range u.Query() {
		if len(v) != 1 {
			return service.Request{}, false
		}
		if _, ok := params[k]; !ok {
			params[k] = v[0]
		}
	}
	var req service.Request
	for k, v := range params {
		s, isString := v.(string)
		switch k {
		case "query":
			req.Query = v
		case "order_by":
			if isString {
				if json.Unmarshal([]byte(s), &v) != nil {
					return req, false
				}
			}
			b, _ := json.Marshal(v)
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.DisallowUnknownFields()
			if dec.Decode(&req.OrderBy) != nil || len(req.OrderBy) == 0 {
				return req, false
			}
		case "limit", "offset":
			n, err := strconv.Atoi(fmt.Sprint(v))
			if err != nil || n <= 0 {
				return req, false
			}
			if k == "limit" {
				req.Limit = n
			} else {
				req.Offset = n
			}
		case "include_total", "ast_only":
			b := fmt.Sprint(v)
			if b != "true" && b != "false" {
				return req, false
			}
			if k == "include_total" {
				req.Total = b == "true"
			} else {
				req.ASTOnly = b == "true"
			}
		default:
			return req, false
		}
	}
	return req, true
}

// TestPagingAndTotal: limit and offset page the rows, the total counts
// them all, and without include_total there is none.
func TestPagingAndTotal(t *testing.T) {
	q, _ := corpus(t)
	names := func(req service.Request) ([]string, int) {
		var out []string
		total, err := q.Query(context.Background(), req, func(row json.RawMessage) error {
			var r struct{ Certname string }
			out = append(out, string(row))
			return json.Unmarshal(row, &r)
		})
		if err != nil {
			t.Fatal(err)
		}
		return out, total
	}
	nodes := []any{"from", "nodes", []any{"extract", []any{"certname"}}}
	byName := []service.Order{{Field: "certname"}}
	all, total := names(service.Request{Query: nodes, OrderBy: byName, Total: true})
	if len(all) < 10 || total != len(all) {
		t.Fatalf("%d nodes, total %d", len(all), total)
	}
	page, pageTotal := names(service.Request{Query: nodes, OrderBy: byName, Limit: 4, Offset: 3, Total: true})
	if strings.Join(page, " ") != strings.Join(all[3:7], " ") || pageTotal != total {
		t.Fatalf("page %v (total %d), want %v (total %d)", page, pageTotal, all[3:7], total)
	}
	if _, none := names(service.Request{Query: nodes, Limit: 1}); none != -1 {
		t.Fatalf("total %d without include_total, want -1", none)
	}
}

// TestErrorStatuses: the one mapping of errors to the API's statuses and
// messages.
func TestErrorStatuses(t *testing.T) {
	cause := errors.New("disk on fire")
	for _, c := range []struct {
		err    error
		status int
		msg    string
	}{
		{reportdb.Invalid("bad"), 400, "bad"},
		{reportdb.Errorf(reportdb.ENOTFOUND, "no such"), 404, "no such"},
		{reportdb.Errorf(reportdb.ERETIRED, "retired"), 404, "retired"},
		{reportdb.Errorf(reportdb.ETOOLARGE, "big"), 413, "big"},
		{reportdb.Errorf(reportdb.EUNSUPPORTED, "type"), 415, "type"},
		{reportdb.Errorf(reportdb.ENOTACCEPT, "json"), 406, "json"},
		{reportdb.Errorf(reportdb.EFORBIDDEN, "no"), 403, "no"},
		{reportdb.Errorf(reportdb.ETIMEOUT, "slow"), 503, "slow"},
		{&reportdb.Error{Code: reportdb.EUNAVAILABLE, Message: "busy", RetryAfter: 1}, 503, "busy"},
		{reportdb.Errorf(reportdb.ENOSPACE, "full"), 507, "full"},
		{&reportdb.Error{Code: reportdb.EINTERNAL, Message: "detail", Err: cause}, 500, "An unexpected error occurred while processing the request"},
		{fmt.Errorf("wrapped: %w", cause), 500, "An unexpected error occurred while processing the request"},
		{fmt.Errorf("reading: %w", context.DeadlineExceeded), 503, "The query was cancelled because it ran longer than the query timeout"},
	} {
		e := service.ErrorOf(c.err)
		if e == nil || e.Status != c.status || e.Message != c.msg {
			t.Errorf("%v: %+v, want %d %q", c.err, e, c.status, c.msg)
			continue
		}
		if e.Code == reportdb.EUNAVAILABLE && e.RetryAfter != 1 {
			t.Errorf("%v: Retry-After %d", c.err, e.RetryAfter)
		}
		if c.status == 500 && !errors.Is(e, cause) {
			t.Errorf("%v: the cause is lost: %v", c.err, e.Err)
		}
	}
	if e := service.ErrorOf(fmt.Errorf("gone: %w", context.Canceled)); e != nil {
		t.Errorf("a cancelled query is answered %+v, want nothing", e)
	}
	if service.ErrorOf(nil) != nil {
		t.Error("nil is an error")
	}
}

// TestDeadlines: a query past its deadline is a 503 timeout, the
// client's own timeout named as such; a query whose client went away
// returns the context's error, not an answer.
func TestDeadlines(t *testing.T) {
	q, _ := corpus(t)
	req := service.Request{Query: []any{"from", "reports"}}
	past, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	_, err := q.Query(past, req, func(json.RawMessage) error { return nil })
	var e *service.Error
	if !errors.As(err, &e) || e.Status != 503 || !strings.Contains(e.Message, "query timeout") {
		t.Fatalf("past deadline: %v", err)
	}
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := q.Query(gone, req, func(json.RawMessage) error { return nil }); !errors.Is(err, context.Canceled) || errors.As(err, &e) {
		t.Fatalf("cancelled: %v", err)
	}

	ctx, cancel := service.Deadline(context.Background(), time.Hour, time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	err = service.TimedOut(ctx, fmt.Errorf("scan: %w", context.DeadlineExceeded))
	if e := service.ErrorOf(err); e == nil || e.Status != 503 || e.Message != "The query was cancelled because it ran longer than its timeout parameter (0.000000001 seconds)" {
		t.Fatalf("the client's timeout: %v", err)
	}
	if err := service.TimedOut(ctx, reportdb.Invalid("bad")); service.ErrorOf(err).Status != 400 {
		t.Fatalf("a query's own error past the client's timeout: %v", err)
	}
}

// TestReaderErrors: what a reader's callback returns comes back as it is,
// not as a query failure.
func TestReaderErrors(t *testing.T) {
	q, _ := corpus(t)
	stop := errors.New("enough")
	req := service.Request{Query: []any{"from", "reports"}}
	n := 0
	if _, err := q.Query(context.Background(), req, func(json.RawMessage) error { n++; return stop }); err != stop || n != 1 {
		t.Fatalf("Query: %v after %d rows", err, n)
	}
	if _, err := q.QueryStream(context.Background(), req, func(io.Reader) error { return stop }); err != stop {
		t.Fatalf("QueryStream: %v", err)
	}
}

// TestStream: the streamed answer is the API's body; a reader that stops
// early frees its query slot at once and leaves no goroutine behind; a
// query that fails at once is an error before any byte.
func TestStream(t *testing.T) {
	svc, api := corpus(t)
	slots := service.NewSlots(1, 50*time.Millisecond)
	q := service.Limit(svc, slots)
	req := service.Request{Query: []any{"from", "reports"}, OrderBy: []service.Order{{Field: "hash"}}, Total: true}

	var body []byte
	total, err := q.QueryStream(context.Background(), req, func(r io.Reader) error {
		var err error
		body, err = io.ReadAll(r)
		return err
	})
	want := viaHTTP(t, api, req)
	if err != nil || string(body) != want.body || strconv.Itoa(total) != want.total {
		t.Fatalf("streamed %d bytes (total %d, %v), the API %d (total %s)", len(body), total, err, len(want.body), want.total)
	}

	before := runtime.NumGoroutine()
	for range 20 {
		_, err := q.QueryStream(context.Background(), req, func(r io.Reader) error {
			_, err := io.ReadFull(r, make([]byte, 100))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		release, err := slots.Acquire(context.Background(), false)
		if err != nil {
			t.Fatalf("the slot is still held after the reader stopped: %v", err)
		}
		release()
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("%d goroutines after 20 streams stopped early, %d before", n, before)
	}

	called := false
	_, err = q.QueryStream(context.Background(), service.Request{Query: []any{"from", "nodes", []any{"~", "certname", "("}}},
		func(io.Reader) error { called = true; return nil })
	var e *service.Error
	if !errors.As(err, &e) || e.Status != 400 || called {
		t.Fatalf("a failing query: %v (reader called: %v)", err, called)
	}
}

// TestSlotsBusy: with every slot held, a query waits the queue wait, then
// gets the busy answer (503, Retry-After), as the API's queries do.
func TestSlotsBusy(t *testing.T) {
	slots := service.NewSlots(1, 20*time.Millisecond)
	release, err := slots.Acquire(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	svc, _ := corpus(t)
	q := service.Limit(svc, slots)
	_, err = q.Query(context.Background(), service.Request{Query: []any{"from", "nodes"}}, func(json.RawMessage) error { return nil })
	var e *service.Error
	if !errors.As(err, &e) || e.Status != 503 || e.RetryAfter != 1 ||
		e.Message != "Too many queries are running (max-concurrent-queries 1); none finished within 20ms (query-queue-wait). Retry later." {
		t.Fatalf("busy: %v", err)
	}
	// the slot kept for small queries
	small, err := slots.Acquire(context.Background(), true)
	if err != nil {
		t.Fatalf("small query: %v", err)
	}
	small()
	release()
	if service.NewSlots(0, time.Second) != nil {
		t.Fatal("0 slots limit queries")
	}
}

// fakeNodes answers every nodes plan with its rows.
type fakeNodes struct {
	rows  []any
	plans int
}

func (f *fakeNodes) Query(ctx context.Context, plan *query.Plan) ([]any, int, error) {
	f.plans++
	return f.rows, len(f.rows), nil
}

// TestWithNodes: root queries on nodes are answered by the other source
// (the upstream's merged nodes), in the API's encoding; the rest, and the
// AST of a nodes query, by the service itself.
func TestWithNodes(t *testing.T) {
	svc, _ := corpus(t)
	row := &jsonv.Object{Keys: []string{"certname", "facts_environment"}, Values: []any{"a.example.com", jsonv.Number("1.50")}}
	nodes := &fakeNodes{rows: []any{row, row}}
	q := service.WithNodes(svc, nodes)
	got := viaService(t, q, service.Request{Query: []any{"from", "nodes"}, Total: true})
	if want := (answer{200, "2", `[{"certname":"a.example.com","facts_environment":1.50},{"certname":"a.example.com","facts_environment":1.50}]`}); got != want {
		t.Fatalf("nodes: %+v, want %+v", got, want)
	}
	var body []byte
	if _, err := q.QueryStream(context.Background(), service.Request{Query: `nodes[certname]{}`}, func(r io.Reader) error {
		var err error
		body, err = io.ReadAll(r)
		return err
	}); err != nil || string(body) != `[{"certname":"a.example.com","facts_environment":1.50},{"certname":"a.example.com","facts_environment":1.50}]` {
		t.Fatalf("nodes streamed: %s %v", body, err)
	}
	for _, req := range []service.Request{{Query: []any{"from", "reports"}, Total: true}, {Query: `nodes[certname]{}`, ASTOnly: true},
		{Query: []any{"from", "nodes", []any{"~", "certname", "("}}}} {
		if got, want := viaService(t, q, req), viaService(t, svc, req); got != want {
			t.Errorf("%+v: %+v, the service %+v", req, got, want)
		}
	}
	if nodes.plans != 2 {
		t.Fatalf("%d nodes plans asked, want 2", nodes.plans)
	}
}
