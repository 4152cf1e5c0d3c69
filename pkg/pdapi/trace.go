package pdapi

import (
	"errors"
	"fmt"
	"io"

	perrors "github.com/pingcap/errors"
)

// Trace returns err with the caller's stack recorded by github.com/pingcap/errors, for the HTTP client
// boundaries of pdapi, tidbapi, tikvapi and tiflashapi: err.Error() is unchanged, and
// `fmt.Sprintf("%+v", err)` (or perrors.ErrorStack(err)) prints the message followed by the stack.
//
// It exists because pingcap/errors v0.11.4's own wrappers (Trace, Annotate, Annotatef, WithStack) implement
// only `Cause() error`, not `Unwrap() error`: errors.Is and errors.As stop at them, so a caller testing
// errors.Is(err, ErrTiKVNotBootstrapped) would fail. The wrapper returned here unwraps to err, so both
// errors.Is/As and perrors.Cause see through it. An err that already carries a Trace stack keeps that
// (deepest) stack instead of recording a second one; nil stays nil.
func Trace(err error) error {
	if err == nil {
		return nil
	}
	if traced, ok := err.(*tracedError); ok { //nolint:errorlint // err itself, not its chain, is already traced
		return traced
	}
	var inner *tracedError
	if errors.As(err, &inner) {
		return &tracedError{err: err, stack: inner.stack}
	}
	withStack, ok := perrors.WithStack(err).(perrors.StackTracer)
	if !ok { // cannot happen with v0.11.4; keep err rather than lose it
		return err
	}
	return &tracedError{err: err, stack: withStack.StackTrace()}
}

// tracedError is err plus the stack where Trace was called.
type tracedError struct {
	err   error
	stack perrors.StackTrace
}

// Error is the wrapped error's message, without the stack.
func (e *tracedError) Error() string { return e.err.Error() }

// Unwrap returns the wrapped error, for errors.Is and errors.As.
func (e *tracedError) Unwrap() error { return e.err }

// Cause returns the wrapped error, for perrors.Cause.
func (e *tracedError) Cause() error { return e.err }

// StackTrace returns the recorded stack (perrors.StackTracer).
func (e *tracedError) StackTrace() perrors.StackTrace { return e.stack }

// HasStack tells pingcap/errors that this chain carries a stack, so its wrappers record no second one.
func (e *tracedError) HasStack() bool { return true }

// Format prints the message for %s and %v, the quoted message for %q, and the message followed by the
// stack, one frame per line, for %+v.
func (e *tracedError) Format(s fmt.State, verb rune) {
	switch {
	case verb == 'v' && s.Flag('+'):
		_, _ = io.WriteString(s, e.Error())
		e.stack.Format(s, verb)
	case verb == 'q':
		_, _ = fmt.Fprintf(s, "%q", e.Error())
	default:
		_, _ = io.WriteString(s, e.Error())
	}
}
