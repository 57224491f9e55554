package results

import (
	"errors"
	"fmt"
	"testing"
)

func TestCheckError(t *testing.T) {
	err := fmt.Errorf("stage tests: %w", CheckFailed("%d tests regressed", 3))
	if !errors.Is(err, ErrCheckFailed) {
		t.Errorf("%v is not ErrCheckFailed", err)
	}
	var ce *CheckError
	if !errors.As(err, &ce) || ce.Message != "3 tests regressed" {
		t.Errorf("errors.As = %+v, want the message alone", ce)
	}
	if got, want := err.Error(), "stage tests: 3 tests regressed: check failed"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if errors.Is(errors.New("mariadb did not start"), ErrCheckFailed) {
		t.Error("any error is a failed check")
	}
}
