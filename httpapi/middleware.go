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
// It classifies each request by route pattern (never by raw path, so the
// metrics' label values stay a small fixed set).
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

// reqState is how the handlers tell the instrumentation what a submission
// did (see instrumentedCommitter.Submit); it travels in the request context.
type reqState struct {
	submitted bool
	outcome   reportdb.Outcome
	err       error
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
	rt := classify(r.URL.Path)
	ex := &exchange{recorder: recorder{ResponseWriter: w}} // one allocation for both
	rec := &ex.recorder
	var st *reqState
	if rt.kind == routeIngest || (rt.kind == routeQuery && rt.endpoint == epOther && r.Method != http.MethodGet && r.Method != http.MethodHead) {
		// submissions tell their outcome through the context; a route not
		// classified here that stores reports is found by Submit being
		// called
		st = &ex.state
		r = r.WithContext(context.WithValue(r.Context(), reqStateKey{}, st))
	}
	var body *captureBody
	if rt.kind == routeQuery && rt.endpoint != epOther && r.Method == http.MethodPost && h.o.SlowQuery > 0 &&
		r.Body != nil && r.Body != http.NoBody {
		body = &captureBody{ReadCloser: r.Body}
		r.Body = body
	}

	h.next.ServeHTTP(rec, r)

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
	case st != nil && st.submitted:
		// a route that stores reports but is not classified here
		channel = metrics.ChannelHTTPProcessor
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
	ctx := r.Context()
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
		h.logSlow(r, rt, status, d, body)
	}
}

func (h *instrumented) logSlow(r *http.Request, rt route, status int, d time.Duration, body *captureBody) {
	attrs := []slog.Attr{
		slog.String("endpoint", metrics.Endpoints[rt.endpoint]),
		slog.String("method", r.Method),
		slog.String("path", r.URL.Path),
		slog.Int("status", status),
		slog.Duration("duration", d),
		slog.Duration("threshold", h.o.SlowQuery),
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

type route struct {
	kind     routeKind
	channel  string // ingest
	endpoint int    // query: index into metrics.Endpoints
}

// endpoint indexes, resolved once
var (
	epOther        = metrics.EndpointIndex("other")
	epRoot         = metrics.EndpointIndex("root")
	epRetired      = metrics.EndpointIndex("retired")
	epVersion      = metrics.EndpointIndex("meta/version")
	epStatus       = metrics.EndpointIndex("status")
	epEvents       = metrics.EndpointIndex("events")
	epEventCounts  = metrics.EndpointIndex("event-counts")
	epAggregate    = metrics.EndpointIndex("aggregate-event-counts")
	epReports      = metrics.EndpointIndex("reports")
	epReportEvents = metrics.EndpointIndex("reports/<hash>/events")
	epReportMetric = metrics.EndpointIndex("reports/<hash>/metrics")
	epReportLogs   = metrics.EndpointIndex("reports/<hash>/logs")
	epEnvs         = metrics.EndpointIndex("environments")
	epEnv          = metrics.EndpointIndex("environments/<name>")
	epEnvEvents    = metrics.EndpointIndex("environments/<name>/events")
	epEnvReports   = metrics.EndpointIndex("environments/<name>/reports")
	epNodes        = metrics.EndpointIndex("nodes")
	epNode         = metrics.EndpointIndex("nodes/<certname>")
	epV3Events     = metrics.EndpointIndex("v3/events")
	epV3Reports    = metrics.EndpointIndex("v3/reports")
	epV3Counts     = metrics.EndpointIndex("v3/event-counts")
	epV3Aggregate  = metrics.EndpointIndex("v3/aggregate-event-counts")
)

func queryRoute(ep int) route { return route{kind: routeQuery, endpoint: ep} }

// classify maps a request path to its route pattern, as routes() serves
// them. It does no allocation: it runs for every request.
func classify(p string) route {
	switch {
	case p == "/pdb/cmd/v1":
		return route{kind: routeIngest, channel: metrics.ChannelCommand}
	case strings.HasPrefix(p, "/puppet/v3/report/"):
		return route{kind: routeIngest, channel: metrics.ChannelPuppetReport}
	case p == "/reports/upload" || p == "/upload":
		return route{kind: routeIngest, channel: metrics.ChannelHTTPProcessor}
	case p == "/metrics":
		return route{kind: routeMetrics}
	case p == "/pdb/query/v4":
		return queryRoute(epRoot)
	case strings.HasPrefix(p, "/pdb/query/v4/"):
		return queryRoute(classifyV4(p[len("/pdb/query/v4/"):]))
	case strings.HasPrefix(p, "/pdb/query/v"):
		if len(p) > len("/pdb/query/v") && p[len("/pdb/query/v")] >= '1' && p[len("/pdb/query/v")] <= '3' {
			return queryRoute(epRetired)
		}
	case p == "/pdb/meta/v1/version":
		return queryRoute(epVersion)
	case strings.HasPrefix(p, "/status/v1/services"):
		return queryRoute(epStatus)
	case strings.HasPrefix(p, "/v3/"):
		switch p[len("/v3/"):] {
		case "events":
			return queryRoute(epV3Events)
		case "reports":
			return queryRoute(epV3Reports)
		case "event-counts":
			return queryRoute(epV3Counts)
		case "aggregate-event-counts":
			return queryRoute(epV3Aggregate)
		}
	}
	return queryRoute(epOther)
}

// classifyV4 classifies the part of a path after /pdb/query/v4/.
func classifyV4(rest string) int {
	first, tail, hasTail := strings.Cut(rest, "/")
	if !hasTail {
		switch first {
		case "events":
			return epEvents
		case "event-counts":
			return epEventCounts
		case "aggregate-event-counts":
			return epAggregate
		case "reports":
			return epReports
		case "environments":
			return epEnvs
		case "nodes":
			return epNodes
		}
		return epOther
	}
	name, sub, hasSub := strings.Cut(tail, "/")
	if name == "" || strings.IndexByte(sub, '/') >= 0 {
		return epOther
	}
	switch first {
	case "reports":
		switch sub {
		case "events":
			return epReportEvents
		case "metrics":
			return epReportMetric
		case "logs":
			return epReportLogs
		}
	case "environments":
		switch {
		case !hasSub:
			return epEnv
		case sub == "events":
			return epEnvEvents
		case sub == "reports":
			return epEnvReports
		}
	case "nodes":
		if !hasSub {
			return epNode
		}
	}
	return epOther
}
