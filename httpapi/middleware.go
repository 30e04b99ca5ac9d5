package httpapi

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"reportdb"
	"reportdb/ingest"
	"reportdb/metrics"
	"reportdb/store"
)

// ChannelHeader, set to "import" on a /pdb/cmd/v1 submission, counts it
// in the import channel of the ingest metrics (reportdb import sending to
// a server); other values are ignored. (Canonical form: it is looked up
// in the header map directly.)
const ChannelHeader = "X-Reportdb-Channel"

// InstrumentOptions configure Instrument.
type InstrumentOptions struct {
	// Log receives one line per request (at INFO; /metrics scrapes at
	// DEBUG) and slow queries (at WARN).
	Log *slog.Logger
	// Metrics records ingest and query counts and latencies (nil: none).
	Metrics *metrics.Metrics
	// SlowQuery is the duration from which a query is logged at WARN with
	// its parameters (0: never).
	SlowQuery time.Duration
}

// Instrument wraps the API (or any handler in front of it, such as the
// TLS allowlist) with request logging, metrics and slow-query logging.
// Requests are labelled by the route that served them (never by raw path,
// so the metrics' label values stay a small fixed set): the API's route
// table tells the request state which route that was.
func Instrument(next http.Handler, o InstrumentOptions) http.Handler {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	return &instrumented{next: next, o: o}
}

type instrumented struct {
	next http.Handler
	o    InstrumentOptions
}

// reqState is how the API tells the instrumentation which route served a
// request and what a submission did (see instrumentedCommitter.Submit); it
// travels in the request context.
type reqState struct {
	req       *http.Request // the instrumented request
	route     *route        // nil: no route of the API (e.g. /metrics, a 404)
	captureQ  bool          // keep the start of POSTed query bodies (slow-query log)
	body      *captureBody
	submitted bool
	outcome   reportdb.Outcome
	err       error
}

// routed records the route serving r (called by the route table's
// handlers), and starts capturing a POSTed query body when asked to. Only
// the instrumented request itself counts (withContext keeps track of its
// copies): a request made with the same context by a handler in front of
// the API must not relabel it.
func (st *reqState) routed(rt *route, r *http.Request) {
	if st.route != nil || r != st.req {
		return
	}
	st.route = rt
	if st.captureQ && rt.label != "" && r.Method == http.MethodPost && r.Body != nil && r.Body != http.NoBody {
		st.body = &captureBody{ReadCloser: r.Body}
		r.Body = st.body
	}
}

type reqStateKey struct{}

// instrumentedCommitter is the ingest.Committer as the handlers use it:
// Submit also notes the outcome for the request's instrumentation.
type instrumentedCommitter struct{ *ingest.Committer }

// Submit stores one report (ingest.Committer.Submit) and records the
// outcome in the request's state, when the request is instrumented.
func (c instrumentedCommitter) Submit(ctx context.Context, r *reportdb.Report) (reportdb.Outcome, error) {
	o, err := c.Committer.Submit(ctx, r)
	if st, ok := ctx.Value(reqStateKey{}).(*reqState); ok {
		st.submitted, st.outcome, st.err = true, o, err
	}
	return o, err
}

// recorder remembers the status and the size of a response.
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *recorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *recorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// Flush lets streaming responses flush through the wrapper.
func (w *recorder) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap serves http.NewResponseController.
func (w *recorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// exchange is the per-request state of Instrument.
type exchange struct {
	recorder recorder
	state    reqState
	steps    store.Steps // the backend's waits and statements (slow-query log)
}

// captureBody keeps the first bytes of a POSTed query for the slow-query
// log.
type captureBody struct {
	io.ReadCloser
	buf []byte
}

const slowQueryBodyMax = 4 << 10

func (c *captureBody) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	if room := slowQueryBodyMax - len(c.buf); room > 0 && n > 0 {
		c.buf = append(c.buf, p[:min(n, room)]...)
	}
	return n, err
}

