package config

import (
	"errors"
	"fmt"
	"strings"
)

// ErrConfig marks an error in the user's configuration or flags (exit code 2).
var ErrConfig = errors.New("configuration error")

// Error is one problem with one setting. It wraps ErrConfig.
type Error struct {
	Key    string
	Origin Origin // zero (default) when the problem is that a key is missing
	Msg    string
}

// Error formats "key: message (from origin)".
func (e *Error) Error() string {
	if e.Origin.Kind == OriginDefault {
		return e.Key + ": " + e.Msg
	}
	return fmt.Sprintf("%s: %s (from %s)", e.Key, e.Msg, e.Origin)
}

// Unwrap returns ErrConfig.
func (e *Error) Unwrap() error { return ErrConfig }

// Errors is every problem found in one pass. It wraps each of them, so
// errors.Is(err, ErrConfig) holds.
type Errors []error

// Error lists the problems, one per line.
func (e Errors) Error() string {
	if len(e) == 1 {
		return e[0].Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d configuration problems:", len(e))
	for _, err := range e {
		b.WriteString("\n  ")
		b.WriteString(err.Error())
	}
	return b.String()
}

// Unwrap returns the problems.
func (e Errors) Unwrap() []error { return e }

// Join returns the problems of errs as one Errors (nil when there are
// none): an Errors among them is flattened, so every problem is listed
// once, in order.
func Join(errs ...error) error {
	var all Errors
	for _, err := range errs {
		if list, ok := err.(Errors); ok {
			all = append(all, list...)
		} else if err != nil {
			all = append(all, err)
		}
	}
	if len(all) == 0 {
		return nil
	}
	return all
}

// errMissing is the message for a required key that is not set.
const errMissing = "required key is not set"

// problems is errs as Errors, or nil when there are none.
func problems(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	return Errors(errs)
}
