package httpapi

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"reportdb"
	"reportdb/jsonv"
	"reportdb/query"
	"reportdb/query/sqlgen"
	"reportdb/store"
)

var errMethod = reportdb.Invalid("PuppetDB queries must be made via GET/POST")

// readParams collects the request parameters: the URL query string for
// GET, the JSON body for POST (URL parameters fill in names the body does
// not set).
func (s *Server) readParams(r *http.Request) ([]query.Param, error) {
	urlParams, err := query.ParseQueryString(r.URL.RawQuery)
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
	params, err := query.ParseBody(body)
	if err != nil {
		return nil, err
	}
	for _, p := range urlParams {
		found := false
		for _, q := range params {
			if q.Name == p.Name {
				found = true
				break
			}
		}
		if !found {
			params = append(params, p)
		}
	}
	return params, nil
}

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

func (s *Server) entityHandler(e *query.Entity, kind query.Kind) http.HandlerFunc {
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
	plan, err := s.plan(e, opts, query.Context{ActiveOnly: e == query.Nodes})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if extra != nil {
		plan.Filter = query.AndExpr(extra, plan.Filter)
	}
	s.execute(w, r, plan, opts)
}

// plan compiles a query, applying distinct_resources on events.
func (s *Server) plan(e *query.Entity, opts *query.Options, ctx query.Context) (*query.Plan, error) {
	q := opts.Query
	if opts.Distinct != nil {
		if err := query.CheckLegacy(q); err != nil {
			return nil, err
		}
		q = query.NormalizeLegacy(q)
	}
	plan, err := query.Compile(e, q, opts, ctx)
	if err != nil {
		return nil, err
	}
	if opts.Distinct != nil && e == query.Events {
		plan.Distinct = opts.Distinct
		plan.DistinctLatest = query.OnlyLatest(opts.Query)
	}
	return plan, nil
}

// execute runs a plan in one snapshot and streams its rows.
func (s *Server) execute(w http.ResponseWriter, r *http.Request, plan *query.Plan, opts *query.Options) {
	d := s.backend.Dialect()
	built, err := sqlgen.Select(d, plan)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var count *sqlgen.Built
	if opts.IncludeTotal {
		if count, err = sqlgen.Count(d, plan); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	if opts.Explain {
		ctx, cancel := s.queryContext(r)
		defer cancel()
		s.explain(ctx, w, r, built)
		return
	}
	s.runQuery(w, r, built, count, func(rows store.Rows, total int64, started *bool) error {
		return streamRows(w, r, rows, built.Columns, total, opts.Pretty, started)
	})
}

// runQuery runs the count query (when asked for) and the row query, in one
// snapshot so that X-Records and the rows agree, and hands the rows to
// stream, which sets *started once the response status is out. An error
// before that is answered as an error response; one after it can only cut
// the body short, and is logged.
func (s *Server) runQuery(w http.ResponseWriter, r *http.Request, built, count *sqlgen.Built, stream func(rows store.Rows, total int64, started *bool) error) {
	ctx, cancel := s.queryContext(r)
	defer cancel()
	started := false
	run := func(q store.Querier) error {
		var total int64 = -1
		if count != nil {
			n, err := scalar(ctx, q, count)
			if err != nil {
				return err
			}
			total = n
		}
		rows, err := q.Query(ctx, built.SQL, built.Args)
		if err != nil {
			return err
		}
		defer rows.Close()
		return stream(rows, total, &started)
	}
	var err error
	if count != nil {
		err = s.backend.Snapshot(ctx, run)
	} else {
		err = run(s.backend)
	}
	if err != nil {
		if started {
			s.log.Warn("query aborted while streaming", "path", r.URL.Path, "err", err)
			return
		}
		s.writeError(w, r, err)
	}
}

func scalar(ctx context.Context, q store.Querier, b *sqlgen.Built) (int64, error) {
	rows, err := q.Query(ctx, b.SQL, b.Args)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var v any
	if rows.Next() {
		if err := rows.Scan(&v); err != nil {
			return 0, err
		}
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	n, _ := asInt(v)
	return n, nil
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

func newBody(w http.ResponseWriter, r *http.Request) *body {
	b := &body{}
	var out io.Writer = w
	if acceptsGzip(r) {
		w.Header().Set("Content-Encoding", "gzip")
		b.gz = gzipPool.Get().(*gzip.Writer)
		b.gz.Reset(w)
		out = b.gz
	}
	b.Writer = bufio.NewWriterSize(out, 32<<10)
	return b
}

func (b *body) Close() error {
	err := b.Flush()
	if b.gz != nil {
		if e := b.gz.Close(); err == nil {
			err = e
		}
		gzipPool.Put(b.gz)
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

// streamRows writes the JSON array of rows as they are read. The first
// row is read before the status is sent, so that a query failing at once
// still gets a proper error response; started reports whether the
// response began.
func streamRows(w http.ResponseWriter, r *http.Request, rows store.Rows, cols []sqlgen.OutCol, total int64, pretty bool, started *bool) error {
	enc := newRowEncoder(cols)
	buf := make([]byte, 0, 4096)
	// encode appends the current row (with its separator) to buf.
	n := 0
	encode := func() error {
		if err := rows.Scan(enc.dest...); err != nil {
			return err
		}
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
			buf, err = enc.appendRow(buf)
			return err
		}
		row, err := enc.appendRow(nil)
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
	// The first row is read and encoded before the status is sent, so
	// that a query failing at once still gets a proper error response.
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

// explain answers explain=analyze: [{"query plan": ...}] with the
// database's description of the statement (PuppetDB returns PostgreSQL's
// EXPLAIN (ANALYZE, FORMAT JSON) output the same way).
func (s *Server) explain(ctx context.Context, w http.ResponseWriter, r *http.Request, built *sqlgen.Built) {
	var lines []any
	err := s.backend.Snapshot(ctx, func(q store.Querier) error {
		rows, err := q.Query(ctx, s.backend.Dialect().Explain(built.SQL), built.Args)
		if err != nil {
			return err
		}
		defer rows.Close()
		n := rows.NumColumns()
		vals := make([]any, n)
		ptrs := make([]any, n)
		for i := range ptrs {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				return err
			}
			if n == 1 {
				if v, ok := explainJSON(vals[0]); ok {
					lines = append(lines, v)
					continue
				}
			}
			var parts []string
			for _, v := range vals {
				switch x := v.(type) {
				case string:
					parts = append(parts, x)
				case []byte:
					parts = append(parts, string(x))
				case nil:
				default:
					parts = append(parts, fmt.Sprint(x))
				}
			}
			lines = append(lines, strings.Join(parts, " "))
		}
		return rows.Err()
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var plan any = lines
	if len(lines) == 1 {
		if _, isText := lines[0].(string); !isText {
			plan = lines[0]
		}
	}
	writeCompact(w, http.StatusOK, []any{&jsonv.Object{Keys: []string{"query plan"}, Values: []any{plan}}})
}

// explainJSON turns a JSON plan (text, or as decoded by the driver) into a
// jsonv value.
func explainJSON(v any) (any, bool) {
	var b []byte
	switch x := v.(type) {
	case string:
		b = []byte(x)
	case []byte:
		b = x
	case map[string]any, []any:
		var err error
		if b, err = json.Marshal(x); err != nil {
			return nil, false
		}
	default:
		return nil, false
	}
	j, err := jsonv.Parse(b)
	if err != nil {
		return nil, false
	}
	if _, ok := j.(string); ok {
		return nil, false
	}
	return j, true
}

func toInt(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case int32:
		return int64(x)
	}
	return 0
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
