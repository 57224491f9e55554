package pipeline

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/pipeline/results"
)

// A need that names a builder is that builder's alone; the others are
// every run's. An unset builder is this host's, as setDefaults makes it.
func TestPlacedNeeds(t *testing.T) {
	needs := []Need{
		{Tool: "everywhere"},
		{Tool: "host-only", Builder: builders.KindHost},
		{Tool: "docker-only", Builder: builders.KindDocker},
	}
	for _, tt := range []struct {
		builder builders.ExecutorKind
		want    []string
	}{
		{"", []string{"everywhere", "host-only"}},
		{builders.KindHost, []string{"everywhere", "host-only"}},
		{builders.KindDocker, []string{"everywhere", "docker-only"}},
	} {
		t.Run(string(tt.builder), func(t *testing.T) {
			cfg := &Config{Builder: tt.builder}
			var got []string
			for _, n := range cfg.placed(append([]Need(nil), needs...)...) {
				got = append(got, n.Tool)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("needs (-want +got):\n%s", d)
			}
		})
	}
}

// A builder the run cannot place is bad input, found before anything runs.
func TestUnknownBuilder(t *testing.T) {
	cfg := Config{Builder: "vm", Out: t.TempDir()}
	cfg.setDefaults()
	var ie *results.InputError
	if err := cfg.validate(); !errors.As(err, &ie) || ie.Input != "--builder vm" {
		t.Errorf("validate: %v, want an input error naming --builder vm", err)
	}
}
