package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// API is how the dashboard reads data: PuppetDB's v4 query language on the
// root endpoint (/pdb/query/v4), nothing else. The pages never see SQL, so
// they run through whatever plans and executes queries for the API itself.
type API interface {
	// Query runs req and calls fn with each row (a JSON object). total is
	// the X-Records count when req.Total is set, else -1.
	Query(ctx context.Context, req Request, fn func(row json.RawMessage) error) (total int, err error)
}

// Request is one query of the root endpoint: Query is an AST
// (["from", entity, ...]) or a PQL string; the paging fields are
// PuppetDB's order_by, limit, offset and include_total.
type Request struct {
	Query   any
	OrderBy []Order
	Limit   int
	Offset  int
	Total   bool
	// ASTOnly asks for the AST of a PQL query instead of its rows
	// (PuppetDB's ast_only): fn receives the AST once.
	ASTOnly bool
}

// Order is one order_by entry.
type Order struct {
	Field string `json:"field"`
	Order string `json:"order,omitempty"` // "asc" or "desc"
}

// QueryError is an API answer other than 200 (a 4xx is the user's error,
// e.g. an invalid regular expression in a filter).
type QueryError struct {
	Status  int
	Message string
}

func (e *QueryError) Error() string { return fmt.Sprintf("query failed (%d): %s", e.Status, e.Message) }

// InProcess calls the server's own query handler (the http.Handler of
// package httpapi) in-process, as a client of /pdb/query/v4 would: the
// same parameter rules, planner and executor; no network, no TCP.
func InProcess(h http.Handler) API { return inProcess{h} }

type inProcess struct{ h http.Handler }

// bufferWriter is a minimal http.ResponseWriter that keeps the body.
type bufferWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferWriter) Header() http.Header { return b.header }
func (b *bufferWriter) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}
func (b *bufferWriter) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

func (a inProcess) Query(ctx context.Context, req Request, fn func(json.RawMessage) error) (int, error) {
	r, err := a.request(ctx, req)
	if err != nil {
		return -1, err
	}
	w := &bufferWriter{header: http.Header{}}
	a.h.ServeHTTP(w, r)
	if w.status != http.StatusOK {
		return -1, &QueryError{Status: w.status, Message: strings.TrimSpace(w.body.String())}
	}
	total := -1
	if v := w.header.Get("X-Records"); v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			total = n
		}
	}
	if req.ASTOnly {
		return total, fn(json.RawMessage(w.body.Bytes()))
	}
	return total, eachRow(&w.body, fn)
}

// request builds the POST /pdb/query/v4 of req.
func (a inProcess) request(ctx context.Context, req Request) (*http.Request, error) {
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
		return nil, err
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, "/pdb/query/v4", bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	r.RemoteAddr = "dashboard"
	r.Header.Set("Content-Type", "application/json")
	return r, nil
}

// Streamer is an API that can hand over an answer as it is written, so
// that a page can read a large document (one report's logs) a piece at a
// time instead of holding it whole. InProcess implements it.
type Streamer interface {
	// QueryStream runs req and calls fn with the body of a 200 answer (the
	// JSON array of rows) as the server writes it; fn need not read it
	// all. total is as for Query.
	QueryStream(ctx context.Context, req Request, fn func(body io.Reader) error) (total int, err error)
}

// pipeWriter is an http.ResponseWriter whose body goes into a pipe; ready
// is closed once the status and headers are known (at the first write or
// the handler's end).
type pipeWriter struct {
	header http.Header
	status int
	pw     *io.PipeWriter
	ready  chan struct{}
	once   sync.Once
}

func (p *pipeWriter) Header() http.Header { return p.header }
func (p *pipeWriter) WriteHeader(code int) {
	if p.status == 0 {
		p.status = code
	}
}
func (p *pipeWriter) Write(b []byte) (int, error) {
	if p.status == 0 {
		p.status = http.StatusOK
	}
	p.once.Do(func() { close(p.ready) })
	return p.pw.Write(b)
}

// QueryStream runs the handler in its own goroutine writing into a pipe:
// the answer is never held whole. A reader that stops early makes the
// handler's writes fail, and QueryStream returns only once the handler
// has.
func (a inProcess) QueryStream(ctx context.Context, req Request, fn func(io.Reader) error) (int, error) {
	r, err := a.request(ctx, req)
	if err != nil {
		return -1, err
	}
	pr, pw := io.Pipe()
	w := &pipeWriter{header: http.Header{}, pw: pw, ready: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if v := recover(); v != nil && w.status == 0 {
				w.status = http.StatusInternalServerError
			}
			if w.status == 0 {
				w.status = http.StatusOK
			}
			w.once.Do(func() { close(w.ready) })
			pw.Close()
		}()
		a.h.ServeHTTP(w, r)
	}()
	defer func() {
		pr.CloseWithError(errors.New("dashboard: answer no longer read"))
		<-done
	}()
	<-w.ready
	if w.status != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(pr, 64<<10))
		return -1, &QueryError{Status: w.status, Message: strings.TrimSpace(string(msg))}
	}
	total := -1
	if v := w.header.Get("X-Records"); v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			total = n
		}
	}
	return total, fn(pr)
}

// eachRow calls fn with each element of a JSON array.
func eachRow(r io.Reader, fn func(json.RawMessage) error) error {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	t, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := t.(json.Delim); !ok || d != '[' {
		return fmt.Errorf("query answer is not an array")
	}
	for dec.More() {
		var row json.RawMessage
		if err := dec.Decode(&row); err != nil {
			return err
		}
		if err := fn(row); err != nil {
			return err
		}
	}
	return nil
}

// queryAll decodes every row into a T.
func queryAll[T any](ctx context.Context, api API, req Request) ([]T, int, error) {
	var out []T
	total, err := api.Query(ctx, req, func(row json.RawMessage) error {
		var v T
		if err := json.Unmarshal(row, &v); err != nil {
			return err
		}
		out = append(out, v)
		return nil
	})
	return out, total, err
}
