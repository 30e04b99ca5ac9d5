package httpapi

import (
	"errors"
	"net/http"
	"strconv"

	"reportdb"
	"reportdb/jsonv"
	"reportdb/service"
)

const (
	ctJSON = "application/json;charset=utf-8"
	ctText = "text/plain;charset=utf-8"
)

// jsonBodyError is an error PuppetDB answers with a pretty JSON
// {"error": message} body rather than text (invalid commands).
type jsonBodyError struct{ e *reportdb.Error }

func (j jsonBodyError) Error() string { return j.e.Error() }
func (j jsonBodyError) Unwrap() error { return j.e }

// WriteError answers err with the one error mapping (for handlers in front
// of the API, such as the TLS allowlist).
func (s *Server) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	s.writeError(w, r, err)
}

// writeError is the single place where errors become HTTP responses, as
// service.ErrorOf maps them: 400-class messages as text/plain (PuppetDB's
// shape), unknown parent entities and invalid commands with a pretty JSON
// {"error": ...} body, internal errors as 500 with a fixed message (the
// detail goes to the log only).
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var je jsonBodyError
	if errors.As(err, &je) {
		writeJSONObject(w, statusOf(je.e.Code), "error", je.e.Message)
		return
	}
	e := service.ErrorOf(err)
	if e == nil {
		return // client went away
	}
	if e.Code == reportdb.EINTERNAL {
		detail := e.Message
		if e.Err != nil {
			detail = e.Err.Error()
		}
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", detail)
	}
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	if e.Code == reportdb.ENOTFOUND {
		writeJSONObject(w, e.Status, "error", e.Message)
		return
	}
	w.Header().Set("Content-Type", ctText)
	w.WriteHeader(e.Status)
	w.Write([]byte(e.Message))
}

// statusOf is the HTTP status of an error code.
func statusOf(code string) int { return service.Status(code) }

// writeJSONObject writes a pretty-printed one-member JSON object, as
// PuppetDB writes its single-object responses.
func writeJSONObject(w http.ResponseWriter, status int, key string, value any) {
	o := &jsonv.Object{Keys: []string{key}, Values: []any{value}}
	writePretty(w, status, o)
}

func writePretty(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", ctJSON)
	w.WriteHeader(status)
	w.Write(jsonv.AppendPretty(nil, v))
}