func (h *instrumented) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	ex := &exchange{recorder: recorder{ResponseWriter: w}} // one allocation for both
	rec := &ex.recorder
	st := &ex.state
	st.captureQ = h.o.SlowQuery > 0
	ctx := context.WithValue(r.Context(), reqStateKey{}, st)
	if st.captureQ {
		ex.steps.Statements = true
		ctx = store.WithSteps(ctx, &ex.steps)
	}
	r = r.WithContext(ctx)
	st.req = r

	h.next.ServeHTTP(rec, r)

	rt := h.classify(r, st)
	body := st.body

	d := time.Since(start)
	status := rec.status
	if status == 0 {
		status = http.StatusOK // net/http answers 200 to a handler that wrote nothing
	}
	channel := ""
	switch {
	case rt.kind == routeIngest:
		channel = rt.channel
		if v := r.Header[ChannelHeader]; channel == metrics.ChannelCommand && len(v) > 0 && v[0] == metrics.ChannelImport {
			channel = metrics.ChannelImport
		}
	}
	outcome := ""
	if channel != "" {
		outcome = ingestOutcome(status, st)
		h.o.Metrics.ObserveIngest(channel, outcome, d)
	} else if rt.kind != routeMetrics {
		h.o.Metrics.ObserveQuery(rt.endpoint, status, d)
	}

	level := slog.LevelInfo
	if rt.kind == routeMetrics {
		level = slog.LevelDebug
	}
	ctx = r.Context()
	if h.o.Log.Enabled(ctx, level) {
		attrs := make([]slog.Attr, 0, 10)
		attrs = append(attrs,
			slog.String("method", r.Method),
			slog.String("path", r.URL.Path))
		if rt.kind == routeIngest {
			// the certname says more than the terminus' checksum and
			// timestamp parameters, and costs less to log
			if cn := queryParam(r.URL.RawQuery, "certname"); cn != "" {
				attrs = append(attrs, slog.String("certname", cn))
			}
		} else if r.URL.RawQuery != "" {
			attrs = append(attrs, slog.String("query", r.URL.RawQuery))
		}
		attrs = append(attrs,
			slog.Int("status", status),
			slog.Int64("bytes", rec.bytes),
			slog.Duration("duration", d),
			slog.String("remote", r.RemoteAddr))
		if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
			attrs = append(attrs, slog.String("cn", r.TLS.PeerCertificates[0].Subject.CommonName))
		}
		if channel != "" {
			attrs = append(attrs, slog.String("channel", channel), slog.String("outcome", outcome))
		}
		// a record without a caller PC: LogAttrs would walk the stack
		rec := slog.NewRecord(start.Add(d), level, "request", 0)
		rec.AddAttrs(attrs...)
		h.o.Log.Handler().Handle(ctx, rec)
	}
	if rt.kind == routeQuery && channel == "" && h.o.SlowQuery > 0 && d >= h.o.SlowQuery {
		h.logSlow(r, rt, status, d, body, &ex.steps)
	}
}

func (h *instrumented) logSlow(r *http.Request, rt class, status int, d time.Duration, body *captureBody, steps *store.Steps) {
	attrs := []slog.Attr{
		slog.String("endpoint", endpoints[rt.endpoint]),
		slog.String("method", r.Method),
		slog.String("path", r.URL.Path),
		slog.Int("status", status),
		slog.Duration("duration", d),
		slog.Duration("threshold", h.o.SlowQuery),
	}
	// where the time went: waiting for a database connection, in the
	// database (PostgreSQL only)
	if s := steps.String(); s != "" {
		attrs = append(attrs, slog.String("steps", s))
	}
	if q := r.URL.Query(); len(q) > 0 {
		params := make([]any, 0, len(q))
		for k, vs := range q {
			params = append(params, slog.String(k, strings.Join(vs, ",")))
		}
		attrs = append(attrs, slog.Group("params", params...))
	}
	if body != nil && len(body.buf) > 0 {
		attrs = append(attrs, slog.String("body", string(body.buf)))
	}
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		attrs = append(attrs, slog.String("cn", r.TLS.PeerCertificates[0].Subject.CommonName))
	}
	h.o.Log.LogAttrs(r.Context(), slog.LevelWarn, "slow query", attrs...)
}

// queryParam returns the value of the first parameter name in a raw
// query string ("" if absent or malformed).
func queryParam(raw, name string) string {
	for raw != "" {
		var kv string
		kv, raw, _ = strings.Cut(raw, "&")
		k, v, _ := strings.Cut(kv, "=")
		if k != name {
			continue
		}
		if strings.ContainsAny(v, "%+") {
			u, err := url.QueryUnescape(v)
			if err != nil {
				return ""
			}
			return u
		}
		return v
	}
	return ""
}

// ingestOutcome maps a submission's answer to the ingest metric outcome.
func ingestOutcome(status int, st *reqState) string {
	if st != nil && st.submitted && st.err != nil {
		var e *reportdb.Error
		if errors.As(st.err, &e) && statusOf(e.Code) < 500 {
			return metrics.OutcomeRejected
		}
		return metrics.OutcomeError
	}
	switch {
	case st != nil && st.submitted && st.outcome == reportdb.Queued:
		return metrics.OutcomeQueued // also when a wait for its delivery timed out (503)
	case status >= 500:
		return metrics.OutcomeError
	case status >= 400:
		return metrics.OutcomeRejected
	case st != nil && st.submitted && st.outcome == reportdb.Duplicate:
		return metrics.OutcomeDuplicate
	}
	return metrics.OutcomeStored
}

type routeKind uint8

const (
	routeQuery routeKind = iota
	routeIngest
	routeMetrics
)

// class is how a request is counted and logged.
type class struct {
	kind     routeKind
	channel  string // ingest
	endpoint int    // query: index into Endpoints()
}

// classify tells how a served request is counted: by the route that served
// it; a request no route of the API served is /metrics, a submission to a
// handler in front of the API (found by Submit having been called: Puppet's
// http report processor), or a query labelled "other".
func (h *instrumented) classify(r *http.Request, st *reqState) class {
	switch {
	case st.route != nil && st.route.channel != "":
		return class{kind: routeIngest, channel: st.route.channel}
	case st.route != nil:
		return class{kind: routeQuery, endpoint: st.route.ep}
	case r.URL.Path == "/metrics":
		return class{kind: routeMetrics}
	case st.submitted:
		return class{kind: routeIngest, channel: metrics.ChannelHTTPProcessor}
	}
	return class{kind: routeQuery, endpoint: epOther}
}
