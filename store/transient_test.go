package store

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"reportdb"
)

func TestTransient(t *testing.T) {
	cause := errors.New("ERROR: deadlock detected (SQLSTATE 40P01)")
	err := Transient(cause, "deadlock detected")
	var re *reportdb.Error
	if !errors.As(err, &re) || re.Code != reportdb.EUNAVAILABLE || re.RetryAfter != TransientRetryAfter {
		t.Fatalf("Transient: %#v, want a 503 with Retry-After", err)
	}
	if !strings.Contains(re.Message, "deadlock detected") {
		t.Errorf("message %q does not say why", re.Message)
	}
	wrapped := fmt.Errorf("batch: %w", err)
	if !IsTransient(err) || !IsTransient(wrapped) || !errors.Is(wrapped, cause) {
		t.Error("the transient mark or the cause is lost through wrapping")
	}
	if IsTransient(cause) || IsTransient(nil) || IsTransient(&reportdb.Error{Code: reportdb.EUNAVAILABLE}) {
		t.Error("an error not marked transient is")
	}
}
