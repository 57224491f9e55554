package verdict

import (
	"errors"
	"testing"
)

// A check whose parts could not all run errs with every part's message on
// one line, never as a failed check; with none, it has no error.
func TestCouldNotRun(t *testing.T) {
	for _, tt := range []struct {
		name string
		msgs []string
		want string // "" for no error
	}{
		{"none", nil, ""},
		{"one", []string{"master: no such file"}, "master: no such file"},
		{"two", []string{"master: a", "PHP-8.4: b"}, "master: a; PHP-8.4: b"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := CouldNotRun(tt.msgs)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("= %v, want nil", err)
			case tt.want != "" && (err == nil || err.Error() != tt.want):
				t.Errorf("= %v, want %q", err, tt.want)
			case errors.Is(err, ErrCheckFailed):
				t.Errorf("= %v, a failed check", err)
			}
		})
	}
}

func TestJudged(t *testing.T) {
	for _, tt := range []struct {
		name           string
		errs, failures []string
		want           string // "" for nil
		failed         bool   // an ErrCheckFailed
	}{
		{"pass", nil, nil, "", false},
		{"failures", nil, []string{"master: a", "PHP-8.4: b"}, "unsafe: master: a; PHP-8.4: b: " + ErrCheckFailed.Error(), true},
		// What could not run wins: the failures of the others are not a verdict.
		{"error wins", []string{"PHP-8.4: not compared"}, []string{"master: a"}, "PHP-8.4: not compared", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := Judged(tt.errs, tt.failures, "unsafe: ")
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("= %v, want nil", err)
			case tt.want != "" && (err == nil || err.Error() != tt.want):
				t.Errorf("= %v, want %q", err, tt.want)
			case errors.Is(err, ErrCheckFailed) != tt.failed:
				t.Errorf("= %v: a failed check %v, want %v", err, errors.Is(err, ErrCheckFailed), tt.failed)
			}
		})
	}
}
