package results

import (
	"testing"

	"github.com/patchproof/patchproof/verify/verdict"
)

// TestEveryCheckHasTheShape walks the report's one list of a target's
// checks: each but the builds (the report's own section) is a
// verdict.Check, whose every method answers on a target the check did not
// run on. A check added to Checks without a method of the shape fails
// here, rather than vanish from the report.
func TestEveryCheckHasTheShape(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range (&TargetResult{}).Checks() {
		if seen[c.Stage] {
			t.Errorf("stage %s is in Checks twice", c.Stage)
		}
		seen[c.Stage] = true
		if c.Stage == StageBuild {
			continue
		}
		ch, ok := c.Result.(verdict.Check)
		if !ok {
			t.Errorf("the %s check's result, %T, is not a verdict.Check", c.Stage, c.Result)
			continue
		}
		t.Run(c.Stage, func(t *testing.T) {
			if ch.Label() == "" {
				t.Error("no label")
			}
			if q := ch.Question(); q < 0 || q > 5 {
				t.Errorf("question %d, want one of the five, or 0 for none", q)
			}
			// The rest only have to answer, on a check that did not run.
			_ = ch.Cell()
			_, _, _, _ = ch.Answer(), ch.Caveats(), ch.Moves(), ch.Artifacts()
			for _, s := range ch.Sections() {
				_ = s.Label()
			}
		})
	}
	for _, stage := range []string{StageCodeDiff, StageABI, StageModules, StageTests, StageRace, StageBench} {
		if !seen[stage] {
			t.Errorf("the %s check is not in Checks", stage)
		}
	}
}
