package service

import (
	"context"
	"errors"
	"fmt"

	"reportdb"
)

// Error is a failure as the API answers it: the HTTP status and the
// message PuppetDB gives (a 4xx is the user's mistake, such as an invalid
// regular expression in a filter; a 500 has a fixed message, its detail
// is in Err for the log). httpapi writes it; in-process readers show it.
type Error struct {
	Status  int
	Message string
	// Code is the reportdb error code the status was mapped from.
	Code string
	// RetryAfter, when > 0, is how many seconds a client should wait
	// before trying again (Retry-After).
	RetryAfter int
	Err        error
}

func (e *Error) Error() string { return fmt.Sprintf("query failed (%d): %s", e.Status, e.Message) }

func (e *Error) Unwrap() error { return e.Err }

// internalMessage is what a client is told of an internal error.
const internalMessage = "An unexpected error occurred while processing the request"

// ErrorOf is the one mapping of errors to the API's answers: a
// *reportdb.Error by its code, a query deadline as a timeout, any other
// error as an internal one. It is nil for nil and for a query cancelled
// because its client went away, which is answered nothing.
func ErrorOf(err error) *Error {
	if err == nil {
		return nil
	}
	var se *Error
	if errors.As(err, &se) {
		return se
	}
	var e *reportdb.Error
	if !errors.As(err, &e) {
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			e = &reportdb.Error{Code: reportdb.ETIMEOUT, Message: "The query was cancelled because it ran longer than the query timeout"}
		case errors.Is(err, context.Canceled):
			return nil
		default:
			e = &reportdb.Error{Code: reportdb.EINTERNAL, Message: internalMessage, Err: err}
		}
	}
	msg := e.Message
	if e.Code == reportdb.EINTERNAL {
		msg = internalMessage
	}
	return &Error{Status: Status(e.Code), Message: msg, Code: e.Code, RetryAfter: e.RetryAfter, Err: e}
}

// Status is the HTTP status of an error code.
func Status(code string) int {
	switch code {
	case reportdb.EINVALID:
		return 400
	case reportdb.ENOTFOUND, reportdb.ERETIRED:
		return 404
	case reportdb.ETOOLARGE:
		return 413
	case reportdb.EUNSUPPORTED:
		return 415
	case reportdb.ENOTACCEPT:
		return 406
	case reportdb.EFORBIDDEN:
		return 403
	case reportdb.ETIMEOUT, reportdb.EUNAVAILABLE:
		return 503
	case reportdb.ENOSPACE:
		return 507
	}
	return 500
}
