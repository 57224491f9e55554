package pipeline

import "errors"

// ErrCheckFailed is returned (wrapped) when the pipeline ran but a check did
// not pass: a test regression, changed NTS machine code where a no-op was
// expected, a benchmark regression. It maps to exit status 1; every other
// error means patchproof could not run (exit status 2).
var ErrCheckFailed = errors.New("check failed")

// InputError is bad input named by the user: a ref, a PR, a path, a remote,
// an output directory. It maps to exit status 2.
type InputError struct {
	Input string // what the user gave, as given
	Err   error
}

func (e *InputError) Error() string { return e.Input + ": " + e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }
