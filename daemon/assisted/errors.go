package assisted

import (
	"errors"
	"fmt"
)

// Kind classifies an error for the API, which maps each kind to one HTTP
// status. The message is for the client; causes stay in the log.
type Kind int

// The kinds the service returns.
const (
	KindInternal   Kind = iota // 500
	KindBadRequest             // 400
	KindNotFound               // 404
	KindConflict               // 409
)

// Error is an error the API can show a client.
type Error struct {
	Kind Kind
	Msg  string
	Err  error // cause, logged, not shown
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Msg + ": " + e.Err.Error()
	}
	return e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

func badRequest(format string, a ...any) error {
	return &Error{Kind: KindBadRequest, Msg: fmt.Sprintf(format, a...)}
}

func notFound(format string, a ...any) error {
	return &Error{Kind: KindNotFound, Msg: fmt.Sprintf(format, a...)}
}

func conflict(format string, a ...any) error {
	return &Error{Kind: KindConflict, Msg: fmt.Sprintf(format, a...)}
}

func internal(err error, format string, a ...any) error {
	return &Error{Kind: KindInternal, Msg: fmt.Sprintf(format, a...), Err: err}
}

// KindOf returns the kind of err; errors that are not *Error are internal.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindInternal
}

// Message is what a client may see of err.
func Message(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Msg
	}
	return "internal error"
}
