package verdict

import (
	"io"
	"testing"
)

type oneSection struct{}

func (*oneSection) Label() string                { return "one" }
func (*oneSection) Cell() string                 { return "cell" }
func (*oneSection) WriteSection(io.Writer) error { return nil }

func TestOneSection(t *testing.T) {
	// A check that did not run has a nil result, and no section: a typed
	// nil in the list would be a section whose methods see nil.
	if got := OneSection((*oneSection)(nil)); got != nil {
		t.Errorf("nil result: %v sections, want none", len(got))
	}
	r := &oneSection{}
	got := OneSection(r)
	if len(got) != 1 || got[0] != Section(r) {
		t.Errorf("= %v, want the result itself", got)
	}
}
