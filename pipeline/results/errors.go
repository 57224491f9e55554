package results

import "github.com/patchproof/patchproof/verify/verdict"

// ErrCheckFailed, CheckError and CheckFailed are verify/verdict's: every
// check's Judge returns them, below this package.
var ErrCheckFailed = verdict.ErrCheckFailed

// CheckError is a check that did not pass (verdict.CheckError).
type CheckError = verdict.CheckError

// CheckFailed returns a *CheckError with the formatted message.
func CheckFailed(format string, a ...any) error { return verdict.CheckFailed(format, a...) }

// InputError is bad input named by the user: a ref, a PR, a path, a remote,
// an output directory. It maps to exit status 2.
type InputError struct {
	Input string // what the user gave, as given
	Err   error
}

func (e *InputError) Error() string { return e.Input + ": " + e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }
