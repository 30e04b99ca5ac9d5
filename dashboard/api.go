package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
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
		return -1, err
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, "/pdb/query/v4", bytes.NewReader(b))
	if err != nil {
		return -1, err
	}
	r.RemoteAddr = "dashboard"
	r.Header.Set("Content-Type", "application/json")
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
