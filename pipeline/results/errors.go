package results

import (
	"errors"
	"fmt"
)

// ErrCheckFailed is what every failed check's error is (errors.Is): the
// pipeline ran but a check did not pass (a test regression, changed NTS
// machine code where a no-op was expected, a benchmark regression). It maps
// to exit status 1; every other error means patchproof could not run (exit
// status 2).
var ErrCheckFailed = errors.New("check failed")

// CheckError is a check that did not pass. Message says what failed, in
// one line; the stage's Message is taken from it.
type CheckError struct {
	Message string
}

// CheckFailed returns a *CheckError with the formatted message.
func CheckFailed(format string, a ...any) error {
	return &CheckError{Message: fmt.Sprintf(format, a...)}
}

func (e *CheckError) Error() string { return e.Message + ": " + ErrCheckFailed.Error() }

// Is makes a *CheckError an ErrCheckFailed.
func (e *CheckError) Is(target error) bool { return target == ErrCheckFailed }

// InputError is bad input named by the user: a ref, a PR, a path, a remote,
// an output directory. It maps to exit status 2.
type InputError struct {
	Input string // what the user gave, as given
	Err   error
}

func (e *InputError) Error() string { return e.Input + ": " + e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }
