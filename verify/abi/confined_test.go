package abi

import (
	"debug/dwarf"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/patchproof/patchproof/internal/confine"
)

// TestMain runs CompareConfined's child, where this binary is one.
func TestMain(m *testing.M) {
	confine.Main(Jobs()...)
	os.Exit(m.Run())
}

// CompareConfined says that head's DWARF beyond the reader's bounds, or
// that crashes the reader again on head's build alone, is head's (a
// failure of the target); base's is a comparison that could not be made.
// The crash: a chain of 5000 structs, each pointing to the next, which
// debug/dwarf reads by as deep a recursion, under a stack of 64 KiB.
func TestCompareConfinedABI(t *testing.T) {
	good := probed(t, cyclic, cyclicCode, nil)
	cycle := probed(t, cyclic, cyclicCode, retype(t, dwarf.TagTypedef, "STATS", false, dwarf.TagTypedef, "STATS"))
	linked, linkCode := links(5000)
	deep := probed(t, linked, linkCode, nil)
	small := confine.Limits{Stack: 64 << 10}
	tests := []struct {
		name       string
		base, head Input
		lim        confine.Limits
		rejected   bool
		want       string
	}{
		{"head's typedef of itself", good, cycle, confine.Limits{}, true, "a cycle of 1 types"},
		{"base's typedef of itself", cycle, good, confine.Limits{}, false, "a cycle of 1 types"},
		{"head's crash", good, deep, small, true, "fatal error: stack overflow"},
		{"base's crash", deep, good, small, false, "fatal error: stack overflow"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := CompareConfined(t.Context(), "nts", tt.base, tt.head, tt.lim)
			if err == nil || errors.Is(err, ErrHeadRejected) != tt.rejected || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("CompareConfined = %v, want head's rejection: %v, saying %q", err, tt.rejected, tt.want)
			}
		})
	}
	v, err := CompareConfined(t.Context(), "nts", good, good, small)
	if err != nil || len(v.Changes) != 0 || v.Types == 0 {
		t.Errorf("CompareConfined of one build = %+v, %v; want its types, unchanged", v, err)
	}
}
