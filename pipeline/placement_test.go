package pipeline

import (
	"errors"
	"testing"

	"github.com/patchproof/patchproof/pipeline/results"
)

// A builder the run cannot place is bad input, found before anything runs.
func TestUnknownBuilder(t *testing.T) {
	cfg := Config{Builder: "vm", Out: t.TempDir()}
	cfg.setDefaults()
	var ie *results.InputError
	if err := cfg.validate(); !errors.As(err, &ie) || ie.Input != "--builder vm" {
		t.Errorf("validate: %v, want an input error naming --builder vm", err)
	}
}
