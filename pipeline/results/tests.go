package results

import (
	"github.com/patchproof/patchproof/builders"
	"github.com/patchproof/patchproof/verify/suites"
)

// TestsResult is the test-suite check of a target: every build's runs, and
// base vs head per variant.
type TestsResult struct {
	Runs        []*suites.RunResult  `json:"runs"`
	Comparisons []*VariantComparison `json:"comparisons"`
	Server      string               `json:"server"` // what the suites ran against
	Errors      []string             `json:"errors,omitempty"`
}

// VariantComparison is base vs head of one variant.
type VariantComparison struct {
	Variant    builders.Variant  `json:"variant"`
	Comparison suites.Comparison `json:"comparison"`
}

// Regressed reports whether any variant's comparison has a regression.
func (tr *TestsResult) Regressed() bool {
	for _, vc := range tr.Comparisons {
		if vc.Comparison.Regressed() {
			return true
		}
	}
	return false
}
