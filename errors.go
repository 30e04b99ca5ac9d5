package reportdb

import (
	"errors"
	"fmt"
)

// Error codes. Exactly one function (service.ErrorOf) maps them to HTTP
// statuses and PuppetDB's error bodies; httpapi writes what it maps.
const (
	EINVALID     = "invalid"        // 400, text/plain message
	ENOTFOUND    = "not_found"      // 404, JSON {"error": message}
	ERETIRED     = "retired"        // 404, text/plain (a retired API version)
	ETOOLARGE    = "too_large"      // 413
	EUNSUPPORTED = "unsupported"    // 415 (content type / encoding)
	ENOTACCEPT   = "not_acceptable" // 406
	EFORBIDDEN   = "forbidden"      // 403
	ETIMEOUT     = "timeout"        // 503: a query ran past its time limit
	EUNAVAILABLE = "unavailable"    // 503
	ENOSPACE     = "no_space"       // 507: the disk is full
	EINTERNAL    = "internal"       // 500; message is not shown to users
)

// Error is an error with a machine code and a message that is safe to show
// to the client (except for EINTERNAL, whose message is logged only).
type Error struct {
	Code    string
	Message string
	// RetryAfter, when > 0, is sent as a Retry-After header (seconds).
	RetryAfter int
	Err        error // wrapped cause, for logs
}

func (e *Error) Error() string {
	if e.Err != nil && e.Code == EINTERNAL {
		return fmt.Sprintf("%s: %v", e.Message, e.Err)
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf builds an *Error with a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalid builds a 400 error with a literal message.
func Invalid(msg string) *Error { return &Error{Code: EINVALID, Message: msg} }

// ErrorCode returns the code of err, EINTERNAL for foreign errors and "" for nil.
func ErrorCode(err error) string {
	var e *Error
	if err == nil {
		return ""
	}
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the user-visible message of err.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "An unexpected error occurred while processing the request"
}
