package httpapi

import (
	"bufio"
	"compress/gzip"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"reportdb"
	"reportdb/engine"
	"reportdb/jsonv"
	"reportdb/query"
)

var errMethod = reportdb.Invalid("PuppetDB queries must be made via GET/POST")

// readParams collects the request parameters: the URL query string for
// GET, the JSON body for POST (URL parameters fill in names the body does
// not set).
func (s *Server) readParams(r *http.Request) ([]param, error) {
	urlParams, err := parseQueryString(r.URL.RawQuery)
	if err != nil {
		return nil, err
	}
	if r.Method != http.MethodPost {
		return urlParams, nil
	}
	if mt, ok := checkContentType(r); !ok {
		return nil, &reportdb.Error{Code: reportdb.EUNSUPPORTED, Message: "content type " + mt + " not supported"}
	}
	body, err := readAll(r.Body, s.cfg.MaxQueryBodyBytes)
	if err != nil {
		return nil, err
	}
	if err := chargeJSON(r, body, MaxQueryBodyValues, func(n int) error {
		return reportdb.Errorf(reportdb.EINVALID, "The query body has about %d JSON values (arrays, objects, keys and scalars); the limit is %d", n, MaxQueryBodyValues)
	}); err != nil {
		return nil, err
	}
	params, err := parseBody(body)
	if err != nil {
		return nil, err
	}
	for _, p := range urlParams {
		if !slices.ContainsFunc(params, func(q param) bool { return q.Name == p.Name }) {
			params = append(params, p)
		}
	}
	return params, nil
}

// MaxQueryBodyValues bounds the JSON values of a POSTed query body, well
// above what the query limits (query.MaxInValues, query.MaxQueryClauses)
// accept, so that a body of tiny values is refused before it is parsed.
const MaxQueryBodyValues = 200_000

// readAll reads at most limit bytes; more is a 413.
func readAll(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, reportdb.Errorf(reportdb.EINVALID, "Could not read the request body: %v", err)
	}
	if int64(len(b)) > limit {
		return nil, reportdb.Errorf(reportdb.ETOOLARGE, "The request body exceeds the limit of %d bytes", limit)
	}
	return b, nil
}

func (s *Server) entityHandler(e *query.Entity, kind Kind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		opts, ok := s.queryOptions(w, r, kind)
		if !ok {
			return
		}
		s.serveEntity(w, r, e, opts, nil)
	}
}

// serveEntity compiles and runs a query on an entity endpoint; extra is
// and-ed to the filter (sub-endpoints such as /environments/<e>/events).
func (s *Server) serveEntity(w http.ResponseWriter, r *http.Request, e *query.Entity, opts *query.Options, extra query.Expr) {
	plan, err := query.CompileEntity(e, opts)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if extra != nil {
		plan.Filter = query.AndExpr(extra, plan.Filter)
	}
	s.execute(w, r, plan, opts)
}

// execute runs a plan (its total too when include_total is set) through
// the query service and streams its rows.
func (s *Server) execute(w http.ResponseWriter, r *http.Request, plan *query.Plan, opts *query.Options) {
	s.checkCatalogEnvironment(r, plan)
	if opts.Explain {
		lines, access, err := s.svc.Explain(r.Context(), plan, opts)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		// PuppetDB's one key, then the access path reportdb chose, which
		// clients reading "query plan" do not see
		writeCompact(w, http.StatusOK, []any{&jsonv.Object{Keys: []string{"query plan", "access"}, Values: []any{lines, access}}})
		return
	}
	s.respond(w, r, func(send sender) error {
		return s.svc.Execute(r.Context(), plan, opts, func(rows *engine.Rows, total int64) error {
			return send(rows, total, opts.Pretty)
		})
	})
}

// rowSource is what the streamer reads: engine.Rows, or a list.
type rowSource interface {
	Next() bool
	Err() error
	AppendJSON(b []byte) ([]byte, error)
}

// sender streams a row source as the response (total -1: no X-Records).
type sender func(rows rowSource, total int64, pretty bool) error

// respond runs a query whose rows are streamed with the sender it is given,
// and answers an error with the one error mapping when no byte of the
// response is out yet; an error after that can only cut the body short,
// and is logged.
func (s *Server) respond(w http.ResponseWriter, r *http.Request, run func(send sender) error) {
	started := false
	err := run(func(rows rowSource, total int64, pretty bool) error {
		return streamRows(w, r, rows, total, pretty, &started)
	})
	if err == nil {
		return
	}
	if started {
		s.log.Warn("query aborted while streaming", "path", r.URL.Path, "err", err)
		return
	}
	s.writeError(w, r, err)
}

var gzipPool = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
	return w
}}

// body is a response body writer: buffered, gzip-compressed when the
// client accepts it.
type body struct {
	*bufio.Writer
	gz *gzip.Writer
}

