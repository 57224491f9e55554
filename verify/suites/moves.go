package suites

import (
	"fmt"

	"github.com/patchproof/patchproof/internal/markdown"
	"github.com/patchproof/patchproof/verify/verdict"
)

// Moves are the tests whose outcome head changed, variant by variant:
// each regression (which fails the run), then each fix, then each test
// the re-runs showed flaky. Unchanged failures and skips are the
// section's.
func (r *Result) Moves() []verdict.Move {
	if r == nil {
		return nil
	}
	var ms []verdict.Move
	for _, vc := range r.Comparisons {
		c := vc.Comparison
		for _, group := range []struct {
			changes []Change
			how     string
		}{
			{c.Regressions, verdict.Failed.Icon() + " regressed"},
			{c.Fixes, "fixed"},
			{c.Flakes, "flaky: its re-runs disagree"},
		} {
			for _, ch := range group.changes {
				ms = append(ms, verdict.Move{
					What: fmt.Sprintf("%s (%s)", markdown.Code(ch.Test), markdown.Text(vc.Variant)),
					How:  fmt.Sprintf("%s → %s, %s", outcomeWord(ch.Base), outcomeWord(ch.Head), group.how),
				})
			}
		}
	}
	return verdict.Capped(ms)
}

// outcomeWord is an outcome as the table shows it: "none" where the test
// did not run on that side.
func outcomeWord(o Outcome) string {
	if o == "" {
		return "none"
	}
	return string(o)
}
