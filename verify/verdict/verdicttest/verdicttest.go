// Package verdicttest checks a check's Judge against what a test wants.
package verdicttest

import (
	"errors"
	"testing"

	"github.com/patchproof/patchproof/verify/verdict"
)

// Judged fails t unless err is what a Judge should have returned: nil
// where want is "", else a failed check (a *verdict.CheckError whose
// Message is want) where failed, or a plain error saying want where not:
// a check that could not judge is never a failure, nor a failure an error.
func Judged(t testing.TB, err error, want string, failed bool) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatalf("Judge = %v, want nil", err)
	case want == "":
		return
	case err == nil:
		t.Fatalf("Judge = nil, want %q", want)
	}
	msg := err.Error()
	var ce *verdict.CheckError
	if errors.As(err, &ce) {
		msg = ce.Message
	}
	if isFailed := errors.Is(err, verdict.ErrCheckFailed); msg != want || isFailed != failed {
		t.Errorf("Judge = %q (check failed: %v), want %q (%v)", msg, isFailed, want, failed)
	}
}
