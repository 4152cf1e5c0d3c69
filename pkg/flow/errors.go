// Package flow is the typed flow control of one sync, shared by the
// controllers (the shell) and the component packages, which import nothing
// of the shell: a wait (RequeueError), a failure retrying cannot fix
// (IgnoreError), and the per-sync notes a sync carries in its context — what
// keeps pods down (Blockers) and whether members were observed recently.
// It imports nothing of ours.
package flow

import (
	"errors"
	"fmt"
	"time"
)

// RequeueError says a sync is waiting for something outside the operator (a
// pod becoming Ready, PD reporting a store Tombstone). It is not a failure:
// the worker logs it and retries the key after After (controller.DefaultWaitDelay when
// After is zero), without exponential backoff.
type RequeueError struct {
	// Reason says what the sync waits for, in words an operator user reads.
	Reason string
	// After is the delay before the next attempt; zero means rate-limited.
	After time.Duration
}

func (e *RequeueError) Error() string { return e.Reason }

// Requeue returns a RequeueError with a formatted reason and the default delay.
func Requeue(format string, args ...any) error {
	return &RequeueError{Reason: fmt.Sprintf(format, args...)}
}

// RequeueAfter returns a RequeueError with a formatted reason retried after d.
func RequeueAfter(d time.Duration, format string, args ...any) error {
	return &RequeueError{Reason: fmt.Sprintf(format, args...), After: d}
}

// AsRequeue reports whether err is (or wraps) a RequeueError and returns it.
func AsRequeue(err error) (*RequeueError, bool) {
	var re *RequeueError
	ok := errors.As(err, &re)
	return re, ok
}

// IgnoreError marks a failure that retrying cannot fix (an invalid spec): the
// worker logs it and forgets the key until the object changes again.
type IgnoreError struct {
	// Err is the cause.
	Err error
}

func (e *IgnoreError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *IgnoreError) Unwrap() error { return e.Err }

// Ignore wraps err so the worker does not retry it.
func Ignore(err error) error { return &IgnoreError{Err: err} }

// IsIgnore reports whether err is (or wraps) an IgnoreError.
func IsIgnore(err error) bool {
	var ie *IgnoreError
	return errors.As(err, &ie)
}