// bodyBuffer is how much of a response is written to the connection at
// once. Each write of a chunk costs net/http two system calls (the chunk
// header fills its 4 KiB buffer, then the rest goes directly) and wakes
// the reader: a page of 100 reports (690 KB) took 48 writes with 32 KiB,
// 14 with 256 KiB, and the futex and epoll calls of the handler fell by
// as much (strace -c, 20 requests). The buffers are pooled.
const bodyBuffer = 256 << 10

var bodyPool = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, bodyBuffer) }}

func newBody(w http.ResponseWriter, r *http.Request) *body {
	b := &body{}
	var out io.Writer = w
	if acceptsGzip(r) {
		w.Header().Set("Content-Encoding", "gzip")
		b.gz = gzipPool.Get().(*gzip.Writer)
		b.gz.Reset(w)
		out = b.gz
	}
	b.Writer = bodyPool.Get().(*bufio.Writer)
	b.Writer.Reset(out)
	return b
}

// Close flushes the body and returns its buffers to their pools; b is
// not used after.
func (b *body) Close() error {
	err := b.Flush()
	b.Writer.Reset(nil)
	bodyPool.Put(b.Writer)
	b.Writer = nil
	if b.gz != nil {
		if e := b.gz.Close(); err == nil {
			err = e
		}
		gzipPool.Put(b.gz)
		b.gz = nil
	}
	return err
}

func acceptsGzip(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept-Encoding") {
		for _, item := range strings.Split(v, ",") {
			name, params, _ := strings.Cut(strings.TrimSpace(item), ";")
			if strings.EqualFold(strings.TrimSpace(name), "gzip") && !strings.Contains(strings.ReplaceAll(params, " ", ""), "q=0") {
				return true
			}
		}
	}
	return false
}

// streamRows writes the JSON array of rows as they are read: the one
// streamer of every endpoint that answers rows. The first row is read and
// encoded before the status is sent, so that a query failing at once (or
// at its first row) still gets a proper error response; started reports
// whether the response began.
func streamRows(w http.ResponseWriter, r *http.Request, rows rowSource, total int64, pretty bool, started *bool) error {
	buf := make([]byte, 0, 4096)
	// encode appends the current row (with its separator) to buf.
	n := 0
	encode := func() error {
		if n > 0 {
			if pretty {
				buf = append(buf, ", "...)
			} else {
				buf = append(buf, ',')
			}
		}
		n++
		if !pretty {
			var err error
			buf, err = rows.AppendJSON(buf)
			return err
		}
		row, err := rows.AppendJSON(nil)
		if err != nil {
			return err
		}
		v, err := jsonv.Parse(row)
		if err != nil {
			return err
		}
		buf = jsonv.AppendPretty(buf, reorderNested(v, 0))
		return nil
	}
	more := rows.Next()
	if more {
		if err := encode(); err != nil {
			return err
		}
	} else if err := rows.Err(); err != nil {
		return err
	}
	*started = true
	h := w.Header()
	h.Set("Content-Type", ctJSON)
	if total >= 0 {
		h.Set("X-Records", strconv.FormatInt(total, 10))
	}
	out := newBody(w, r) // sets Content-Encoding: before WriteHeader
	w.WriteHeader(http.StatusOK)
	defer out.Close()
	if pretty {
		out.WriteString("[ ")
	} else {
		out.WriteByte('[')
	}
	for more {
		if _, err := out.Write(buf); err != nil {
			return err
		}
		buf = buf[:0]
		if more = rows.Next(); more {
			if err := encode(); err != nil {
				return err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	switch {
	case pretty && n == 0:
		out.WriteString("]")
	case pretty:
		out.WriteString(" ]")
	default:
		out.WriteByte(']')
	}
	return nil
}

// reorderNested reproduces what PuppetDB's pretty printer does to JSON it
// re-parses (the PostgreSQL-rendered blobs of report rows): nested objects
// of more than 8 members become Clojure hash maps with string keys and
// come out in that map's iteration order, and decimals become Java
// doubles (0.000693 prints as 6.93E-4). Top-level rows keep their order.
func reorderNested(v any, depth int) any {
	switch x := v.(type) {
	case jsonv.Number:
		if depth > 1 && !x.IsInteger() {
			if f, err := strconv.ParseFloat(string(x), 64); err == nil {
				return jsonv.Number(jsonv.JavaDouble(f))
			}
		}
	case []any:
		for i := range x {
			x[i] = reorderNested(x[i], depth+1)
		}
	case *jsonv.Object:
		for i := range x.Values {
			x.Values[i] = reorderNested(x.Values[i], depth+1)
		}
		if depth > 0 && len(x.Keys) > 8 {
			order := jsonv.StringKeyHashOrder(x.Keys)
			vals := make([]any, len(order))
			for i, k := range order {
				vals[i], _ = x.Get(k)
			}
			x.Keys, x.Values = order, vals
		}
	}
	return v
}
