package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"reportdb"
	"reportdb/jsonv"
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

// writeError is the single place where errors become HTTP responses:
// 400-class messages as text/plain (PuppetDB's shape), unknown parent
// entities and invalid commands with a pretty JSON {"error": ...} body,
// internal errors as 500 with a fixed message (the detail goes to the log
// only).
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var je jsonBodyError
	if errors.As(err, &je) {
		writeJSONObject(w, statusOf(je.e.Code), "error", je.e.Message)
		return
	}
	var e *reportdb.Error
	if !errors.As(err, &e) {
		if errors.Is(err, context.DeadlineExceeded) {
			e = &reportdb.Error{Code: reportdb.ETIMEOUT, Message: "The query was cancelled because it ran longer than the query timeout"}
		} else if errors.Is(err, context.Canceled) {
			return // client went away
		} else {
			e = &reportdb.Error{Code: reportdb.EINTERNAL, Message: "An unexpected error occurred while processing the request", Err: err}
		}
	}
	status := statusOf(e.Code)
	if status >= 500 && e.Code == reportdb.EINTERNAL {
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", e.Error())
	}
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	if e.Code == reportdb.ENOTFOUND {
		writeJSONObject(w, status, "error", e.Message)
		return
	}
	msg := e.Message
	if e.Code == reportdb.EINTERNAL {
		msg = "An unexpected error occurred while processing the request"
	}
	w.Header().Set("Content-Type", ctText)
	w.WriteHeader(status)
	w.Write([]byte(msg))
}

func statusOf(code string) int {
	switch code {
	case reportdb.EINVALID:
		return http.StatusBadRequest
	case reportdb.ENOTFOUND, reportdb.ERETIRED:
		return http.StatusNotFound
	case reportdb.ETOOLARGE:
		return http.StatusRequestEntityTooLarge
	case reportdb.EUNSUPPORTED:
		return http.StatusUnsupportedMediaType
	case reportdb.ENOTACCEPT:
		return http.StatusNotAcceptable
	case reportdb.EFORBIDDEN:
		return http.StatusForbidden
	case reportdb.ETIMEOUT, reportdb.EUNAVAILABLE:
		return http.StatusServiceUnavailable
	case reportdb.ENOSPACE:
		return http.StatusInsufficientStorage
	}
	return http.StatusInternalServerError
}

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
